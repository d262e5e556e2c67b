"""One operator, the one you paired: the XRoboToolkit link is the first app's to identify, kept for that app (serial
and address) through its drops until it is handed over at the console (a second app cannot press B for the
operator, and its attempts are reported); states the app queued during a drop are not stamped as fresh after its
reconnect; a UDP source locks to its first sender; the WebXR socket checks Origin,
asks off loopback for the one-time pairing token, and lets one page send tracking (garbage takes nothing over).
Loopback only; the clocks that decide (silence, idle senders) are injected."""

import json
import socket
import time

import numpy as np
import pytest
import xr_app
from sockets import connect
from test_teleop_inputs import PRESET, free_port, free_tcp_port
from test_xrobotoolkit import HEADSET_EPOCH_NS, state, wait_until
from websockets.exceptions import InvalidStatus

from teledex_lerobot.clock import now_ns
from teledex_lerobot.control.state_machine import TeleopState
from teledex_lerobot.inputs import InputReceiver, encode_xr_state, parse_xr_state
from teledex_lerobot.inputs.sources import UdpSource
from teledex_lerobot.inputs.webxr import WebXRSource, qr_code
from teledex_lerobot.inputs.xrobotoolkit import IDENTIFY_S, OWNER_SILENCE_S

MS = 1_000_000
POSE = [0.35, -0.2, 1.0, 0.0, 0.0, 0.0, 1.0]


def refused(sock: socket.socket) -> bool:
    """Whether the server closed this connection (unread: a reset is the same refusal)."""
    sock.settimeout(5)
    try:
        return sock.recv(10) == b""
    except ConnectionResetError:
        return True


# ---------------------------------------------------------------- XRoboToolkit


def app_sending(address, *state_args, serial: str = xr_app.SERIAL, source_host: str = "",
                **state_fields) -> socket.socket:
    """A headset app (`serial` at `source_host`) connected to the source at `address` that has said hello and sent
    one tracking state."""
    app = xr_app.connect(address, source_host=source_host)
    app.sendall(xr_app.hello_frames(serial) + xr_app.tracking_frame(state(*state_args, **state_fields)))
    return app


def injected_clock(source) -> dict:
    """The source's clock, set by the test: {"ns": now}."""
    clock = {"ns": now_ns()}
    source.clock = lambda: clock["ns"]
    return clock


def test_a_second_app_retrying_during_the_operators_drop_never_takes_the_link(xrobotoolkit, caplog):
    """The measured case: the operator's app dropped for 0.3 s, a second app retrying every 50 ms took the link and
    pressed B. Now the link stays reserved for the operator's app (serial and address): every retry is refused,
    counted and reported as a takeover attempt, and the operator's app resumes when it reconnects."""
    source, receiver = xrobotoolkit
    clock = injected_clock(source)
    triggers = []
    receiver.on_frame = lambda frame: triggers.append(frame.analog["right_trigger"])
    operator = app_sending(source.address, 0)
    wait_until(lambda: receiver.packets == 1)
    operator.close()  # the Wi-Fi blip
    wait_until(lambda: source._connection is None)
    for k in range(6):  # the second app, every 50 ms of the 0.3 s drop, pressing on
        clock["ns"] += 50 * MS
        intruder = app_sending(source.address, k, trigger=1.0, serial=xr_app.OTHER_SERIAL, source_host="127.0.0.2")
        assert refused(intruder)
        intruder.close()
    clock["ns"] += 10 * MS  # the operator's serial number, read off the network, sent from another address
    spoofer = app_sending(source.address, 6, trigger=1.0, source_host="127.0.0.3")
    assert refused(spoofer)
    spoofer.close()
    operator = app_sending(source.address, 7)  # the operator's app reconnects
    wait_until(lambda: receiver.packets == 2)
    assert triggers == [0.0, 0.0] and source.connections == 2
    assert receiver.sender_id == 1  # resumed: the same sender (clock, tracking space), not a new one
    assert source.refused == source.takeover_attempts == 7
    last = source.last_takeover_attempt
    assert last.address.startswith("127.0.0.3:") and last.serial == xr_app.SERIAL and last.at_ns == clock["ns"]
    assert source.takeover_status() == {"takeover_attempts": 7, "last_takeover": {
        "address": last.address, "serial": xr_app.SERIAL, "at_ns": clock["ns"]}}
    assert "takeover_attempts=7" in source.diagnostics()
    assert f"last_takeover={last.address}({xr_app.SERIAL})" in source.diagnostics()
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING" and "refused" in r.getMessage()]
    assert len(warnings) == 2  # once per address
    assert "127.0.0.2" in warnings[0] and xr_app.OTHER_SERIAL in warnings[0] and "127.0.0.3" in warnings[1]
    operator.close()


def test_the_operators_app_takes_its_link_back_before_its_old_socket_is_known_dead(xrobotoolkit):
    """After a Wi-Fi drop the old socket stays open here until the keepalive gives up (5 s); the app reconnects
    after 2 s and takes the link back at once, and the old socket is closed."""
    source, receiver = xrobotoolkit
    half_open = app_sending(source.address, 0)
    wait_until(lambda: receiver.packets == 1)
    again = app_sending(source.address, 1)
    wait_until(lambda: receiver.packets == 2)
    assert refused(half_open) and source.connections == 2 and source.refused == 0 and receiver.sender_id == 1
    again.close()
    half_open.close()


def test_a_connection_that_does_not_identify_first_takes_nothing(xrobotoolkit):
    """The app's first frame is its connect frame (0x19 "<SN>|-1"): a connection that sends tracking first, or
    nothing within IDENTIFY_S, is refused, whether the link is free or an operator holds it."""
    source, receiver = xrobotoolkit
    clock = injected_clock(source)

    def refuse_unidentified() -> None:
        eager = xr_app.connect(source.address)
        eager.sendall(xr_app.tracking_frame(state(9, trigger=1.0)) + xr_app.hello_frames(xr_app.OTHER_SERIAL))
        assert refused(eager)
        silent = xr_app.connect(source.address)
        port = silent.getsockname()[1]
        wait_until(lambda: any(c.port == port for c in list(source._callers.values())))  # accepted, waiting
        clock["ns"] += int(IDENTIFY_S * 1e9) + 1
        assert refused(silent)
        eager.close()
        silent.close()

    refuse_unidentified()
    assert receiver.packets == source.connections == source.takeover_attempts == 0 and source.refused == 2
    operator = app_sending(source.address, 0)
    wait_until(lambda: receiver.packets == 1)
    refuse_unidentified()
    operator.sendall(xr_app.tracking_frame(state(1)))
    wait_until(lambda: receiver.packets == 2)
    assert receiver.latest().analog["right_trigger"] == 0.0 and source.connections == 1
    assert source.refused == 4 and source.takeover_attempts == 2 and source.last_takeover_attempt.serial == ""


def test_only_the_console_hand_over_frees_the_link_for_another_app(xrobotoolkit):
    source, receiver = xrobotoolkit
    first = app_sending(source.address, 0)
    wait_until(lambda: receiver.packets == 1)
    second = app_sending(source.address, 1, trigger=1.0, serial=xr_app.OTHER_SERIAL)
    assert refused(second) and source.refused == 1 and source.connections == 1
    first.close()  # the operator's app is gone (a headset put down): the link stays reserved for it
    wait_until(lambda: source._connection is None)
    third = app_sending(source.address, 2, trigger=1.0, serial=xr_app.OTHER_SERIAL)
    assert refused(third) and source.takeover_attempts == 2
    source.hand_over()  # the operator at the console
    wait_until(lambda: source._reserved is None)
    fourth = app_sending(source.address, 3, trigger=1.0, serial=xr_app.OTHER_SERIAL)
    wait_until(lambda: receiver.packets == 2)
    assert receiver.latest().analog["right_trigger"] == 1.0 and source.device_serial == xr_app.OTHER_SERIAL
    assert source.connections == 2 and receiver.sender_id == 2  # a new operator: a new sender, re-anchored
    fifth = app_sending(source.address, 4)  # the first operator's app, back: the link is the new operator's now
    assert refused(fifth) and source.takeover_attempts == 3
    source.hand_over()  # while the new operator holds the link: its connection goes too
    assert refused(fourth)
    sixth = app_sending(source.address, 5)
    wait_until(lambda: receiver.packets == 3)
    assert source.device_serial == xr_app.SERIAL and source.connections == 3 and receiver.sender_id == 3
    for app in (first, second, third, fourth, fifth, sixth):
        app.close()


def test_an_app_silent_longer_than_its_heartbeat_loses_its_connection_not_its_link(xrobotoolkit):
    source, receiver = xrobotoolkit
    clock = injected_clock(source)
    quiet = xr_app.connect(source.address)  # identifies, then nothing (a half-open socket after a drop)
    quiet.sendall(xr_app.hello_frames())
    wait_until(lambda: source.app_version == xr_app.APP_VERSION)  # all it will send, read
    clock["ns"] += int(OWNER_SILENCE_S * 1e9) + 1
    assert refused(quiet)
    other = app_sending(source.address, 0, serial=xr_app.OTHER_SERIAL)
    assert refused(other)
    again = app_sending(source.address, 1)  # the app reconnects
    wait_until(lambda: receiver.packets == 1)
    assert source.refused == 1 and source.connections == 2
    for app in (quiet, other, again):
        app.close()


def test_a_second_connection_pressing_b_does_not_stop_the_operator():
    """The issue's case: anyone on the network connecting to 63901 and pressing B switched the state to
    Emergency."""
    from lerobot_teleoperator_teledex import TeledexXR, TeledexXRConfig

    teleop = TeledexXR(TeledexXRConfig(preset=PRESET, source="xrobotoolkit", port=free_tcp_port(), view_port=0,
                                       keyboard=False))
    teleop.connect()
    try:
        address = teleop._source.address
        operator = xr_app.connect(address)
        operator.sendall(xr_app.hello_frames())
        for k, buttons in enumerate([{"primary": True}, {}, {"secondary": True}, {}]):  # X (ZeroPos), Y (Teleop.)
            operator.sendall(xr_app.tracking_frame(state(k, left_on=True, **buttons)))
            wait_until(lambda k=k: teleop.receiver.packets == k + 1)
        assert teleop.state_machine.state == TeleopState.TELEOPERATION
        intruder = xr_app.connect(address)
        right_b = xr_app.tracking_state(HEADSET_EPOCH_NS, controllers={
            "right": xr_app.controller((0.2, 1.0, -0.35), (0.0, 0.0, 0.0, 1.0), secondary=True)})
        intruder.sendall(xr_app.hello_frames(xr_app.OTHER_SERIAL) + xr_app.tracking_frame(right_b))
        assert refused(intruder)
        assert teleop.state_machine.state == TeleopState.TELEOPERATION and teleop._source.refused == 1
        assert "refused=1" in teleop.input_diagnostics() and "takeover_attempts=1" in teleop.input_diagnostics()
        operator.close()
        intruder.close()
    finally:
        teleop.disconnect()


def test_states_queued_during_a_drop_are_not_stamped_fresh_after_the_reconnect():
    """The receiver on an injected clock: a headset streams (stamps on its own clock, 1 ms on the link), drops,
    reconnects at t = 2 s and first delivers the 28 states it queued (captured 1.72-1.99 s) in one burst, then live
    ones. Every queued state keeps its capture time (old: the robot holds); the live ones are exact again."""
    receiver = InputReceiver(parse_xr_state)
    frames = []
    receiver.on_frame = frames.append

    def send(capture_ms: float, arrival_ms: float) -> None:
        receiver.handle(encode_xr_state(timestamp_ns=HEADSET_EPOCH_NS + int(capture_ms * MS),
                                        controllers={"right": {"pose": POSE}}), int(arrival_ms * MS))

    for k in range(100):  # the first connection: 0 .. 0.99 s
        send(10 * k, 10 * k + 1)
    receiver.new_sender(2000 * MS)  # the app reconnects (tests/test_xrobotoolkit: the source calls this on accept)
    queued = [1720 + 10 * k for k in range(28)]
    for k, capture_ms in enumerate(queued):
        send(capture_ms, 2001 + 0.05 * k)
    for k in range(50):  # live again
        send(2010 + 10 * k, 2011 + 10 * k)
    burst = frames[100:128]
    assert [f.capture_ns for f in burst] == [(q + 1) * MS for q in queued]  # their true capture times, not 2.0 s
    assert all(f.capture_ns < 2000 * MS for f in burst)  # captured before the reconnect, and so stamped
    assert all(abs(f.capture_ns - (2010 + 10 * k + 1) * MS) <= MS for k, f in enumerate(frames[128:]))


def test_the_xrobotoolkit_source_stamps_a_reconnects_queued_states_as_old(xrobotoolkit):
    source, receiver = xrobotoolkit
    frames = []
    receiver.on_frame = frames.append
    app = xr_app.connect(source.address)
    app.sendall(xr_app.hello_frames())
    for k in range(20):  # live: stamped when captured, on the headset's clock
        app.sendall(xr_app.tracking_frame(state(k, stamp_ns=now_ns() + HEADSET_EPOCH_NS)))
    wait_until(lambda: len(frames) == 20)
    dropped_ns = now_ns()
    app.close()
    again = xr_app.connect(source.address)
    reconnected_ns = now_ns()
    captures = [dropped_ns + k * 10 * MS - 300 * MS for k in range(25)]  # queued: 300 .. 60 ms before the drop
    again.sendall(xr_app.hello_frames() + b"".join(
        xr_app.tracking_frame(state(20 + k, stamp_ns=c + HEADSET_EPOCH_NS)) for k, c in enumerate(captures)))
    wait_until(lambda: len(frames) == 45)
    assert all(f.capture_ns < reconnected_ns - 50 * MS for f in frames[20:])  # old, as they are
    assert max(abs(f.capture_ns - c) for f, c in zip(frames[20:], captures)) < 20 * MS
    again.close()


# ---------------------------------------------------------------- UDP


def test_a_udp_source_locks_to_its_first_sender_until_it_goes_quiet_or_is_handed_over():
    source = UdpSource("127.0.0.1", free_port())
    clock = {"ns": 10**12}
    source.clock = lambda: clock["ns"]
    receiver = InputReceiver(parse_xr_state)
    source.start(receiver)
    a, b = socket.socket(socket.AF_INET, socket.SOCK_DGRAM), socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        def send(sock, trigger, expect_packets=None, expect_refused=None):
            sock.sendto(encode_xr_state(controllers={"right": {"pose": POSE, "trigger": trigger}}), source.address)
            wait_until(lambda: receiver.packets == expect_packets and source.refused == expect_refused)

        send(a, 0.1, 1, 0)
        clock["ns"] += 1_000_000_000
        send(b, 0.9, 1, 1)  # refused: a sent 1 s ago
        send(a, 0.2, 2, 1)
        assert receiver.latest().analog["right_trigger"] == 0.2 and receiver.sender_id == 1
        clock["ns"] += 2_500_000_000  # a has been silent 2.5 s: it let go
        send(b, 0.9, 3, 1)
        assert receiver.sender_id == 2  # another sender, another clock: the arm re-anchors (test_operator_control)
        send(a, 0.3, 3, 2)
        source.hand_over()
        send(a, 0.4, 4, 2)
        assert receiver.latest().analog["right_trigger"] == 0.4 and source.lock.owners == 3
    finally:
        source.stop()
        a.close()
        b.close()


def test_the_console_key_h_hands_the_input_over_and_holds_the_robot():
    from lerobot_teleoperator_teledex import TeledexXR, TeledexXRConfig

    teleop = TeledexXR(TeledexXRConfig(preset=PRESET, source="udp", port=free_port(), keyboard=False))
    teleop.connect()
    try:
        teleop.press_key("L1")
        teleop.press_key("L2")
        assert "h = hand the input over" in teleop.keyboard_help()
        teleop._source.lock.admit(("127.0.0.1", 1), now_ns())
        assert teleop.press_keyboard_key("h")
        assert teleop._source.lock.owner is None and teleop.state_machine.state == TeleopState.EMERGENCY
    finally:
        teleop.disconnect()


# ---------------------------------------------------------------- WebXR


def webxr(tmp_path, pairing: bool | None = None):
    source = WebXRSource("127.0.0.1", 0, certificate_dir=tmp_path, pairing=pairing)
    receiver = InputReceiver(parse_xr_state)
    source.start(receiver)
    trust = __import__("ssl").create_default_context(cafile=source.cert_path)
    return source, receiver, trust


def socket_url(source, query: str = "") -> str:
    return source.url.replace("https", "wss") + "ws" + query


def test_the_socket_refuses_a_page_from_another_origin(tmp_path):
    source, receiver, trust = webxr(tmp_path)
    try:
        own = f"https://127.0.0.1:{source.address[1]}"
        with pytest.raises(InvalidStatus, match="403"):
            connect(socket_url(source), ssl=trust, origin="https://elsewhere.example", proxy=None)
        with connect(socket_url(source), ssl=trust, origin=own, proxy=None) as page:  # the page served here
            assert json.loads(page.recv(timeout=5))["type"] == "status"
        with connect(socket_url(source), ssl=trust, proxy=None) as tool:  # no browser: no Origin, no site to fear
            assert json.loads(tool.recv(timeout=5))["type"] == "status"
        assert source.unpaired == 1 and not source.pairing  # loopback: no token asked
    finally:
        source.stop()


def test_off_loopback_a_page_needs_the_one_time_token(tmp_path):
    """pairing=True is what a LAN bind gets (tests bind loopback only)."""
    source, receiver, trust = webxr(tmp_path, pairing=True)
    try:
        url = source.page_url()
        token = url.split("?token=")[1]
        assert len(token) >= 20 and "█" in qr_code(url)
        for query in ("", "?token=wrong", "?session=guess"):
            with pytest.raises(InvalidStatus, match="403"):
                connect(socket_url(source, query), ssl=trust, proxy=None)
        with connect(socket_url(source, f"?token={token}"), ssl=trust, proxy=None) as page:
            paired = json.loads(page.recv(timeout=5))
            assert paired["type"] == "paired"
            page.send(encode_xr_state(controllers={"right": {"pose": POSE, "trigger": 0.5}}))
            wait_until(lambda: receiver.packets == 1)
        assert source.page_url() == source.url  # spent: no second page pairs with it
        with pytest.raises(InvalidStatus, match="403"):
            connect(socket_url(source, f"?token={token}"), ssl=trust, proxy=None)
        session = paired["session"]
        with connect(socket_url(source, f"?session={session}"), ssl=trust, proxy=None) as page:  # its reconnect
            assert json.loads(page.recv(timeout=5))["type"] == "status"
            source.hand_over()  # the console: this page goes, a new token is printed
            with pytest.raises(Exception):  # noqa: B017 - closed by the server (1008)
                for _ in range(10):
                    page.recv(timeout=5)
        with pytest.raises(InvalidStatus, match="403"):
            connect(socket_url(source, f"?session={session}"), ssl=trust, proxy=None)
        fresh = source.page_url().split("?token=")[1]
        assert fresh != token
        with connect(socket_url(source, f"?token={fresh}"), ssl=trust, proxy=None) as page:
            assert json.loads(page.recv(timeout=5))["type"] == "paired"
        assert source.unpaired == 5
    finally:
        source.stop()


def test_a_session_key_works_only_for_the_page_it_was_paired_with(tmp_path):
    """A session key copied off the paired page is refused from another address; the paired page reconnecting
    with it (a reload, a Wi-Fi drop) replaces its old connection, so it is never two pages."""
    import socket as sockets

    source, receiver, trust = webxr(tmp_path, pairing=True)

    def from_address(address: str, query: str):
        raw = sockets.create_connection(source.address, timeout=5, source_address=(address, 0))
        return connect(socket_url(source, query), sock=raw, ssl=trust, server_hostname="127.0.0.1", proxy=None)

    try:
        token = source.page_url().split("?token=")[1]
        with from_address("127.0.0.1", f"?token={token}") as page:
            session = json.loads(page.recv(timeout=5))["session"]
            page.send(encode_xr_state(controllers={"right": {"pose": POSE, "trigger": 0.5}}))
            wait_until(lambda: receiver.packets == 1)
            refused_before = source.unpaired
            with pytest.raises(InvalidStatus, match="403"):
                from_address("127.0.0.2", f"?session={session}")  # the key, copied onto another device
            assert source.unpaired == refused_before + 1
            with from_address("127.0.0.1", f"?session={session}") as again:  # the paired page, reloaded
                assert json.loads(again.recv(timeout=5))["type"] == "status"
                with pytest.raises(Exception):  # noqa: B017 - its old connection is closed by the server
                    for _ in range(10):
                        page.recv(timeout=5)
                again.send(encode_xr_state(controllers={"right": {"pose": POSE, "trigger": 0.7}}))
                wait_until(lambda: receiver.packets == 2)  # and it tracks: nobody else holds tracking
                assert receiver.latest().analog["right_trigger"] == 0.7
    finally:
        source.stop()


def test_a_refused_page_gets_no_robot_status_or_camera_and_is_told_it_is_refused(tmp_path):
    source, receiver, trust = webxr(tmp_path)
    image = np.zeros((48, 64, 3), dtype=np.uint8)
    try:
        with connect(socket_url(source), ssl=trust, proxy=None) as operator, \
                connect(socket_url(source), ssl=trust, proxy=None) as other:
            operator.send(encode_xr_state(controllers={"right": {"pose": POSE, "trigger": 0.2}}))
            wait_until(lambda: receiver.packets == 1)
            source.publish_status({"state": "Teleoperation", "arm": "following", "engaged": True})
            source.publish_view(lambda: {"type": "scene", "fingers": []}, {"top": (image, {"camera": "top"})}, 0)
            seen = {"operator": [], "other": []}
            for name, page in (("operator", operator), ("other", other)):
                deadline = time.monotonic() + 5
                while time.monotonic() < deadline:
                    try:
                        seen[name].append(page.recv(timeout=0.5))
                    except TimeoutError:
                        if seen[name] and any(isinstance(m, bytes) for m in seen["operator"]):
                            break
            assert any(isinstance(m, bytes) for m in seen["operator"])  # the operator's page gets the camera
            assert not any(isinstance(m, bytes) for m in seen["other"])  # the other page none
            statuses = [json.loads(m) for m in seen["other"]]
            assert all(s["type"] == "status" for s in statuses)  # nor the scene
            assert statuses[-1] == {"type": "status", "refused": True, "tracking": "another page", "pages": 2}
    finally:
        source.stop()


def test_one_page_sends_tracking_and_one_garbage_message_takes_nothing_over(tmp_path):
    source, receiver, trust = webxr(tmp_path)
    try:
        with connect(socket_url(source), ssl=trust, proxy=None) as first, \
                connect(socket_url(source), ssl=trust, proxy=None) as second:
            json.loads(first.recv(timeout=5)), json.loads(second.recv(timeout=5))
            first.send("{not a state")  # garbage first: it takes nothing
            second.send(encode_xr_state(controllers={"right": {"pose": POSE, "trigger": 0.2}}))
            wait_until(lambda: receiver.packets == 1)
            assert receiver.parse_failures == 1
            first.send(encode_xr_state(controllers={"right": {"pose": POSE, "trigger": 0.9}}))  # refused, and told
            deadline = time.monotonic() + 5
            while json.loads(first.recv(timeout=5)).get("tracking") != "another page":
                assert time.monotonic() < deadline
            second.send(encode_xr_state(controllers={"right": {"pose": POSE, "trigger": 0.3}}))
            wait_until(lambda: receiver.packets == 2)
            assert receiver.latest().analog["right_trigger"] == 0.3 and source.refused == 1
            assert np.isclose(receiver.latest().poses["right_controller"][0], POSE[0])
    finally:
        source.stop()
