"""The replay teleoperator: a recorded input file through its device's parser and the same control chain as the live
device (state machine, stale hold, output chain), starting from the robot's measured pose.

Most tests step the chain on their own clock (`step_through`): each tick delivers the file's datagrams due by then
and asks for an action, so they judge the chain, not the machine's scheduling. One test checks real-time playback.
"""

import time

import numpy as np
import pytest
from lerobot.utils.errors import DeviceAlreadyConnectedError, DeviceNotConnectedError

from lerobot_robot_teledex import TeledexArm, TeledexArmConfig, TeledexHand, TeledexHandConfig
from lerobot_teleoperator_teledex import TeledexReplay, TeledexReplayConfig
from teledex_lerobot.control.state_machine import TeleopState
from teledex_lerobot.errors import UserError
from teledex_lerobot.inputs.datagram_file import read_datagrams
from teledex_lerobot.paths import STREAMS_DIR

PRESET = "piper_linkerhand_o6_single"

MS = 1_000_000


def values(actions, keys):
    return np.array([[action[k] for k in keys] for action in actions])


def step_through(teleop, rate_hz=50.0, seconds=None, start_ns=10**12):
    """Tick the teleop on a simulated clock over its replay file, feeding each datagram when it is due; the robot
    follows every command exactly. Returns the actions."""
    datagrams = read_datagrams(STREAMS_DIR / f"{teleop.config.replay_file}.datagrams.jsonl")[1]
    now = start_ns
    teleop.clock = lambda: now
    teleop.connect()
    teleop._source.stop()  # the file is fed below, on the simulated clock
    teleop.send_feedback(teleop.rig.join({role: part.home for role, part in teleop.rig.parts.items()}))
    duration_ns = datagrams[-1][0] if seconds is None else int(seconds * 1e9)
    actions, pending = [], list(datagrams)
    try:
        while now - start_ns <= duration_ns:
            while pending and pending[0][0] <= now - start_ns:
                teleop.receiver.handle(pending.pop(0)[1], now)
            actions.append(teleop.get_action())
            teleop.send_feedback(actions[-1])
            now += int(1e9 / rate_hz)
    finally:
        teleop.disconnect()
    return actions


def test_contract_keys_and_the_robot_it_drives():
    teleop = TeledexReplay(TeledexReplayConfig(replay_file="open_close", hand_model="linkerhand_o6"))
    robot = TeledexHand(TeledexHandConfig(backend="fake"))
    assert teleop.action_features == robot.action_features
    assert teleop.feedback_features == {}
    with pytest.raises(DeviceNotConnectedError):
        teleop.get_action()
    teleop.connect()
    with pytest.raises(DeviceAlreadyConnectedError):
        teleop.connect()
    with pytest.raises(UserError, match="measured pose is unknown"):
        teleop.get_action()  # no robot has told where it is: nothing is commanded
    robot.connect()
    try:
        robot.get_observation()  # a TeleDex robot publishes its measured pose
        assert list(teleop.get_action()) == list(robot.action_features)
    finally:
        teleop.disconnect()
        robot.disconnect()
    assert not teleop.is_connected


def test_the_file_names_its_parser_and_control():
    keypoints = TeledexReplay(TeledexReplayConfig(preset=PRESET, replay_file="demo_grasp"))
    glove = TeledexReplay(TeledexReplayConfig(preset=PRESET, replay_file="glove_open_close"))
    xr = TeledexReplay(TeledexReplayConfig(preset=PRESET, replay_file="xr_controller_reach"))
    assert (keypoints.parser, glove.parser, xr.parser) == ("keypoints", "udexreal", "xr_state")
    assert keypoints.followers[""].config.strategy.hand_method == "teledex"
    assert glove.followers[""].config.strategy.strategy == "direct"
    assert xr.followers[""].config.strategy.hand_method == "analog"
    overridden = TeledexReplay(TeledexReplayConfig(preset=PRESET, replay_file="demo_grasp", hand_method="dexpilot"))
    assert overridden.followers[""].config.strategy.hand_method == "dexpilot"


@pytest.mark.parametrize("hand", ["linkerhand_o6", "linkerhand_l10", "linkerhand_l20"])
@pytest.mark.parametrize("replay_file, hand_method", [("open_close", ""), ("open_close", "joint_mapping"),
                                                      ("glove_open_close", "")])
def test_hand_closes_within_limits(hand, replay_file, hand_method):
    """Over a whole open/close recording, the hand's flexion joints span most of their range, never past it."""
    teleop = TeledexReplay(TeledexReplayConfig(replay_file=replay_file, hand_model=hand, hand_method=hand_method))
    actions = step_through(teleop)
    part = teleop.rig.parts["hand"]
    q = values(actions, part.keys)
    assert np.all(q >= part.lower - 1e-9) and np.all(q <= part.upper + 1e-9)
    flexion = [i for i, j in enumerate(part.joints) if j.endswith("_mcp_pitch") and not j.startswith("thumb")]
    spans = (q[:, flexion].max(0) - q[:, flexion].min(0)) / (part.upper - part.lower)[flexion]
    assert np.all(spans > 0.6), spans


def test_arm_follows_the_wrist_square():
    """keypoints_hybrid: the arm's mount frame traces the wrist's 6 cm square, shaped by the dead zone (15 mm, off
    the displacement's length) and the gain (1.44): at the far corner, 6 cm x sqrt(2) from the anchor, the mount is
    (84.9 - 15) x 1.44 = 100.6 mm away along the diagonal, i.e. 71.1 mm along each side."""
    teleop = TeledexReplay(TeledexReplayConfig(preset=PRESET, replay_file="wrist_motion"))  # Piper + O6
    actions = step_through(teleop, seconds=5.4)
    arm = teleop.rig.parts["arm"]
    q = values(actions, arm.keys)
    mount = np.array([arm.model.frame_pose(arm.full_configuration(row), arm.mount_frame)[:3, 3] for row in q])
    assert teleop.state_machine.state == TeleopState.TELEOPERATION
    extent = np.ptp(mount, axis=0)
    corner = (0.06 * np.sqrt(2) - 0.015) * 1.44 / np.sqrt(2)
    assert extent[1:] == pytest.approx([corner, corner], abs=0.002), extent
    assert extent[0] < 0.002  # the square is in the y-z plane


def test_replay_ends_in_a_stale_hold():
    """At the end of a file played once, the input goes stale: the last command is held."""
    teleop = TeledexReplay(TeledexReplayConfig(replay_file="open_close", hand_model="linkerhand_o6",
                                               replay_loop=False))
    datagrams = read_datagrams(STREAMS_DIR / "open_close.datagrams.jsonl")[1]
    actions = step_through(teleop, seconds=datagrams[-1][0] / 1e9 + 1.0)
    last = values(actions[-20:], teleop.rig.action_keys)
    assert np.ptp(last, axis=0).max() == 0.0
    assert teleop.followers[""].stale


def test_plays_in_real_time():
    teleop = TeledexReplay(TeledexReplayConfig(replay_file="open_close", hand_model="linkerhand_o6",
                                               replay_speed=4.0))
    robot = TeledexHand(TeledexHandConfig(backend="fake"))
    robot.connect()
    teleop.connect()
    try:
        deadline = time.monotonic() + 10
        while teleop.receiver.packets < 30 and time.monotonic() < deadline:
            time.sleep(0.01)
        robot.get_observation()
        teleop.get_action()
        # the input sample behind the action arrived just now, from a file playing in real time
        assert 0 <= time.monotonic_ns() - teleop.sample_capture_ns < 2e9
        assert teleop.receiver.packets >= 30 and teleop.receiver.parse_failures == 0
    finally:
        teleop.disconnect()
        robot.disconnect()


def test_drives_a_sim_arm_robot():
    robot = TeledexArm(TeledexArmConfig(backend="sim"))
    teleop = TeledexReplay(TeledexReplayConfig(replay_file="wrist_motion", arm_model="piper", replay_speed=2.0))
    robot.connect()
    teleop.connect()
    try:
        keys = list(robot.action_features)
        seen = []
        deadline = time.monotonic() + 3.0
        while time.monotonic() < deadline:
            seen.append(values([robot.get_observation()], keys)[0])
            robot.send_action(teleop.get_action())
            time.sleep(0.02)
        assert np.ptp(np.array(seen), axis=0).max() > 0.02  # the real (simulated) arm moved
    finally:
        robot.disconnect()
        teleop.disconnect()


def test_an_operator_stream_converts_to_a_file_that_replays_identically(tmp_path):
    """teledex-convert stream-to-datagrams: the .npz operator stream becomes the recorded input file the replay
    plays; the shipped fixture was made the same way, so the two are the same datagrams."""
    from teledex_lerobot.cli.convert import main as convert

    target = tmp_path / "pinches.datagrams.jsonl"
    convert(["stream-to-datagrams", str(STREAMS_DIR / "pinches.npz"), str(target)])
    header, datagrams = read_datagrams(target)
    assert header["parser"] == "keypoints" and header["control"] == "keypoints_hybrid"
    assert datagrams == read_datagrams(STREAMS_DIR / "pinches.datagrams.jsonl")[1]
    assert TeledexReplay(TeledexReplayConfig(preset=PRESET, replay_file=str(target))).parser == "keypoints"


def test_keyboard_keys_step_the_state_machine_and_teledex_record_forwards_them():
    from teledex_lerobot.recording.loop import RecordingEvents

    # buttons only: no auto start
    teleop = TeledexReplay(TeledexReplayConfig(preset=PRESET, replay_file="xr_controller_reach"))
    machine = teleop.state_machine
    assert machine.state == TeleopState.EMERGENCY
    assert teleop.press_keyboard_key("z") and machine.state == TeleopState.ZERO_POS
    assert teleop.press_keyboard_key("t") and machine.state == TeleopState.TELEOPERATION
    assert teleop.press_keyboard_key("p") and machine.state == TeleopState.DOWN
    assert teleop.press_keyboard_key("e") and machine.state == TeleopState.EMERGENCY
    assert not teleop.press_keyboard_key("n")  # not a teleoperation key
    # teledex-record keeps its own keys and hands the others on
    events = RecordingEvents()
    assert events.on_key("n") and events.end_episode
    assert not events.on_key("z")


def test_the_rig_is_given_once_to_the_robot():
    """A teleoperator given no rig drives the robot's own (a single rig, or every follower); one given another rig is
    stopped, with both named, before it commands anything."""
    from lerobot_robot_teledex import TeledexFollowers, TeledexFollowersConfig

    hand = TeledexHand(TeledexHandConfig(model="linkerhand_l20", backend="fake"))
    teleop = TeledexReplay(TeledexReplayConfig(replay_file="open_close"))
    assert teleop.action_features == hand.action_features
    followers = TeledexFollowers(TeledexFollowersConfig(backend="fake", with_cameras=False))
    both = TeledexReplay(TeledexReplayConfig(replay_file="open_close", follower_controls={"left": "xr_left_hybrid"}))
    assert both.action_features == followers.action_features and set(both.followers) == {"left_", "right_"}
    del followers

    wrong = TeledexReplay(TeledexReplayConfig(replay_file="open_close", hand_model="linkerhand_o6"))
    hand.connect()
    wrong.connect()
    try:
        hand.get_observation()
        with pytest.raises(ValueError, match="different rigs.*Leave --teleop.preset"):
            wrong.get_action()
    finally:
        wrong.disconnect()
        hand.disconnect()


def test_teledex_record_refuses_a_mismatched_rig_before_creating_anything(tmp_path):
    from lerobot.configs.dataset import DatasetRecordConfig

    from lerobot_robot_teledex import TeledexConfig
    from teledex_lerobot.recording.recorder import Recorder, TeledexRecordConfig

    root = tmp_path / "dataset"
    config = TeledexRecordConfig(
        robot=TeledexConfig(backend="fake"),
        teleop=TeledexReplayConfig(replay_file="open_close", preset="linker_a7_linkerhand_l10_single"),
        dataset=DatasetRecordConfig(repo_id="local/rig", root=str(root), single_task="t", fps=25, episode_time_s=1,
                                    num_episodes=1, push_to_hub=False))
    with pytest.raises(ValueError, match="different rigs, and nothing was created"):
        Recorder(config)
    assert not root.exists() and not (tmp_path / "dataset_native").exists()


def test_a_teleoperator_built_before_its_robot_drives_the_robots_rig():
    """lerobot-teleoperate builds the teleoperator first: the rig is taken when it is first needed."""
    teleop = TeledexReplay(TeledexReplayConfig(replay_file="open_close"))
    hand = TeledexHand(TeledexHandConfig(model="linkerhand_l10", side="left", backend="fake"))
    assert teleop.action_features == hand.action_features
