"""The composite robot `linker_a7_linkerhand_l10_single` with backend=real, through linkerbot's A7 and our L10
driver against both simulators: the same features as backend=sim, and it moves."""

import pytest
from device_harness import RELAXED_FEEDBACK_TIMEOUT_MS, unique_channel, wait_until

from lerobot_robot_teledex.robots.config_teledex import TeledexConfig
from lerobot_robot_teledex.robots.teledex_robot import Teledex
from teledex_lerobot.can.port import CanPortConfig
from teledex_lerobot.devices.linker_a7.simulator import A7SimConfig, A7Simulator
from teledex_lerobot.devices.linkerhand.simulator import LinkerHandSimConfig, LinkerHandSimulator

PRESET = "linker_a7_linkerhand_l10_single"


@pytest.fixture
def real_robot():
    arm_channel, hand_channel = unique_channel("a7-robot-arm"), unique_channel("a7-robot-hand")
    config = TeledexConfig(preset=PRESET, backend="real")  # + its render camera
    config.real.arm = CanPortConfig("virtual", arm_channel)
    config.real.hand = CanPortConfig("virtual", hand_channel)
    config.real.feedback_timeout_ms = RELAXED_FEEDBACK_TIMEOUT_MS  # not a fault-detection test
    with A7Simulator(A7SimConfig(channel=arm_channel, initial_positions=(0.4, 0, 0, 1.2, 0, 0, 0))), \
            LinkerHandSimulator(LinkerHandSimConfig(model="linkerhand_l10", channel=hand_channel)):
        robot = Teledex(config)
        robot.connect()
        try:
            yield robot
        finally:
            if robot.is_connected:
                robot.disconnect()


def test_same_features_as_sim_and_it_moves(real_robot):
    robot = real_robot
    sim_robot = Teledex(TeledexConfig(preset=PRESET, backend="sim"))
    assert robot.observation_features == sim_robot.observation_features
    assert robot.action_features == sim_robot.action_features
    observation = robot.get_observation()
    assert set(observation) == set(robot.observation_features)
    assert observation["arm_Right_Elbow_Pitch_Joint.pos"] == pytest.approx(1.2, abs=1e-6)
    action = {key: observation[key] for key in robot.action_features}
    action["arm_Right_Shoulder_Yaw_Joint.pos"] = 0.2
    action["hand_index_mcp_pitch.pos"] = 1.0

    def moved():
        robot.send_action(action)
        measured = robot.get_observation()
        return (abs(measured["arm_Right_Shoulder_Yaw_Joint.pos"] - 0.2) < 1e-3
                and abs(measured["hand_index_mcp_pitch.pos"] - 1.0) < 0.01)
    assert wait_until(moved, 5.0, period_s=0.02)
    assert all(device.fault() is None for device in robot.devices.values())
