"""The station (teledex_lerobot/station.py): what a robot shares with the teleoperators of its process goes to its own
station, found by the name both configs give (--robot.station, --teleop.station), and nowhere else."""

import gc

import numpy as np
import pytest

from lerobot_robot_teledex import (
    Teledex,
    TeledexConfig,
    TeledexFollowers,
    TeledexFollowersConfig,
    TeledexHand,
    TeledexHandConfig,
)
from lerobot_robot_teledex.sync_validated import SyncValidatedRobot
from lerobot_teleoperator_teledex import (
    TeledexReplay,
    TeledexReplayConfig,
    TeledexWorldExpert,
    TeledexWorldExpertConfig,
)
from teledex_lerobot.capabilities import FaultReportingRobot
from teledex_lerobot.errors import ConfigError
from teledex_lerobot.station import find_station, join_station
from teledex_lerobot.viewer.headset import RobotScene
from teledex_lerobot.world.world import LOCKSTEP, WorldConfig

HAND = "linkerhand_l10"


def hand(station: str) -> TeledexHand:
    return TeledexHand(TeledexHandConfig(model=HAND, backend="fake", station=station))


def test_two_robots_in_one_process_do_not_see_each_others_measured_pose():
    """Two hands of one model in one process (keys alike): each teleoperator reads its own robot's pose."""
    left, right = hand("left"), hand("right")
    teleops = {name: TeledexReplay(TeledexReplayConfig(replay_file="open_close", station=name))
               for name in ("left", "right")}
    left.connect()
    right.connect()
    for teleop in teleops.values():
        teleop.connect()
    try:
        keys = list(left.action_features)
        moved = left.get_observation()
        moved[keys[0]] += 0.05  # within one command's safety step
        left.send_action(moved)
        poses = {"left": left.get_observation(), "right": right.get_observation()}
        assert poses["left"][keys[0]] != pytest.approx(poses["right"][keys[0]])
        for name, teleop in teleops.items():
            assert teleop.station is {"left": left, "right": right}[name].station
            measured = teleop.station.read_measured(keys, since_ns=0)
            np.testing.assert_allclose(measured, [poses[name][key] for key in keys])
    finally:
        for device in (*teleops.values(), left, right):
            device.disconnect()


def test_a_teleoperator_drives_the_rig_of_the_robot_in_its_station():
    arm_hand = Teledex(TeledexConfig(backend="fake", preset_cameras=False, station="arm"))
    only_hand = hand("hand")
    assert TeledexReplay(TeledexReplayConfig(replay_file="open_close", station="arm")).action_features == \
        arm_hand.action_features
    assert TeledexReplay(TeledexReplayConfig(replay_file="open_close", station="hand")).action_features == \
        only_hand.action_features


def test_a_teleoperator_with_no_robot_in_its_station_says_so():
    teleop = TeledexReplay(TeledexReplayConfig(replay_file="open_close", station="nobody"))
    with pytest.raises(ValueError, match="No rig to drive: no TeleDex robot in station 'nobody'.*--teleop.preset"):
        teleop.action_features  # noqa: B018 (the rig is taken when first needed)
    with pytest.raises(ValueError, match="no TeleDex robot in station 'nobody'"):
        TeledexWorldExpert(TeledexWorldExpertConfig(station="nobody"))


def test_a_station_goes_with_its_robot_and_the_latest_robot_alive_is_found():
    first = hand("shared")
    second = hand("shared")
    assert find_station("shared") is second.station
    del second
    gc.collect()
    assert find_station("shared") is first.station
    del first
    gc.collect()
    assert find_station("shared") is None
    own = join_station("shared")  # a teleoperator with no robot: a station of its own, with no world
    with pytest.raises(ConfigError, match="No MuJoCo world is running in station 'shared'.*--robot.backend=mujoco"):
        own.world()


def test_the_world_is_in_its_robots_station_only_while_connected():
    robot = Teledex(TeledexConfig(backend="mujoco", preset_cameras=False, world=WorldConfig(clock="lockstep"),
                                  station="sim"))
    other = hand("elsewhere")
    expert = TeledexWorldExpert(TeledexWorldExpertConfig(station="sim"))
    assert expert.action_features == robot.action_features
    robot.connect()
    expert.connect()
    try:
        assert robot.world is not None and robot.station.world_runner is robot.world.runner is not None
        assert other.station.world_runner is None
        expert.get_action()  # reads the world of the robot in its station
    finally:
        expert.disconnect()
        robot.disconnect()
    assert robot.station.world_runner is None


def test_the_sync_wrapper_answers_the_fault_capability_for_any_robot():
    class Plain:  # a LeRobot robot with no device faults
        cameras: dict = {}

    wrapped = SyncValidatedRobot(Plain())
    assert isinstance(wrapped, FaultReportingRobot)
    assert wrapped.device_faults() == wrapped.active_faults() == wrapped.clear_faults() == {}
    faulty = SyncValidatedRobot(hand("faults"))
    assert isinstance(faulty.robot, FaultReportingRobot)


def test_a_robot_of_two_rigs_shows_the_operator_every_camera_and_both_rigs_where_they_stand():
    """teledex_followers in one world: the station's view holds every follower's cameras under the robot's names
    (each with its calibration), each rig's contacts and the first rig's objects, and the rigs' bases; the headset's
    drawing places each rig by its base."""
    robot = TeledexFollowers(TeledexFollowersConfig(preset="bimanual_piper_linkerhand_l10", backend="mujoco",
                                                    world=WorldConfig(task="handover", seed=3, clock=LOCKSTEP),
                                                    station="two"))  # lockstep: nothing moves between the reads
    robot.connect()
    try:
        robot.reset_episode(0)
        robot.get_observation()
        station = robot.station
        view = station.latest_view(since_ns=0)
        assert set(view.images) == set(robot.cameras) == {"left_top", "left_wrist", "right_wrist"}
        assert set(station.cameras) == set(robot.cameras)
        assert set(view.touching) == {"left_", "right_"}
        world = robot.world.running.world
        from_left = np.linalg.inv(world.base_pose("left"))
        np.testing.assert_allclose(view.objects["cube_top"].pose, from_left @ world.body_pose("cube_top"), atol=1e-9)
        np.testing.assert_allclose(station.rig_bases["right_"][:3, 3], [0.0, -0.5, 0.0], atol=1e-9)
        rigs = {name: follower.rig for name, follower in robot.robots.items()}
        scene = RobotScene(rigs, {name: station.rig_bases[f"{name}_"] for name in rigs})
        home = {name: {role: part.home for role, part in rig.parts.items()} for name, rig in rigs.items()}
        message = scene.message(home, home, {})
        assert [(rig["name"], rig["base"][7]) for rig in message["rigs"]] == [("left", 0.0), ("right", -0.5)]
        assert all(rig["measured"]["bones"] for rig in message["rigs"])
        assert [rig["name"] for rig in scene.body_message()["rigs"]] == ["left", "right"]
    finally:
        robot.disconnect()
