"""A world of several rigs (issue 33): a preset of several rigs builds in one world, each rig where the preset puts
it, one physics step for all; each rig's parts, bodies and wrist camera are its own; teledex_followers with
backend=mujoco runs its followers in that one world, lays out each episode once, and reports every part to the sync
check."""

import numpy as np
import pytest

from lerobot_robot_teledex.robots.followers import TeledexFollowers, TeledexFollowersConfig
from teledex_lerobot.errors import ConfigError
from teledex_lerobot.presets import DEFAULT_RIG_SPACING_M, RigPlacement, load_preset
from teledex_lerobot.rig import Rig
from teledex_lerobot.world.camera import WorldRenderer
from teledex_lerobot.world.world import PlacedRig, World, WorldConfig, placed_rigs

BIMANUAL = "bimanual_piper_linkerhand_l10"


def _bimanual_world(task: str = "cube_assembly") -> World:
    preset = load_preset(BIMANUAL)
    rigs = placed_rigs({name: Rig.from_preset(load_preset(follower)) for name, follower in preset.followers.items()},
                       preset.placements)
    return World(rigs, WorldConfig(task=task), {"top": "top", "left_wrist": "wrist", "right_wrist": "wrist"},
                 camera_rigs={"left_wrist": "left", "right_wrist": "right"})


def test_a_several_rig_preset_builds_in_one_world_each_rig_where_the_preset_puts_it():
    world = _bimanual_world()
    assert list(world.parts) == ["left/arm", "left/hand", "right/arm", "right/hand"]
    assert world.model.nu == 2 * (6 + 10)  # every servo of both rigs, rig by rig in action order
    assert [s.joint for s in world.servos[:7]] == [f"left/arm/joint{i}" for i in range(1, 7)] + \
        [f"left/hand/{world.parts['left/hand'].joints[0]}"]
    left, right = world.base_pose("left"), world.base_pose("right")
    assert left[:3, 3] == pytest.approx([0.0, 0.25, right[2, 3]]) and right[1, 3] == pytest.approx(-0.25)
    world.step(world.steps_for(0.5))
    touching = [world.model.geom(g).name for c in world.data.contact[:world.data.ncon] for g in (c.geom1, c.geom2)]
    assert not [name for name in touching if name.startswith(("left/", "right/"))]  # both clear of the table
    for key, part in world.parts.items():  # every rig's servos hold home through the one physics step
        np.testing.assert_allclose(world.joint_positions(key), part.home, atol=2e-3)
    with pytest.raises(ConfigError, match="several rigs"):
        _ = world.rig  # a world of several has no one rig: name it


def test_each_rig_moves_by_its_own_targets_only():
    world = _bimanual_world()
    home = {key: world.joint_positions(key) for key in world.parts}
    target = home["left/arm"] + [0.4, 0, 0, 0, 0, 0]
    world.set_targets("left/arm", target)
    world.step(world.steps_for(1.5))
    np.testing.assert_allclose(world.joint_positions("left/arm"), target, atol=5e-3)
    for key in ("left/hand", "right/arm", "right/hand"):
        np.testing.assert_allclose(world.joint_positions(key), home[key], atol=2e-3)


def test_each_wrist_camera_rides_on_its_own_rigs_hand_and_poses_are_in_that_rigs_frame():
    world = _bimanual_world()
    world.step(1)
    for rig in ("left", "right"):
        renderer = WorldRenderer(world, f"{rig}_wrist", 64, 48, rig)
        part, hand_from_camera = renderer.mount
        assert part == "hand"
        hand = world.body_pose(f"{rig}/hand/{world.parts[f'{rig}/hand'].model.description.root_link}")
        base_from_camera = np.linalg.inv(world.base_pose(rig)) @ hand @ hand_from_camera
        np.testing.assert_allclose(renderer.base_from_camera, base_from_camera, atol=1e-9)
    top = WorldRenderer(world, "top", 64, 48, "right")
    np.testing.assert_allclose(top.base_from_camera[1, 3] - WorldRenderer(world, "top", 64, 48, "left")
                               .base_from_camera[1, 3], 0.5, atol=1e-9)  # one camera, seen from each base


def test_rigs_need_names_and_a_wrist_camera_needs_its_rig():
    rig = Rig.from_preset(load_preset("piper_linkerhand_o6_single"))
    with pytest.raises(ConfigError, match="names without '/'"):
        World({"": PlacedRig(rig), "right": PlacedRig(rig, (0, -0.5, 0))})
    with pytest.raises(ConfigError, match="which rig's wrist"):
        World({"left": PlacedRig(rig, (0, 0.25, 0)), "right": PlacedRig(rig, (0, -0.25, 0))},
              cameras={"wrist": "wrist"})


def test_followers_without_placements_stand_in_a_row_and_placements_name_followers(tmp_path):
    rig = Rig.from_preset(load_preset("piper_linkerhand_o6_single"))
    placed = placed_rigs({"a": rig, "b": rig, "c": rig}, {"c": RigPlacement((0.1, -2.0, 0.0), 0.5)})
    assert [p.xyz_m[1] for p in placed.values()] == [DEFAULT_RIG_SPACING_M, 0.0, -2.0]
    assert placed["c"].yaw_rad == 0.5
    preset = tmp_path / "pair.yaml"
    preset.write_text("followers: {left: piper_linkerhand_o6_single}\nplacements: {right: {xyz_m: [0, 0, 0]}}\n")
    with pytest.raises(ConfigError, match=r"'placements' names \['right'\], which are not followers"):
        load_preset(str(preset))


def test_followers_share_one_world_lay_out_each_episode_once_and_report_every_part():
    config = TeledexFollowersConfig(preset=BIMANUAL, backend="mujoco")
    config.world.clock = "lockstep"
    robot = TeledexFollowers(config)
    # one top view (the followers' shared fixed view) beside each hand's wrist camera
    assert sorted(robot.cameras) == ["left_top", "left_wrist", "right_wrist"]
    robot.connect()
    try:
        world = robot.world.running.world
        assert all(follower.world.running.world is world for follower in robot.robots.values())
        assert robot.reset_episode(3) == 3 and world.episode_index == 2  # laid out once (connect's own reset: 1)
        observation = robot.get_observation()
        assert [key for key in observation if key.endswith("_x")] == ["left_cube_top_x", "left_cube_bottom_x"]
        assert set(robot.capture_timestamps_ns()) == {"left_arm", "left_hand", "right_arm", "right_hand"}
        assert not np.array_equal(observation["left_wrist"], observation["right_wrist"])
        action = {key: observation[key] for key in robot.action_features}
        action["left_arm_joint1.pos"] += 0.3
        for _ in range(40):
            robot.send_action(action)
            robot.world.advance(40_000_000)
        moved = robot.get_observation()
        changed = {key for key in robot.action_features if abs(moved[key] - observation[key]) > 1e-3}
        assert changed == {"left_arm_joint1.pos"}  # the left input moves the left rig only
    finally:
        robot.disconnect()
