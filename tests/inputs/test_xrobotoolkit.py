"""The XRoboToolkit headset app streaming straight to us: its exact frames (tests/xr_app.py, written from the app's
published source) cut into TCP reads every way, with garbage and reconnects; discovery; the allow-list; the teleop
moving an arm; per-device validity and the headset's clock. Loopback only."""

import random
import socket
import time

import numpy as np
import pytest
import xr_app

from teledex_lerobot.clock import now_ns
from teledex_lerobot.inputs import InputReceiver, parse_xr_state
from teledex_lerobot.inputs.xrobotoolkit import CMD_FUNCTION, FrameReader, XRoboToolkitSource

HEADSET_EPOCH_NS = 1_700_000_000_000_000_000  # the headset's Unix clock minus our monotonic clock, here


def state(k: int, *, stamp_ns: int | None = None, trigger=0.0, primary=False, secondary=False, left_on=False) -> str:
    """The app's state: the left controller switched off (all-zero pose) unless left_on, the right one moving."""
    right = xr_app.controller(xr_app.reach_path(k / 90), (0.0, 0.0, 0.0, 1.0), trigger=trigger, grip=0.3)
    left = xr_app.controller((-0.2, 1.0, -0.35), (0.0, 0.0, 0.0, 1.0), primary=primary, secondary=secondary) \
        if left_on else xr_app.controller()
    stamp_ns = HEADSET_EPOCH_NS + k * 11_111_111 if stamp_ns is None else stamp_ns
    return xr_app.tracking_state(stamp_ns, head=((0.0, 1.6, 0.0), (0.0, 0.0, 0.0, 1.0)),
                                 controllers={"left": left, "right": right})


def app_stream(count: int) -> bytes:
    return xr_app.hello_frames() + b"".join(xr_app.tracking_frame(state(k)) for k in range(count)) + \
        xr_app.heartbeat_frame()


def tracking_bodies(frames) -> list[bytes]:
    return [f.body for f in frames if f.command == CMD_FUNCTION]


def test_frames_are_read_however_tcp_cuts_them():
    stream = app_stream(20)
    whole = FrameReader().feed(stream)
    assert [f.command for f in whole] == [0x19, 0x6C] + [0x6D] * 20 + [0x23]
    assert whole[0].body == f"{xr_app.SERIAL}|-1".encode()
    expected = tracking_bodies(whole)
    assert expected[3].decode() == xr_app.litjson({"functionName": "Tracking", "value": state(3)})

    reader = FrameReader()  # one byte per read
    assert tracking_bodies(f for i in range(len(stream)) for f in reader.feed(stream[i:i + 1])) == expected
    rng = random.Random(7)
    for _ in range(20):  # random cuts, several frames per read and frames across reads
        reader, frames, i = FrameReader(), [], 0
        while i < len(stream):
            n = rng.randint(1, 3000)
            frames += reader.feed(stream[i:i + n])
            i += n
        assert tracking_bodies(frames) == expected and reader.skipped_bytes == 0


def test_garbage_between_and_inside_frames_costs_only_itself():
    rng = random.Random(3)
    frames = [xr_app.tracking_frame(state(k)) for k in range(30)]
    garbage = [bytes(rng.randrange(256) for _ in range(rng.randint(1, 40))) for _ in frames]
    garbage[5] = b"\x3f\x6d\x10\x00\x00\x00" + b"x" * 30  # a head byte and a plausible length, then no tail
    garbage[9] = b"\x3f\x6d\xff\xff\xff\x7f"  # a length far beyond any state
    torn = frames[12][: len(frames[12]) // 2]  # a frame cut short by a dropped connection's last bytes
    stream = b"".join(g + f for g, f in zip(garbage, frames)) + torn + frames[0]
    reader = FrameReader()
    out = [f for i in range(0, len(stream), 997) for f in reader.feed(stream[i:i + 997])]
    assert tracking_bodies(out) == tracking_bodies(FrameReader().feed(b"".join(frames) + frames[0]))
    assert reader.skipped_bytes == sum(map(len, garbage)) + len(torn)


def wait_until(condition, timeout_s=5.0):
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_source_reads_the_app_across_reconnects(xrobotoolkit):
    source, receiver = xrobotoolkit
    assert source.address[0] == "127.0.0.1"
    app = xr_app.connect(source.address)
    app.sendall(xr_app.hello_frames() + b"".join(xr_app.tracking_frame(state(k)) for k in range(3)))  # one write
    wait_until(lambda: receiver.packets == 3)
    assert source.device_serial == xr_app.SERIAL and source.app_version == xr_app.APP_VERSION
    frame = xr_app.tracking_frame(state(3))
    for part in (frame[:5], frame[5:200], frame[200:]):  # one frame over three reads
        app.sendall(part)
        time.sleep(0.02)
    app.sendall(b"\x00garbage\xa5" + xr_app.tracking_frame(state(4)))
    wait_until(lambda: receiver.packets == 5)
    latest = receiver.latest()
    assert latest.sender_time_ns == HEADSET_EPOCH_NS + 4 * 11_111_111
    assert "right_controller" in latest.poses and latest.invalid_devices == {"left_controller":
                                                                              "inactive (all-zero pose)"}
    assert latest.analog["right_grip"] == pytest.approx(0.3) and source.skipped_bytes == 9

    app.close()  # Wi-Fi drop; the app reconnects 2 s later with a new socket and says hello again
    second = xr_app.connect(source.address)
    second.sendall(xr_app.hello_frames() + xr_app.tracking_frame(state(5, left_on=True)))
    wait_until(lambda: receiver.packets == 6)
    assert source.connections == 2 and "left_controller" in receiver.latest().poses
    third = xr_app.connect(source.address)  # another headset while the link is held: refused (test_one_operator)
    third.sendall(xr_app.hello_frames(xr_app.OTHER_SERIAL) + xr_app.tracking_frame(state(6)))
    third.settimeout(5)
    try:
        assert third.recv(10) == b""  # closed unread
    except ConnectionResetError:
        pass  # closed with our bytes unread: the same refusal
    second.sendall(xr_app.tracking_frame(state(7)))
    wait_until(lambda: receiver.packets == 7)
    assert source.refused == 1 and receiver.latest().sender_time_ns == HEADSET_EPOCH_NS + 7 * 11_111_111
    second.close()
    third.close()
    assert receiver.parse_failures == 0


def test_sample_times_are_the_headsets_corrected_for_its_clock(xrobotoolkit):
    """Samples sent late (Wi-Fi retries, bursts) keep their capture time: headset stamp + estimated clock offset."""
    source, receiver = xrobotoolkit
    app = xr_app.connect(source.address)
    app.sendall(xr_app.hello_frames())
    captured, frames = [], []
    receiver.on_frame = frames.append
    for k in range(40):
        capture = now_ns()
        captured.append(capture)
        time.sleep([0.0, 0.004, 0.012][k % 3])  # held back 0, 4 or 12 ms before it leaves the headset
        app.sendall(xr_app.tracking_frame(state(k, stamp_ns=capture + HEADSET_EPOCH_NS)))
    wait_until(lambda: receiver.packets == 40)
    late = [f.capture_ns - c for f, c in zip(frames, captured)]
    arrival = [f.received_ns - c for f, c in zip(frames, captured)]
    assert all(f.capture_ns <= f.received_ns for f in frames)
    assert max(arrival[2::3]) >= 0.012e9 and np.median(late) < 1e6  # the arrival time would be 12 ms late
    app.close()


def test_allow_list_refuses_other_addresses():
    source = XRoboToolkitSource("127.0.0.1", 0, allow=["127.0.0.2"])
    receiver = InputReceiver(parse_xr_state)
    source.start(receiver)
    try:
        for sender, accepted in (("127.0.0.3", False), ("127.0.0.2", True)):
            app = socket.socket()
            app.bind((sender, 0))
            app.connect(source.address)
            app.sendall(xr_app.hello_frames() + xr_app.tracking_frame(state(0)))
            if accepted:
                wait_until(lambda: receiver.packets == 1)
            else:
                app.settimeout(2)
                try:
                    assert app.recv(10) == b""  # closed unread
                except ConnectionResetError:
                    pass  # closed with our bytes unread: the same refusal
            app.close()
        assert source.senders.dropped == 1 and receiver.packets == 1
    finally:
        source.stop()


def test_discovery_announces_our_address_to_the_given_headset_only():
    headset = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)  # the app's UdpReceiver on port 29888
    headset.bind(("127.0.0.1", 0))
    headset.settimeout(5)
    source = XRoboToolkitSource("127.0.0.1", 0, announce_to=f"127.0.0.1:{headset.getsockname()[1]}")
    source.start(InputReceiver(parse_xr_state))
    try:
        datagram, sender = headset.recvfrom(1024)
        assert xr_app.discovery_listener_accepts(datagram) == "127.0.0.1"  # the app lists "127.0.0.1"
        assert source._announcer.getsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST) == 0
    finally:
        source.stop()
        headset.close()


def test_teleop_follows_the_app_and_reports_invalid_devices():
    from test_teleop_inputs import PRESET, drive, free_tcp_port, values

    from lerobot_robot_teledex import Teledex, TeledexConfig
    from lerobot_teleoperator_teledex import TeledexXR, TeledexXRConfig
    from teledex_lerobot.control.state_machine import TeleopState

    port = free_tcp_port()
    teleop = TeledexXR(TeledexXRConfig(preset=PRESET, source="xrobotoolkit", port=port, view_port=0))
    robot = Teledex(TeledexConfig(backend="fake"))

    def headset(ticks):
        app = xr_app.connect(("127.0.0.1", port))
        app.sendall(xr_app.hello_frames())
        for k in range(200):  # one per tick: X (ZeroPos), Y (Teleoperation), then the trigger held while circling
            app.sendall(xr_app.tracking_frame(state(k, left_on=k < 60, primary=5 <= k < 8, secondary=40 <= k < 43,
                                                    trigger=1.0 if k > 70 else 0.0)))
            ticks.wait(1)
        app.close()

    diagnostics = []
    actions = drive(teleop, headset, robot, while_connected=lambda t: diagnostics.append(t.input_diagnostics()))
    arm = teleop.rig.parts["arm"]
    assert teleop.state_machine.state == TeleopState.TELEOPERATION
    assert np.ptp(values(actions, arm.keys), axis=0).max() > 0.02, diagnostics  # the arm followed the circle
    assert teleop.frame.invalid_devices == {"left_controller": "inactive (all-zero pose)"}  # switched off at 60
    assert "invalid=left_controller(inactive (all-zero pose))" in diagnostics[0]
    assert "connections=1 skipped_bytes=0" in diagnostics[0]
    assert teleop.frame.capture_ns <= teleop.frame.received_ns


def test_the_apps_operator_sees_the_robot_and_any_takeover_on_the_view_page(tmp_path):
    """The app shows nothing of ours: beside the link, a page (view only) shows the robot's cameras and the teleop's
    status, and warns of another app that tried to take the link; what the page sends drives nothing."""
    import json

    from sockets import connect
    from test_teleop_inputs import PRESET, drive, free_tcp_port

    from lerobot_robot_teledex import Teledex, TeledexConfig
    from lerobot_teleoperator_teledex import TeledexXR, TeledexXRConfig

    port, view_port = free_tcp_port(), free_tcp_port()
    teleop = TeledexXR(TeledexXRConfig(preset=PRESET, source="xrobotoolkit", port=port, view_port=view_port,
                                       certificate_dir=str(tmp_path)))
    robot = Teledex(TeledexConfig(backend="fake"))  # the preset's cameras, drawn
    seen = {"statuses": [], "cameras": set()}

    def headset(ticks):
        app = xr_app.connect(("127.0.0.1", port))
        app.sendall(xr_app.hello_frames())
        ticks.wait(5)
        intruder = xr_app.connect(("127.0.0.1", port))
        intruder.sendall(xr_app.hello_frames(xr_app.OTHER_SERIAL))
        with connect(f"wss://127.0.0.1:{view_port}/ws", ssl=ssl_trusting(tmp_path), proxy=None) as page:
            page.send('{"Controller": {}}')  # a page here watches: what it sends is ignored
            for k in range(60):
                app.sendall(xr_app.tracking_frame(state(k)))
                ticks.wait(1)
                while True:
                    try:
                        message = page.recv(timeout=0)
                    except TimeoutError:
                        break
                    if isinstance(message, bytes):
                        header = json.loads(message[8:8 + int.from_bytes(message[4:8], "little")])
                        seen["cameras"].add((header["camera"], "intrinsics" in header))
                    else:
                        seen["statuses"].append(json.loads(message))
        intruder.close()
        app.close()

    drive(teleop, headset, robot, while_connected=lambda t: seen.update(parse_failures=t.receiver.parse_failures))
    statuses = [s for s in seen["statuses"] if s["type"] == "status"]
    assert statuses and all(s["view_only"] and s["tracking"] == "none" for s in statuses)
    assert any("PA7L10MGH5678" in s.get("takeover", "") for s in statuses), statuses[-1]
    assert {name for name, _ in seen["cameras"]} == set(robot.cameras)
    assert all(calibrated for _, calibrated in seen["cameras"])
    assert seen["parse_failures"] == 0  # the page's message went nowhere


def ssl_trusting(directory):
    import ssl

    return ssl.create_default_context(cafile=str(directory / "cert.pem"))
