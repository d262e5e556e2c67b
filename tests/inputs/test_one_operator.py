"""One operator, the one you paired: the XRoboToolkit link belongs to its first connection until that drops or is
handed over at the console (a second one cannot press B for the operator); states the app queued during a drop are
not stamped as fresh after its reconnect; a UDP source locks to its first sender; the WebXR socket checks Origin,
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
from teledex_lerobot.inputs.xrobotoolkit import OWNER_SILENCE_S

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


def app_sending(address, *state_args, **state_fields) -> socket.socket:
    """A headset app connected to the source at `address` that has said hello and sent one tracking state."""
    app = xr_app.connect(address)
    app.sendall(xr_app.hello_frames() + xr_app.tracking_frame(state(*state_args, **state_fields)))
    return app


def test_the_link_is_the_first_connections_until_it_drops_or_is_handed_over(xrobotoolkit):
    source, receiver = xrobotoolkit
    first = app_sending(source.address, 0)
    wait_until(lambda: receiver.packets == 1)
    second = app_sending(source.address, 1, trigger=1.0)
    assert refused(second) and source.refused == 1 and source.connections == 1
    first.sendall(xr_app.tracking_frame(state(2)))
    wait_until(lambda: receiver.packets == 2)
    assert receiver.latest().analog["right_trigger"] == 0.0  # only the first one's states
    source.hand_over()  # the operator at the console
    assert refused(first)
    third = app_sending(source.address, 3, trigger=1.0)
    wait_until(lambda: receiver.packets == 3)
    assert source.connections == 2 and receiver.latest().analog["right_trigger"] == 1.0
    third.close()  # it drops: the next connection takes the link
    fourth = app_sending(source.address, 4)
    wait_until(lambda: receiver.packets == 4)
    assert source.connections == 3 and source.refused == 1
    fourth.close()
    second.close()
    first.close()


def test_a_connection_silent_longer_than_the_heartbeat_frees_the_link(xrobotoolkit):
    source, receiver = xrobotoolkit
    clock = {"ns": now_ns()}
    source.clock = lambda: clock["ns"]
    squatter = xr_app.connect(source.address)  # connects and never speaks (or a half-open socket after a drop)
    wait_until(lambda: source.connections == 1)
    clock["ns"] += int(OWNER_SILENCE_S * 1e9) + 1
    assert refused(squatter)
    app = app_sending(source.address, 0)
    wait_until(lambda: receiver.packets == 1)
    assert source.refused == 0 and source.connections == 2
    app.close()
    squatter.close()


def test_a_second_connection_pressing_b_does_not_stop_the_operator():
    """The issue's case: anyone on the network connecting to 63901 and pressing B switched the state to
    Emergency."""
    from lerobot_teleoperator_teledex import TeledexXR, TeledexXRConfig

    teleop = TeledexXR(TeledexXRConfig(preset=PRESET, source="xrobotoolkit", port=free_tcp_port(), keyboard=False))
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
        intruder.sendall(xr_app.hello_frames() + xr_app.tracking_frame(right_b))
        assert refused(intruder)
        assert teleop.state_machine.state == TeleopState.TELEOPERATION and teleop._source.refused == 1
        assert "refused=1" in teleop.input_diagnostics()
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
