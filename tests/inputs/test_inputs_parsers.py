"""Input parsers, datagram files and transports: round trips, schema variants, per-device validity, bad packets and
bad fields counted, listeners on loopback by default, the sender allow-list."""

import json
import socket
import threading

import numpy as np
import pytest
import xr_app
from scipy.spatial.transform import Rotation

from teledex_lerobot.inputs import (
    InputReceiver,
    encode_joints,
    encode_keypoints,
    encode_udexreal,
    encode_xr_state,
    parse_joints,
    parse_keypoints,
    parse_udexreal,
    parse_xr_state,
)
from teledex_lerobot.inputs.datagram_file import DatagramWriter, read_datagrams, write_datagrams
from teledex_lerobot.inputs.frame import POSITION_TRACKED, POSITION_VALID
from teledex_lerobot.inputs.sources import FileReplaySource, UdpSource, UnixDatagramSource, send_datagrams
from teledex_lerobot.inputs.xr_state import OPERATOR_FROM_XR, openxr26_from_mediapipe21
from teledex_lerobot.operator.hand_model import keypoints_from_angles
from teledex_lerobot.operator.poses import FIST, POWER_GRASP

POSE = np.r_[0.4, -0.2, 1.1, Rotation.from_euler("xyz", [0.2, -0.1, 0.5]).as_quat()]


def world_hand(side="right"):
    keypoints = keypoints_from_angles(POWER_GRASP, side)
    return keypoints @ Rotation.from_euler("xyz", [0.3, 0.2, -0.4]).as_matrix().T + [0.3, -0.1, 1.0]


def test_xr_state_round_trip_and_variants():
    data = encode_xr_state(timestamp_ns=7, head=POSE, controllers={"right": {
        "pose": POSE, "trigger": 0.8, "grip": 0.3, "primary": True}}, hands_m={"right": world_hand()})
    frame = parse_xr_state(data, 123)
    assert frame.received_ns == 123 and frame.sender_time_ns == 7
    for name in ("right_controller", "head"):
        assert frame.poses[name][:3] == pytest.approx(POSE[:3], abs=1e-5)
        assert abs(np.dot(frame.poses[name][3:], POSE[3:])) == pytest.approx(1.0, abs=1e-5)
    assert frame.analog["right_trigger"] == 0.8 and frame.buttons["A"] and not frame.buttons["B"]
    expected = keypoints_from_angles(POWER_GRASP, "right")
    assert frame.hand_keypoints_m["right"] == pytest.approx(expected, abs=1e-5)
    assert frame.poses["right_wrist"][:3] == pytest.approx(world_hand()[0], abs=1e-5)
    # XR frame -> operator frame: XR -z (forward) is operator +x
    raw = json.loads(data)
    assert [float(v) for v in raw["Controller"]["right"]["pose"].split(",")[:3]] == pytest.approx(
        [0.2, 1.1, -0.4], abs=1e-6)
    # the PC service's wrapper, and WebXR's 25-joint hands, parse the same
    wrapped = json.dumps({"functionName": "Tracking", "value": data.decode()}).encode()
    assert parse_xr_state(wrapped, 0).analog == frame.analog
    webxr = parse_xr_state(encode_xr_state(hands_m={"right": world_hand()}, webxr_hands=True), 0)
    assert webxr.hand_keypoints_m["right"] == pytest.approx(expected, abs=1e-5)


def test_glove_keypoint_and_joint_round_trips():
    frame = parse_udexreal(encode_udexreal({"right": FIST, "left": FIST}), 1)
    assert set(frame.hand_angles_rad) == {"right", "left"}
    assert frame.hand_angles_rad["right"] == pytest.approx(FIST, abs=1e-5)
    keypoints = keypoints_from_angles(FIST, "left")
    frame = parse_keypoints(encode_keypoints("left", keypoints, POSE, analog={"left_clutch": 1.0}), 2)
    assert frame.hand_keypoints_m["left"] == pytest.approx(keypoints, abs=1e-5)
    assert frame.poses["left_wrist"] == pytest.approx(POSE, abs=1e-5) and frame.analog == {"left_clutch": 1.0}
    assert parse_joints(encode_joints({"joint1": 0.5}), 3).joint_positions == {"joint1": 0.5}


BAD_PACKETS = [b"", b"\x00\xff\xfe", b"{", b"[1, 2]", b'"text"', b'{"functionName": "Tracking", "value": {}}']
BAD_DEVICES = [  # the packet is used; the one device is left out and the bad field counted
    (b'{"Controller": {"right": {"pose": "1,2,3"}}}', "right_controller.pose: expected 7"),
    (b'{"Controller": {"right": {"pose": "nan,0,0,0,0,0,1"}}}', "right_controller.pose: non-finite"),
    (b'{"Controller": {"right": {"pose": "0.1,0,0,0,0,0,0.5"}}}', "right_controller.pose: quaternion norm 0.500"),
]


def test_bad_packets_are_counted_never_raised():
    receiver = InputReceiver(parse_xr_state)
    good = encode_xr_state(controllers={"right": {"pose": POSE, "trigger": 1.0}})
    receiver.handle(good)
    for packet in BAD_PACKETS + [good[: len(good) // 2], b"{}"]:
        receiver.handle(packet)
    assert receiver.parse_failures == len(BAD_PACKETS) + 1  # "{}" (a valid, empty state) passes; the truncated fails
    assert receiver.packets == 2 and receiver.latest().analog == {}
    for packet, problem in BAD_DEVICES:
        receiver.handle(packet)
        frame = receiver.latest()
        assert frame.poses == {} and "right_controller" in frame.invalid_devices
        assert len(frame.bad_fields) == 1 and frame.bad_fields[0].startswith(problem), frame.bad_fields
    assert receiver.bad_fields == len(BAD_DEVICES) and receiver.parse_failures == len(BAD_PACKETS) + 1
    glove = InputReceiver(parse_udexreal)
    truncated = json.loads(encode_udexreal({"right": FIST}))
    truncated["UdexReal"]["Parameter"] = truncated["UdexReal"]["Parameter"][:10]
    for packet in (json.dumps(truncated).encode(), b'{"g": {"Parameter": [{"Name": "r0", "Value": "x"}]}}', b"{}"):
        glove.handle(packet)
    assert glove.parse_failures == 3 and glove.latest() is None


def test_datagram_file_round_trip_and_recorder(tmp_path):
    datagrams = [(0, b"a"), (5_000_000, b"\x00\xff"), (9_000_000, b"{}")]
    path = tmp_path / "x.datagrams.jsonl"
    write_datagrams(path, "xr_state", datagrams, "test")
    header, read = read_datagrams(path)
    assert header["parser"] == "xr_state" and read == datagrams
    recorded = tmp_path / "rec.datagrams.jsonl"
    writer = DatagramWriter(recorded, "joints")
    receiver = InputReceiver(parse_joints, writer)
    for t, data in datagrams:
        receiver.handle(data, 1000 + t)
    writer.close()
    assert read_datagrams(recorded)[1] == datagrams
    (tmp_path / "bad.jsonl").write_text('{"format": "other"}\n')
    with pytest.raises(ValueError, match="not a teledex-datagrams/1 file"):
        read_datagrams(tmp_path / "bad.jsonl")
    (tmp_path / "bad.jsonl").write_text(recorded.read_text().replace('"data": "', '"data": "#', 1))
    with pytest.raises(ValueError, match="line 2: not a teledex-datagrams/1 file"):
        read_datagrams(tmp_path / "bad.jsonl")


def _run_source(source, send, expected=4):
    """Start the source, send, and wait (bounded) until `expected` packets were handled, good or bad."""
    receiver = InputReceiver(parse_joints)
    source.start(receiver)
    try:
        send()
        for _ in range(100):
            if receiver.packets + receiver.parse_failures >= expected:
                break
            threading.Event().wait(0.02)
    finally:
        source.stop()
    return receiver


def packets(n=3):
    return [(i * 1_000_000, encode_joints({"joint1": 0.1 * i})) for i in range(n)] + [(3_000_000, b"garbage")]


def test_udp_and_unix_loopback(tmp_path):
    udp = UdpSource(port=0)
    assert udp.address[0] == "127.0.0.1"  # the default: this machine only
    receiver = _run_source(udp, lambda: send_datagrams(packets(), udp.address))
    assert receiver.packets == 3 and receiver.latest().joint_positions == {"joint1": pytest.approx(0.2)}
    path = str(tmp_path / "in.sock")
    unix = UnixDatagramSource(path)
    assert _run_source(unix, lambda: send_datagrams(packets(), path)).packets == 3


def test_udp_allow_list_drops_and_counts_other_senders():
    udp = UdpSource("127.0.0.1", 0, allow=["127.0.0.2"])
    receiver = InputReceiver(parse_joints)
    udp.start(receiver)
    try:
        for sender in ("127.0.0.3", "127.0.0.3", "127.0.0.2"):
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
                sock.bind((sender, 0))
                sock.sendto(encode_joints({"joint1": 0.5}), udp.address)
        for _ in range(250):
            if receiver.packets + udp.senders.dropped >= 3:
                break
            threading.Event().wait(0.02)
    finally:
        udp.stop()
    assert receiver.packets == 1 and udp.senders.dropped == 2
    with pytest.raises(ValueError, match="teleop.allow"):
        UdpSource("127.0.0.1", 0, allow=["not-an-address"])


def test_file_replay_source(tmp_path):
    path = tmp_path / "j.datagrams.jsonl"
    write_datagrams(path, "joints", packets(), "")
    source = FileReplaySource(path, speed=10.0, loop=False)
    receiver = InputReceiver(parse_joints)
    source.start(receiver)
    source._thread.join(timeout=2.0)
    source.stop()
    assert receiver.packets == 3 and receiver.parse_failures == 1


def app_hand(is_active=1, flags=None):
    """A hand as the XRoboToolkit app writes it: 26 OpenXR joints in the XR frame (tests/xr_app.py)."""
    joints = openxr26_from_mediapipe21(world_hand() @ OPERATOR_FROM_XR)
    return xr_app.hand(joints, is_active=is_active, flags=flags)


def test_each_device_is_valid_on_its_own():
    """The app's JSON with one device broken at a time: only that device is left out, and only bad values count."""
    right = xr_app.controller((0.2, 1.0, -0.35), (0.0, 0.0, 0.0, 1.0), trigger=0.7, primary=True)
    switched_off = xr_app.controller()  # what the app sends for a controller that is off: all zeros
    state = xr_app.tracking_state(5, controllers={"left": switched_off, "right": right},
                                  hands={"leftHand": app_hand(is_active=0), "rightHand": app_hand()})
    frame = parse_xr_state(state.encode(), 10)
    assert set(frame.poses) == {"right_controller", "left_wrist", "right_wrist"}
    assert frame.invalid_devices == {"left_controller": "inactive (all-zero pose)"} and frame.bad_fields == []
    assert frame.analog["right_trigger"] == pytest.approx(0.7) and frame.buttons["A"]
    assert frame.hand_high_quality == {"left": False, "right": True}  # isActive=0: low quality, still used
    assert frame.hand_keypoints_valid("right").all()

    wrong = json.loads(state)
    wrong["Controller"]["right"].update(trigger=5.0, grip=-0.2, primaryButton="false", axisX="0.1")
    frame = parse_xr_state(json.dumps(wrong).encode(), 10)
    assert sorted(f.split(":")[0] for f in frame.bad_fields) == [
        "right_controller.axisX", "right_controller.grip", "right_controller.primaryButton",
        "right_controller.trigger"]
    assert "right_trigger" not in frame.analog and "A" not in frame.buttons  # dropped, not clipped or guessed
    assert "right_controller" in frame.poses and frame.analog["right_axis_y"] == 0.0  # the rest of it is used

    inferred = [15] * 26
    inferred[10] = 3  # index tip: position valid but inferred (occluded)
    lost = [15] * 26
    lost[25] = 0  # little finger tip: no valid position
    frame = parse_xr_state(xr_app.tracking_state(5, hands={"leftHand": app_hand(flags=lost),
                                                           "rightHand": app_hand(flags=inferred)}).encode(), 10)
    assert frame.invalid_devices == {"left_hand": "1 of 21 keypoints not tracked"}
    flags = frame.hand_keypoint_flags["right"]
    assert flags[8] & POSITION_VALID and not flags[8] & POSITION_TRACKED and flags[7] & POSITION_TRACKED
    assert frame.hand_keypoints_valid("right").all() and set(frame.hand_keypoints_m) == {"right"}

    # the app writes every joint's flags as a double ("s":15.0, tests/xr_app.py); a fraction is not a flag word
    assert '"s":15.0' in state and frame.hand_keypoints_valid("right").all()
    fractional = json.loads(state)
    fractional["Hand"]["rightHand"]["HandJointLocations"][3]["s"] = 15.5
    frame = parse_xr_state(json.dumps(fractional).encode(), 10)
    assert frame.bad_fields == ["right_hand: joint 3: location flags s must be a whole number >= 0, got 15.5"]
    assert "right" not in frame.hand_keypoints_m and "left" in frame.hand_keypoints_m

    unfocused = parse_xr_state(xr_app.tracking_state(5, controllers={"right": right}, focus=False).encode(), 10)
    assert unfocused.poses == {} and unfocused.analog == {} and unfocused.invalid_devices == {
        "right_controller": "headset app not in focus"}
    assert parse_xr_state(b'{"timeStampNs": "soon"}', 10).bad_fields == [
        "timeStampNs must be nanoseconds on the sender's clock, 0 to 9223372036854775807 (int64), got 'soon'"]


def test_listeners_are_local_unless_asked_and_say_so():
    from lerobot_teleoperator_teledex import TeledexGloveConfig, TeledexXRConfig
    from teledex_lerobot.inputs.senders import SenderFilter, describe_listener

    assert TeledexXRConfig().bind == TeledexGloveConfig().bind == "127.0.0.1"
    assert TeledexXRConfig().source == "xrobotoolkit"
    assert "this machine only" in describe_listener("glove", "127.0.0.1", 5555, SenderFilter())
    line = describe_listener("xr", "0.0.0.0", 63901, SenderFilter(["192.168.1.20"]))
    assert "reachable from the network (senders 192.168.1.20/32" in line
    with pytest.raises(ValueError, match="teleop.allow: .*e.g. --teleop.allow="):
        TeledexXRConfig(allow=["192.168.1.300"])
    with pytest.raises(ValueError, match="source must be one of"):
        TeledexGloveConfig(source="webxr")  # a glove has no WebXR page
