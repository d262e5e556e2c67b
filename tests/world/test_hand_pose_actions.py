"""Actions as where each hand should be (world/hand_pose_actions.py): the arm's pose is the hand's by forward
kinematics, an action's pose wins over its joints (which only pick the IK's branch), and the world's expert, acting
through the env in that space, still hands the half over."""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from teledex_lerobot.errors import ConfigError
from teledex_lerobot.presets import load_preset
from teledex_lerobot.rig import Rig
from teledex_lerobot.world.bimanual_expert import HandoverExpert
from teledex_lerobot.world.gym_env import TeledexWorldEnv
from teledex_lerobot.world.hand_pose_actions import (
    POSE_AXES,
    HandPoseActions,
    hand_pose_actions_for,
    pose_from_values,
    pose_values,
)

PRESET = "bimanual_piper_linkerhand_l10"


@pytest.fixture(scope="module")
def space() -> HandPoseActions:
    return hand_pose_actions_for(PRESET)


def test_a_near_rotation_is_made_one():
    rng = np.random.default_rng(0)
    rotation = Rotation.random(random_state=0).as_matrix()
    pose = np.eye(4)
    pose[:3, :3], pose[:3, 3] = rotation, [0.1, -0.2, 0.3]
    noisy = pose_values(pose) + rng.normal(0, 0.02, len(POSE_AXES))
    made = pose_from_values(noisy)
    assert np.allclose(made[:3, :3] @ made[:3, :3].T, np.eye(3), atol=1e-9) and np.linalg.det(made[:3, :3]) > 0
    assert np.allclose(made[:3, :3], rotation, atol=0.05) and np.allclose(made[:3, 3], noisy[:3])
    assert np.allclose(pose_from_values(pose_values(pose)), pose)


def test_names_follow_the_recording(space):
    assert space.joint_names[:2] == ["left_arm_joint1.pos", "left_arm_joint2.pos"]
    assert space.action_names[:10] == [*(f"left_hand_pose_{axis}" for axis in POSE_AXES), "left_arm_joint1.pos"]
    assert len(space.action_names) == len(space.joint_names) + 2 * len(POSE_AXES)
    assert space.state_names[-1] == "right_hand_pose_r32"


def test_the_pose_decides_and_the_joints_only_start_the_ik(space):
    rng = np.random.default_rng(1)
    arms = {name: rig.parts["arm"] for name, rig in space.rigs.items()}
    joints = np.concatenate([np.concatenate([
        arm.home + rng.uniform(-0.3, 0.3, len(arm.joints)) * (arm.upper - arm.lower) / 4, space.rigs[name].parts[
            "hand"].home]) for name, arm in arms.items()])
    action = space.from_joints(joints)
    assert np.allclose(space.measured_poses(joints), np.concatenate(
        [action[:len(POSE_AXES)], action[len(action) // 2:len(action) // 2 + len(POSE_AXES)]]))
    # the action's joints 0.05 rad off the pose it gives: the targets put the hand at the pose, not at those joints
    hinted = action.copy()
    for start in (len(POSE_AXES), len(action) // 2 + len(POSE_AXES)):
        hinted[start:start + 6] += rng.choice([-0.05, 0.05], 6)
    targets = space.to_joints(hinted)
    solved = np.concatenate([targets[(name, role)] for name, rig in space.rigs.items() for role in rig.parts])
    reached = space.measured_poses(solved)
    wanted = space.measured_poses(joints)
    for rig in range(2):
        position = slice(rig * len(POSE_AXES), rig * len(POSE_AXES) + 3)
        assert np.linalg.norm(reached[position] - wanted[position]) < 1.5e-3
    assert np.abs(solved - joints).max() < 0.2  # the branch the joints gave, not another one


def test_a_rig_without_an_arm_is_refused():
    hand_only = Rig.from_parts(None, load_preset("piper_linkerhand_o6_single").hand)
    with pytest.raises(ConfigError, match="action_space=joints"):
        HandPoseActions({"": hand_only})


def test_the_expert_acting_in_hand_poses_hands_the_half_over():
    env = TeledexWorldEnv(task="handover", preset=PRESET, action_space="hand_pose")
    observation, _ = env.reset(seed=1000)
    joints = sum(len(part.joints) for part in env.world.parts.values())
    assert observation["agent_pos"].shape == (joints + 2 * len(POSE_AXES),)
    assert env.action_space.shape == (len(env.hand_poses.action_names),)
    expert = HandoverExpert({name: placed.rig for name, placed in env.world.rigs.items()})
    expert.reset(env.world)
    success = False
    for _ in range(int(env.world.task.episode_s * env.fps)):
        targets = expert.act(env.world)
        action = env.hand_poses.from_joints(np.concatenate([targets[key] for key in env.world.parts]))
        observation, _, success, _, info = env.step(action)
        if success:
            break
    env.close()
    assert success, info["stage"]


def test_an_unknown_action_space_is_refused_naming_both():
    with pytest.raises(ConfigError, match="joints .* or hand_pose"):
        TeledexWorldEnv(task="cube_assembly", action_space="end_effector")


def test_an_action_of_another_length_is_refused_saying_what_to_train_on(space):
    with pytest.raises(ConfigError, match="Expected 50 values .*got 32.*teledex-convert to-hand-pose"):
        space.to_joints(np.zeros(32))
