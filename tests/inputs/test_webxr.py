"""The WebXR source without a browser: its certificate, the page over HTTPS, the WSS socket both ways (tracking in,
status out), the first page keeping tracking, the allow-list. Loopback only; the browser itself is in
test_webxr_browser; Origin and pairing in test_one_operator."""

import datetime
import json
import os
import socket
import ssl
import time
import urllib.request

import pytest
from cryptography import x509
from sockets import connect

from teledex_lerobot.inputs import InputReceiver, encode_xr_state, parse_xr_state
from teledex_lerobot.inputs.webxr import WebXRSource, certificate_fingerprint, ensure_certificate

POSE = [0.35, -0.2, 1.0, 0.0, 0.0, 0.0, 1.0]


def test_certificate_is_made_once_and_remade_for_a_new_address(tmp_path):
    cert_path, key_path = ensure_certificate(tmp_path, ["127.0.0.1"])
    first = cert_path.read_bytes()
    certificate = x509.load_pem_x509_certificate(first)
    names = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert [str(a) for a in names.get_values_for_type(x509.IPAddress)] == ["127.0.0.1"]
    assert certificate.not_valid_after_utc - certificate.not_valid_before_utc <= datetime.timedelta(days=398)
    assert os.stat(key_path).st_mode & 0o777 == 0o600
    assert ensure_certificate(tmp_path, ["127.0.0.1"])[0].read_bytes() == first  # reused on the next run
    remade = ensure_certificate(tmp_path, ["127.0.0.1", "192.168.1.10"])[0].read_bytes()
    assert remade != first and len(certificate_fingerprint(cert_path)) == 95


@pytest.fixture
def server(tmp_path):
    source = WebXRSource("127.0.0.1", 0, certificate_dir=tmp_path)
    receiver = InputReceiver(parse_xr_state)
    source.start(receiver)
    trust = ssl.create_default_context(cafile=source.cert_path)  # verifies the name 127.0.0.1 too
    yield source, receiver, trust
    source.stop()


def wait_until(condition, timeout_s=5.0):
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_page_is_served_over_https(server):
    source, _, trust = server
    with urllib.request.urlopen(source.url, context=trust, timeout=5) as response:
        assert response.headers["Content-Type"] == "text/html; charset=utf-8"
        assert b'<script src="webxr.js">' in response.read()
    with urllib.request.urlopen(source.url + "webxr.js", context=trust, timeout=5) as response:
        assert "javascript" in response.headers["Content-Type"] and b"getJointPose" in response.read()
    with pytest.raises(urllib.error.HTTPError, match="404"):
        urllib.request.urlopen(source.url + "secret.pem", context=trust, timeout=5)


def test_socket_carries_tracking_in_and_status_out(server):
    source, receiver, trust = server
    url = source.url.replace("https", "wss") + "ws"
    with connect(url, ssl=trust) as first, connect(url, ssl=trust) as second:
        assert json.loads(first.recv(timeout=5))["tracking"] == "none"
        json.loads(second.recv(timeout=5))
        first.send(encode_xr_state(timestamp_ns=10**18, controllers={"right": {"pose": POSE, "trigger": 0.5}}))
        wait_until(lambda: receiver.packets == 1)
        assert receiver.latest().analog["right_trigger"] == 0.5 and receiver.latest().sender_time_ns == 10**18
        assert json.loads(first.recv(timeout=5))["tracking"] == "this page"
        source.publish_status({"state": "Teleoperation", "stale": False, "faults": {"arm": "feedback timeout"}})
        status = json.loads(first.recv(timeout=5))
        assert status == {"type": "status", "state": "Teleoperation", "stale": False,
                          "faults": {"arm": "feedback timeout"}, "tracking": "this page", "pages": 2}

        second.send(encode_xr_state(controllers={"right": {"pose": POSE, "trigger": 0.9}}))  # refused: not its turn
        assert json.loads(second.recv(timeout=5))["tracking"] == "another page"
        first.send(encode_xr_state(controllers={"right": {"pose": POSE, "trigger": 0.1}}))
        wait_until(lambda: receiver.packets == 2)
        assert receiver.latest().analog["right_trigger"] == 0.1 and source.refused == 1


def test_allow_list_refuses_pages_and_sockets_from_others(tmp_path):
    source = WebXRSource("127.0.0.1", 0, allow=["127.0.0.2"], certificate_dir=tmp_path)
    source.start(InputReceiver(parse_xr_state))
    try:
        for sender, status in (("127.0.0.3", b"403"), ("127.0.0.2", b"200")):
            raw = socket.create_connection(source.address, timeout=5, source_address=(sender, 0))
            with ssl._create_unverified_context().wrap_socket(raw) as tls:
                tls.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                assert tls.recv(64).split()[1] == status
        assert source.senders.dropped == 1
    finally:
        source.stop()


def test_the_robot_view_streams_to_every_page_and_a_stalled_page_gets_no_backlog(server):
    """publish_view: the drawing as a scene message, each camera frame as TDXF + header + JPEG (decodes to the
    frame); a page that stops reading skips views instead of queueing them."""
    import struct

    import cv2
    import numpy as np

    from teledex_lerobot.inputs.webxr import FRAME_MAGIC

    source, _, trust = server
    url = source.url.replace("https", "wss") + "ws"
    image = np.zeros((480, 640, 3), dtype=np.uint8)
    image[:, :320, 0] = 255  # left half red
    with connect(url, ssl=trust) as page:
        json.loads(page.recv(timeout=5))  # the first status
        calibration = {"camera": "top", "intrinsics": [500.0, 500.0, 319.5, 239.5], "mirror": False}
        source.publish_view(lambda: {"type": "scene", "measured": [[0, 0, 0, 0, 0, 0.1]]},
                            {"top": (image, calibration)}, time.monotonic_ns())
        scene = json.loads(page.recv(timeout=5))
        assert scene["type"] == "scene" and scene["measured"] == [[0, 0, 0, 0, 0, 0.1]]
        assert abs(scene["published_ms"] - time.time() * 1000) < 2000  # the wall clock the page shares
        message = page.recv(timeout=5)
        assert message[:4] == FRAME_MAGIC
        length = struct.unpack("<I", message[4:8])[0]
        header = json.loads(message[8:8 + length])
        assert header["camera"] == "top" and (header["width"], header["height"]) == (640, 480)
        assert header["intrinsics"] == [500.0, 500.0, 319.5, 239.5]  # the frame carries its calibration
        decoded = cv2.imdecode(np.frombuffer(message[8 + length:], np.uint8), cv2.IMREAD_COLOR)[..., ::-1]
        assert decoded.shape == image.shape and np.abs(decoded.astype(int) - image).mean() < 3

        # the page stops reading: its socket fills, and views are skipped, not queued without end
        noise = np.random.default_rng(0).integers(0, 255, (480, 640, 3), dtype=np.uint8)  # ~250 KB as JPEG
        for _ in range(200):
            source.publish_view(lambda: {"type": "scene"}, {"top": (noise, {})}, time.monotonic_ns())
            time.sleep(0.005)
        wait_until(lambda: source.views_skipped > 0, 20)
        assert source.views_sent < 200


def test_each_page_gets_the_robots_body_once_before_its_first_scene_and_again_when_it_reconnects(server):
    source, _, trust = server
    url = source.url.replace("https", "wss") + "ws"
    made = []

    def body():
        made.append(1)
        return {"type": "body", "meshes": [{"role": "arm", "link": "base", "vertices": "", "triangles": ""}]}

    def publish():
        source.publish_view(lambda: {"type": "scene"}, {}, time.monotonic_ns(), body)

    for _ in range(2):  # a page, then the same page reconnected
        with connect(url, ssl=trust) as page:
            json.loads(page.recv(timeout=5))  # the first status
            publish()
            assert json.loads(page.recv(timeout=5))["type"] == "body"
            assert json.loads(page.recv(timeout=5))["type"] == "scene"
            publish()
            assert json.loads(page.recv(timeout=5))["type"] == "scene"  # the body once
        wait_until(lambda: source.clients == 0)
    assert len(made) == 2  # made only for a page that lacks it
