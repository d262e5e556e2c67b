"""The MuJoCo world: builds from every preset and from a URDF it has never seen; mimic couplings hold; an episode
replayed with the same seed and actions ends the same; the env speaks lerobot-eval's names."""

import numpy as np
import pytest

from teledex_lerobot.paths import PRESETS_DIR
from teledex_lerobot.presets import PartSpec, load_preset
from teledex_lerobot.rig import Rig
from teledex_lerobot.world.tasks import TASKS
from teledex_lerobot.world.world import World, WorldConfig

UNSEEN_ARM = """<?xml version="1.0"?>
<robot name="two_link_pincer">
  <link name="base"/><link name="upper"/><link name="fore"/><link name="jaw_a"/><link name="jaw_b"/>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="upper"/>
    <origin xyz="0 0 0.1"/><axis xyz="0 1 0"/><limit lower="-1" upper="1" velocity="2" effort="20"/></joint>
  <joint name="elbow" type="revolute"><parent link="upper"/><child link="fore"/>
    <origin xyz="0 0 0.25"/><axis xyz="0 1 0"/><limit lower="-2" upper="2" velocity="2" effort="10"/></joint>
  <joint name="jaw" type="prismatic"><parent link="fore"/><child link="jaw_a"/>
    <origin xyz="0 0.02 0.2"/><axis xyz="0 1 0"/><limit lower="0" upper="0.03" velocity="0.1" effort="5"/></joint>
  <joint name="jaw_mirror" type="prismatic"><parent link="fore"/><child link="jaw_b"/>
    <origin xyz="0 -0.02 0.2"/><axis xyz="0 1 0"/><limit lower="-0.03" upper="0" velocity="0.1" effort="5"/>
    <mimic joint="jaw" multiplier="-1" offset="0"/></joint>
</robot>
"""


@pytest.mark.parametrize("preset", sorted(p.stem for p in PRESETS_DIR.glob("*.yaml")))
@pytest.mark.parametrize("task", sorted(TASKS))
def test_world_builds_for_every_preset(preset, task):
    rig = Rig.from_preset(load_preset(preset))
    world = World(rig, WorldConfig(task=task))
    assert [s.key for s in world.servos] == rig.action_keys  # actuators in the robot's action order
    hand = rig.parts["hand"]
    mimics = len(hand.model.description.resolved_mimics)
    assert world.model.neq == mimics
    world.step(world.steps_for(0.5))
    for role, part in rig.parts.items():  # servos hold the home pose against gravity
        np.testing.assert_allclose(world.joint_positions(role), part.home, atol=2e-3)


def test_unseen_urdf_builds_with_mimic_and_velocity_limited_servos(tmp_path):
    path = tmp_path / "pincer.urdf"
    path.write_text(UNSEEN_ARM)
    rig = Rig.from_parts(arm=PartSpec(str(path)), hand=None)
    world = World(rig, WorldConfig(task="cube_assembly"))
    assert [s.key for s in world.servos] == ["arm_shoulder.pos", "arm_elbow.pos", "arm_jaw.pos"]
    assert world.model.neq == 1
    world.set_targets("arm", np.array([0.8, 0.0, 0.03]))
    world.step(world.steps_for(0.2))
    q = world.joint_positions("arm")
    assert q[0] <= 2.0 * 0.2 + 1e-3  # no faster than the URDF's 2 rad/s
    world.step(world.steps_for(1.0))
    q = world.joint_positions("arm")
    assert q[0] == pytest.approx(0.8, abs=5e-3)
    mirror = world.data.qpos[world.model.joint("arm/jaw_mirror").qposadr[0]]
    assert mirror == pytest.approx(-q[2], abs=1e-3)  # the mimic equality holds


def test_replay_with_the_same_seed_reproduces_the_episode():
    from teledex_lerobot.world.gym_env import TeledexWorldEnv

    env = TeledexWorldEnv(task="cube_assembly")
    observation, _ = env.reset(seed=7)
    rng = np.random.default_rng(0)
    home = observation["agent_pos"]
    actions = [home + rng.normal(0, 0.05, 12) for _ in range(40)]
    first = [env.step(a)[0]["agent_pos"] for a in actions]
    env.reset(seed=7)
    second = [env.step(a)[0]["agent_pos"] for a in actions]
    np.testing.assert_array_equal(np.array(first), np.array(second))
    other, _ = env.reset(seed=8)
    assert not np.allclose(other["environment_state"], observation["environment_state"], atol=1e-3)  # new layout
    env.close()


def test_env_config_maps_to_dataset_feature_names():
    import lerobot_robot_teledex  # noqa: F401  (registers --env.type=teledex)
    from lerobot.envs.factory import make_env_config
    from lerobot.envs.utils import env_to_policy_features

    cfg = make_env_config("teledex", task="bottle_peg_in_hole", obs_type="pixels_agent_pos")
    features = env_to_policy_features(cfg)
    assert features["observation.state"].shape == (12,)
    assert features["observation.environment_state"].shape == (7,)
    assert features["observation.images.top"].shape == (3, 240, 320)
    assert features["action"].shape == (12,)
