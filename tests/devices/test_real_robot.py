"""The composite robot with backend=real, through the unmodified vendor SDKs against the simulators: the same
features as backend=sim, motion through the safety filter, and a device fault that does not stop the loop."""

import time

import pytest
from device_harness import RELAXED_FEEDBACK_TIMEOUT_MS, unique_channel, wait_until
from piper_sdk import C_PiperInterface_V2

from lerobot_robot_teledex.robots.config_teledex import TeledexConfig, TeledexHandConfig
from lerobot_robot_teledex.robots.followers import TeledexFollowers, TeledexFollowersConfig
from lerobot_robot_teledex.robots.teledex_robot import Teledex, TeledexHand
from teledex_lerobot.can.port import CanPortConfig
from teledex_lerobot.devices.agilex.simulator import PiperSimConfig, PiperSimulator
from teledex_lerobot.devices.linkerhand.simulator import LinkerHandSimConfig, LinkerHandSimulator
from teledex_lerobot.devices.real_config import RigPorts

pytestmark = pytest.mark.filterwarnings("ignore:The .bustype. argument is deprecated:DeprecationWarning")


@pytest.fixture
def real_robot():
    C_PiperInterface_V2._instances.clear()
    arm_channel, hand_channel = unique_channel("robot-arm"), unique_channel("robot-hand")
    piper = PiperSimulator(PiperSimConfig(channel=arm_channel, initial_positions=(0, 1.0, -1.0, 0, 0.6, 0, 0)))
    hand = LinkerHandSimulator(LinkerHandSimConfig(model="linkerhand_o6", channel=hand_channel))
    piper.start()
    hand.start()
    config = TeledexConfig(preset="piper_linkerhand_o6_single", backend="real")  # + its render camera
    config.real.arm = CanPortConfig("virtual", arm_channel)
    config.real.hand = CanPortConfig("virtual", hand_channel)
    config.real.feedback_timeout_ms = RELAXED_FEEDBACK_TIMEOUT_MS  # not a fault-detection test
    robot = Teledex(config)
    robot.connect()
    yield robot, piper, hand
    if robot.is_connected:
        robot.disconnect()
    hand.stop()
    piper.stop()
    C_PiperInterface_V2._instances.clear()


def test_same_features_as_sim_and_it_moves(real_robot):
    robot, piper, hand = real_robot
    sim_robot = Teledex(TeledexConfig(preset="piper_linkerhand_o6_single", backend="sim"))
    assert robot.observation_features == sim_robot.observation_features
    assert robot.action_features == sim_robot.action_features
    observation = robot.get_observation()
    assert set(observation) == set(robot.observation_features)
    action = {key: observation[key] for key in robot.action_features}
    action["arm_joint1.pos"] = 0.2
    action["hand_index_mcp_pitch.pos"] = 1.0

    def moved():
        robot.send_action(action)
        measured = robot.get_observation()
        return abs(measured["arm_joint1.pos"] - 0.2) < 1e-3 and abs(measured["hand_index_mcp_pitch.pos"] - 1.0) < 0.01
    assert wait_until(moved, 5.0, period_s=0.02)
    assert all(device.fault() is None for device in robot.devices.values())


def test_a_device_fault_never_crashes_the_loop(real_robot):
    robot, piper, hand = real_robot
    hand.stop_replying()
    assert wait_until(lambda: robot.devices["hand"].fault() is not None, 3.0)
    observation = robot.get_observation()
    action = {key: observation[key] for key in robot.action_features}
    for _ in range(5):
        robot.send_action(action)
        robot.get_observation()
        time.sleep(0.01)
    assert robot.devices["arm"].fault() is None
    assert robot.devices["hand"].fault().kind == "feedback_timeout"
    assert list(robot.device_faults()) == ["hand"] and "hand" in robot.device_faults()["hand"].lower()
    # what send_action returns (and a recording stores) is what the hardware holds, not what was asked
    held = robot.devices["hand"].held_target()
    asked = dict(action, **{key: value + 0.1 for key, value in action.items() if key.startswith("hand_")})
    sent = robot.send_action(asked)
    assert [sent[key] for key in robot.rig.parts["hand"].keys] == pytest.approx(held.tolist())
    assert sent["arm_joint1.pos"] == pytest.approx(action["arm_joint1.pos"], abs=1e-9)
    hand.stop_replying(False)  # the operator fixes the hand and re-arms it once feedback is back

    def rearmed():
        robot.clear_faults()
        return robot.device_faults() == {}

    assert wait_until(rearmed, 3.0, period_s=0.05)
    time.sleep(0.2)
    assert robot.device_faults() == {}  # fresh feedback keeps it clear


def test_tactile_matrices_are_optional_observations():
    """With real.linkerhand.tactile, every taxel of the L10's 12x6 matrices is an observation; pressing rises as the
    fingers close. Off (the default), the features equal backend=sim's."""
    hand_channel = unique_channel("robot-tactile")
    hand = LinkerHandSimulator(LinkerHandSimConfig(model="linkerhand_l10", channel=hand_channel)).start()
    config = TeledexHandConfig(model="linkerhand_l10", backend="real")
    config.real.hand = CanPortConfig("virtual", hand_channel)
    config.real.linkerhand.tactile = True
    config.real.feedback_timeout_ms = RELAXED_FEEDBACK_TIMEOUT_MS
    robot = TeledexHand(config)
    try:
        assert len(robot.tactile_keys) == 5 * 12 * 6 and "hand_tactile_index_r11c5" in robot.observation_features
        l10 = TeledexHand(TeledexHandConfig(model="linkerhand_l10"))
        assert "hand_tactile_index_r0c0" not in l10.observation_features
        robot.connect()
        part = robot.rig.parts["hand"]
        closed = dict(zip(part.keys, part.upper, strict=True))

        def index_pressed():
            robot.send_action(closed)
            observation = robot.get_observation()
            return observation["hand_tactile_index_r11c5"] > 200

        assert wait_until(index_pressed, 5.0, period_s=0.02)
        assert set(robot.get_observation()) == set(robot.observation_features)
    finally:
        if robot.is_connected:
            robot.disconnect()
        hand.stop()


def test_followers_each_on_their_own_ports():
    """teledex_followers with backend=real: each follower's devices on the ports --robot.ports gives it."""
    C_PiperInterface_V2._instances.clear()
    channels = {name: (unique_channel(f"{name}-arm"), unique_channel(f"{name}-hand")) for name in ("left", "right")}
    sims = [PiperSimulator(PiperSimConfig(channel=channels["left"][0], initial_positions=(0.3, 1, -1, 0, 0, 0, 0))),
            PiperSimulator(PiperSimConfig(channel=channels["right"][0], initial_positions=(-0.3, 1, -1, 0, 0, 0, 0))),
            *[LinkerHandSimulator(LinkerHandSimConfig(model="linkerhand_o6", channel=channels[name][1]))
              for name in ("left", "right")]]
    for sim in sims:
        sim.start()
    config = TeledexFollowersConfig(followers={"left": "piper_linkerhand_o6_single",
                                               "right": "piper_linkerhand_o6_single"}, backend="real",
                                    with_cameras=False,
                                    ports={name: RigPorts(CanPortConfig("virtual", arm), CanPortConfig("virtual", hand))
                                           for name, (arm, hand) in channels.items()})
    config.real.feedback_timeout_ms = RELAXED_FEEDBACK_TIMEOUT_MS
    robot = TeledexFollowers(config)
    try:
        robot.connect()
        observation = robot.get_observation()
        assert observation["left_arm_joint1.pos"] == pytest.approx(0.3, abs=1e-4)
        assert observation["right_arm_joint1.pos"] == pytest.approx(-0.3, abs=1e-4)
        assert {robot.robots[name].devices["arm"].port.channel for name in channels} == \
            {arm for arm, _ in channels.values()}
    finally:
        if robot.is_connected:
            robot.disconnect()
        for sim in sims:
            sim.stop()
        C_PiperInterface_V2._instances.clear()


def test_followers_ports_are_checked_before_anything_connects():
    followers = {"left": "piper_linkerhand_o6_single", "right": "piper_linkerhand_o6_single"}
    with pytest.raises(ValueError, match="missing for right: --robot.ports="):
        TeledexFollowersConfig(followers=followers, backend="real", ports={"left": RigPorts()})
    shared = RigPorts(CanPortConfig("socketcan", "can0"), CanPortConfig("socketcan", "can1"))
    with pytest.raises(ValueError, match=r"socketcan:can0 \(left.arm and right.arm\)"):
        TeledexFollowersConfig(followers=followers, backend="real", ports={"left": shared, "right": shared})
    with pytest.raises(ValueError, match="names \\['middle'\\], which are not followers"):
        TeledexFollowersConfig(followers=followers, ports={"middle": RigPorts()})
