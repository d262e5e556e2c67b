"""The replay teleoperator: LeRobot Teleoperator contract, real-time playback, and driving the robot it targets."""

import time

import numpy as np
import pytest
from lerobot.utils.errors import DeviceAlreadyConnectedError, DeviceNotConnectedError

from lerobot_robot_teledex import Teledex, TeledexConfig, TeledexHand, TeledexHandConfig
from lerobot_teleoperator_teledex import TeledexReplay, TeledexReplayConfig


def _values(action, keys):
    return np.array([action[k] for k in keys])


def test_contract_and_keys_match_robot():
    teleop = TeledexReplay(TeledexReplayConfig())
    robot = Teledex(TeledexConfig(backend="fake"))
    assert teleop.action_features == robot.action_features
    assert teleop.feedback_features == {}
    with pytest.raises(DeviceNotConnectedError):
        teleop.get_action()
    teleop.connect()
    with pytest.raises(DeviceAlreadyConnectedError):
        teleop.connect()
    action = teleop.get_action()
    assert list(action) == list(robot.action_features)
    teleop.send_feedback({})
    teleop.disconnect()
    assert not teleop.is_connected


@pytest.mark.parametrize("hand", ["linkerhand_o6", "linkerhand_l10", "linkerhand_l20"])
@pytest.mark.parametrize("stream, retargeting", [("open_close", "auto"), ("open_close", "joint_mapping"),
                                                 ("glove_open_close", "auto")])
def test_hand_closes_within_limits(hand, stream, retargeting):
    """Sweeping a whole open/close stream, the hand's flexion joints span most of their range, never past it."""
    teleop = TeledexReplay(TeledexReplayConfig(stream=stream, hand_model=hand, retargeting=retargeting))
    teleop.connect()
    part = teleop.rig.parts["hand"]
    actions = []
    for index in range(0, len(teleop.stream), 5):
        teleop._start_ns = time.monotonic_ns() - int(teleop.stream.timestamps_ns[index])
        actions.append(_values(teleop.get_action(), part.keys))
    actions = np.array(actions)
    assert np.all(actions >= part.lower - 1e-9) and np.all(actions <= part.upper + 1e-9)
    flexion = [i for i, j in enumerate(part.joints) if j.endswith("_mcp_pitch") and not j.startswith("thumb")]
    spans = (actions[:, flexion].max(0) - actions[:, flexion].min(0)) / (part.upper - part.lower)[flexion]
    assert np.all(spans > 0.6), spans


def test_plays_in_real_time_and_loops():
    # joint mapping is memoryless, so the wrapped-around action equals the first one exactly
    teleop = TeledexReplay(TeledexReplayConfig(stream="open_close", hand_model="linkerhand_o6", speed=4.0,
                                               retargeting="joint_mapping"))
    teleop.connect()
    keys = teleop.rig.action_keys
    first = _values(teleop.get_action(), keys)
    time.sleep(0.5)  # 2 s of stream at speed 4: the hand has started closing
    later = _values(teleop.get_action(), keys)
    assert not np.allclose(first, later)
    captured = teleop.sample_capture_ns
    assert 0 <= time.monotonic_ns() - captured < 50e6
    # exactly one stream length later, replay has wrapped to the start
    teleop._start_ns = time.monotonic_ns() - int((teleop.stream.timestamps_ns[-1] + 1) / 4.0)
    assert np.allclose(_values(teleop.get_action(), keys), first, atol=0.05)


def test_hold_at_end_without_loop():
    teleop = TeledexReplay(TeledexReplayConfig(stream="open_close", hand_model="linkerhand_o6", loop=False))
    teleop.connect()
    teleop._start_ns -= int(teleop.stream.timestamps_ns[-1]) * 2
    keys = teleop.rig.action_keys
    for _ in range(5):  # the retargeter converges onto the held frame from wherever it started
        teleop.get_action()
    # re-solving the same held frame from its own solution moves by at most the solver's step tolerance
    assert np.allclose(_values(teleop.get_action(), keys), _values(teleop.get_action(), keys), atol=1e-2)


def test_arm_follows_wrist_motion():
    """The arm's mount frame moves with the replayed wrist: the same displacement, within IK tolerance."""
    teleop = TeledexReplay(TeledexReplayConfig(stream="wrist_motion"))
    teleop.connect()
    arm = teleop.rig.parts["arm"]
    stream = teleop.stream
    teleop._start_ns = time.monotonic_ns()
    start = _values(teleop.get_action(), arm.keys)
    start_pose = arm.model.frame_pose(arm.full_configuration(start), arm.mount_frame)
    errors = []
    for index in range(1, len(stream), 10):
        teleop._start_ns = time.monotonic_ns() - int(stream.timestamps_ns[index])
        q = _values(teleop.get_action(), arm.keys)
        pose = arm.model.frame_pose(arm.full_configuration(q), arm.mount_frame)
        wrist_delta = stream.wrist_pose[index, :3] - stream.wrist_pose[0, :3]
        errors.append(np.linalg.norm((pose[:3, 3] - start_pose[:3, 3]) - wrist_delta))
    assert max(errors) < 2e-3, max(errors)


def test_drives_sim_hand_robot():
    robot = TeledexHand(TeledexHandConfig(backend="sim"))
    teleop = TeledexReplay(TeledexReplayConfig(stream="open_close", hand_model="linkerhand_o6", speed=3.0))
    robot.connect()
    teleop.connect()
    try:
        keys = list(robot.action_features)
        seen = []
        deadline = time.monotonic() + 2.5
        while time.monotonic() < deadline:
            robot.send_action(teleop.get_action())
            seen.append(_values(robot.get_observation(), keys))
            time.sleep(0.02)
        seen = np.array(seen)
        assert np.ptp(seen[:, keys.index("hand_index_mcp_pitch.pos")]) > 1.0  # the real index finger closed
    finally:
        robot.disconnect()
        teleop.disconnect()


def test_auto_retargeting_picks_the_method_for_the_stream():
    keypoints = TeledexReplay(TeledexReplayConfig(stream="open_close", hand_model="linkerhand_l20"))
    glove = TeledexReplay(TeledexReplayConfig(stream="glove_open_close", hand_model="linkerhand_l20"))
    keypoints.connect()
    glove.connect()
    assert keypoints.mapper.retargeting == "teledex"
    assert glove.mapper.retargeting == "joint_mapping"


def test_keypoint_method_on_glove_stream_is_rejected():
    teleop = TeledexReplay(TeledexReplayConfig(stream="glove_open_close", hand_model="linkerhand_o6",
                                               retargeting="teledex"))
    with pytest.raises(ValueError, match="needs hand keypoints.*joint_mapping"):
        teleop.connect()


def test_unknown_retargeting_method():
    with pytest.raises(ValueError, match="retargeting must be one of"):
        TeledexReplayConfig(retargeting="magic")
