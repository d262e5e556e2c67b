"""The MuJoCo world: builds from every preset and from a URDF it has never seen; mimic couplings hold; the contact
model holds a grasped object 5 s; the scripted expert solves both tasks through the arm; an episode replayed with its
seed ends the same (and misses in another layout); the robot lays out an episode on the recorder's call and the
expert replans; object poses become observation.environment_state; lerobot-eval scores an episode (slow)."""

from pathlib import Path

import numpy as np
import pytest

from teledex_lerobot.paths import PRESETS_DIR
from teledex_lerobot.presets import PartSpec, load_preset
from teledex_lerobot.rig import Rig
from teledex_lerobot.world.tasks import ONE_RIG_TASKS
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


def _single_rig_presets() -> list[str]:
    """Every shipped preset that is one rig, and each follower rig of a preset of several (test_bimanual_world.py
    builds them together)."""
    names = []
    for path in sorted(PRESETS_DIR.glob("*.yaml")):
        followers = load_preset(path.stem).followers
        names += sorted(set(followers.values())) if followers else [path.stem]
    return sorted(set(names))


def test_followers_presets_are_covered_rig_by_rig():
    bimanual = load_preset("bimanual_piper_linkerhand_l10").followers
    assert set(bimanual.values()) <= set(_single_rig_presets())


@pytest.mark.parametrize("preset", _single_rig_presets())
@pytest.mark.parametrize("task", ONE_RIG_TASKS)
def test_world_builds_for_every_preset(preset, task):
    rig = Rig.from_preset(load_preset(preset))
    world = World(rig, WorldConfig(task=task))
    # actuators in the robot's action order
    assert [s.joint for s in world.servos] == [f"{role}/{joint}" for role, part in rig.parts.items()
                                               for joint in part.joints]
    assert [key for part in rig.parts.values() for key in part.keys] == rig.action_keys
    hand = rig.parts["hand"]
    mimics = len(hand.model.description.resolved_mimics)
    assert world.model.neq == mimics
    world.step(world.steps_for(0.5))
    touching = [world.model.geom(g).name for c in world.data.contact[:world.data.ncon] for g in (c.geom1, c.geom2)
                if world.model.geom(g).name.startswith(("arm/", "hand/"))]
    assert not touching  # the robot at home is clear of the table and the objects
    for role, part in rig.parts.items():  # servos hold the home pose against gravity
        np.testing.assert_allclose(world.joint_positions(role), part.home, atol=2e-3)


def test_unseen_urdf_builds_with_mimic_and_velocity_limited_servos(tmp_path):
    path = tmp_path / "pincer.urdf"
    path.write_text(UNSEEN_ARM)
    rig = Rig.from_parts(arm=PartSpec(str(path)), hand=None)
    world = World(rig, WorldConfig(task="cube_assembly"))
    assert [s.joint for s in world.servos] == ["arm/shoulder", "arm/elbow", "arm/jaw"]
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
    from lerobot.envs.factory import make_env_config
    from lerobot.envs.utils import env_to_policy_features

    import lerobot_robot_teledex  # noqa: F401  (registers --env.type=teledex)

    cfg = make_env_config("teledex", task="bottle_peg_in_hole", obs_type="pixels_agent_pos")
    features = env_to_policy_features(cfg)
    assert features["observation.state"].shape == (12,)
    assert features["observation.environment_state"].shape == (14,)  # the bottle and its base
    with_relations = env_to_policy_features(make_env_config("teledex", task="bottle_peg_in_hole",
                                                            observe_relations=True))
    assert with_relations["observation.environment_state"].shape == (17,)  # and the bottom from the opening
    assert features["observation.images.top"].shape == (3, 240, 320)
    assert features["action"].shape == (12,)


OBJECT = {"cube_assembly": "cube_top", "bottle_peg_in_hole": "bottle"}


@pytest.mark.parametrize("task", ONE_RIG_TASKS)
def test_world_contact_settings_hold_a_grasped_object_five_seconds(task):
    from teledex_lerobot.presets import PartSpec
    from teledex_lerobot.world.grasp_rig import LIFT_M, GraspRig
    from teledex_lerobot.world.grasps import grasp_for

    rig = GraspRig(PartSpec("linkerhand_o6"), task)  # the world's default contact model
    result = rig.trial(grasp_for("linkerhand_o6", task), OBJECT[task], hold_s=5.0)
    assert result.lifted_m > 0.9 * LIFT_M  # it came up with the hand
    assert result.slip_m < 0.005 and result.rotation_rad < np.radians(3)


@pytest.mark.parametrize("task", ONE_RIG_TASKS)
def test_scripted_expert_solves_the_task_through_the_arm(task):
    from teledex_lerobot.world.episode import run_expert_episode
    from teledex_lerobot.world.expert import ScriptedExpert

    rig = Rig.from_preset(load_preset("piper_linkerhand_o6_single"))
    world = World(rig, WorldConfig(task=task))
    expert = ScriptedExpert(rig, task)
    for seed in (11, 12):
        succeeded, _ = run_expert_episode(world, expert, seed)
        assert succeeded, f"seed {seed}"
        assert not world.hand_touches(OBJECT[task])  # success means the hand has let go


def test_recorded_episode_replayed_with_its_seed_reproduces_the_outcome():
    from teledex_lerobot.world.expert import ScriptedExpert
    from teledex_lerobot.world.gym_env import TeledexWorldEnv

    env = TeledexWorldEnv(task="cube_assembly")
    expert = ScriptedExpert(env.world.rig, "cube_assembly")
    env.reset(seed=5)
    expert.reset(env.world)
    actions, succeeded = [], False
    while not succeeded and len(actions) < 400:
        action = np.concatenate(list(expert.act(env.world).values()))
        actions.append(action)
        succeeded = env.step(action)[2]
    assert succeeded
    final = env.world.object_state()

    def replay(seed):
        env.reset(seed=seed)
        outcomes = [env.step(action)[2] for action in actions]
        return outcomes[-1], env.world.object_state()

    again, state = replay(5)
    assert again and np.array_equal(state, final)  # the same layout and actions: the same physics, bit for bit
    elsewhere, _ = replay(6)
    assert not elsewhere  # the same actions in another layout miss
    env.close()


def test_robot_reset_episode_lays_out_the_episode_and_the_expert_replans():
    from lerobot_robot_teledex import Teledex, TeledexConfig
    from lerobot_teleoperator_teledex.world_expert import TeledexWorldExpert, TeledexWorldExpertConfig

    robot = Teledex(TeledexConfig(backend="mujoco", preset_cameras=False))
    teleop = TeledexWorldExpert(TeledexWorldExpertConfig())
    teleop.connect()
    robot.connect()
    try:
        robot.send_action(teleop.get_action())  # the expert finds the world this process's robot runs
        world = robot.world.running.world
        world.set_targets("arm", robot.rig.parts["arm"].home + 0.3)  # the robot away from home
        assert robot.reset_episode(3) == 3  # world seed 0 + episode 3
        expected = World(robot.rig, WorldConfig(task="cube_assembly", seed=3))
        np.testing.assert_allclose(world.object_state(), expected.object_state(), atol=1e-4)  # (settling)
        np.testing.assert_allclose(robot.measured_positions()["arm"], robot.rig.parts["arm"].home, atol=0.01)
        assert teleop.episodes_started == 1
        teleop.get_action()
        assert teleop.episodes_started == 2  # the expert planned the new layout
    finally:
        robot.disconnect()
        teleop.disconnect()


def test_dataset_features_put_environment_state_apart():
    from teledex_lerobot.recording.lerobot_dataset import dataset_features
    from teledex_lerobot.storage.frame import FrameLayout

    layout = FrameLayout.from_features({"arm_j.pos": float, "cube_x": float, "cube_y": float}, {"arm_j.pos": float},
                                       (), [], 25, environment_names=["cube_x", "cube_y"])
    assert layout.state_names == ("arm_j.pos",)
    features = dataset_features(layout, use_video=False)
    assert features["observation.state"]["names"] == ["arm_j.pos"]
    assert features["observation.environment_state"]["names"] == ["cube_x", "cube_y"]


@pytest.mark.slow
def test_lerobot_eval_scores_one_episode_in_the_world(tmp_path):
    """lerobot-eval --env.type=teledex end to end, with an ACT checkpoint this test builds (untrained, normalised
    with statistics of a scripted rollout): the env speaks the policy's feature names and records a video."""
    import json

    import torch
    from commands import command, run
    from lerobot.configs.types import FeatureType, PolicyFeature
    from lerobot.policies.act.configuration_act import ACTConfig
    from lerobot.policies.act.modeling_act import ACTPolicy
    from lerobot.policies.factory import make_pre_post_processors

    from teledex_lerobot.world.expert import ScriptedExpert
    from teledex_lerobot.world.gym_env import TeledexWorldEnv

    env = TeledexWorldEnv(task="cube_assembly")
    observation, _ = env.reset(seed=0)
    expert = ScriptedExpert(env.world.rig, "cube_assembly")
    expert.reset(env.world)
    rows = {"observation.state": [], "observation.environment_state": [], "action": []}
    for _ in range(50):
        action = np.concatenate(list(expert.act(env.world).values()))
        rows["observation.state"].append(observation["agent_pos"])
        rows["observation.environment_state"].append(observation["environment_state"])
        rows["action"].append(action)
        observation = env.step(action)[0]
    env.close()
    stats = {key: {"mean": torch.tensor(np.mean(v, 0), dtype=torch.float32),
                   "std": torch.tensor(np.std(v, 0) + 1e-3, dtype=torch.float32)} for key, v in rows.items()}
    config = ACTConfig(device="cpu", dim_model=32, dim_feedforward=64, n_heads=2, n_encoder_layers=1,
                       n_decoder_layers=1, n_vae_encoder_layers=1, chunk_size=10, n_action_steps=10,
                       pretrained_backbone_weights=None,
                       input_features={"observation.state": PolicyFeature(FeatureType.STATE, (12,)),
                                       "observation.environment_state": PolicyFeature(FeatureType.ENV, (14,))},
                       output_features={"action": PolicyFeature(FeatureType.ACTION, (12,))})
    checkpoint = tmp_path / "checkpoint"
    ACTPolicy(config).save_pretrained(checkpoint)
    for processor in make_pre_post_processors(config, dataset_stats=stats):
        processor.save_pretrained(checkpoint)
    output = tmp_path / "eval"
    run(command("lerobot-eval", "--env.type=teledex", "--env.task=cube_assembly", "--env.episode_length=50",
                f"--policy.path={checkpoint}", "--policy.device=cpu", "--eval.n_episodes=1", "--eval.batch_size=1",
                f"--output_dir={output}"), tmp_path)
    overall = json.loads((output / "eval_info.json").read_text())["overall"]
    assert overall["n_episodes"] == 1 and 0.0 <= overall["pc_success"] <= 100.0
    assert all(Path(video).stat().st_size > 0 for video in overall["video_paths"])


@pytest.mark.slow
def test_world_demo_records_both_formats_and_its_recorded_episode_replays_to_success(tmp_path):
    """`make demo` (teledex-demo) end to end, then the recorded episode's actions, replayed in a fresh world
    with the episode's seed at the recorded frame times, assemble the cube again."""
    import pandas as pd
    from commands import command, run

    from teledex_lerobot.recording.conversions import lerobot_to_native, native_to_lerobot
    from teledex_lerobot.storage.native import load_native_episode, native_episode_dirs
    from teledex_lerobot.world.episode import EpisodeOutcome

    root = tmp_path / "demo"
    output = run(command("teledex-demo", "--episodes", "1", "--root", str(root)), tmp_path)
    assert "Native layout:" in output and "mean lag ms" in output  # paths and the sync report were printed
    native_root = Path(f"{root}_native")
    assert (native_root / "sync_report.png").stat().st_size > 10_000  # and its plots drawn
    assert (native_root / "sync_report_episodes" / "episode_000000.png").is_file()
    frames = pd.read_parquet(next((root / "data").glob("**/*.parquet")))
    [native] = [load_native_episode(d) for d in native_episode_dirs(f"{root}_native")]
    np.testing.assert_allclose(np.stack(frames["observation.environment_state"]),
                               native.telemetry["environment_state"], atol=1e-6)  # both formats, the same poses
    cameras = load_preset("piper_linkerhand_o6_single").cameras  # every camera of the preset, at its size
    assert {name: info.width for name, info in native.camera_info.items()} == \
        {name: camera["width"] for name, camera in cameras.items()}
    lerobot_to_native(root, tmp_path / "back_native", progress=lambda _: None)  # both conversions keep them
    native_to_lerobot(tmp_path / "back_native", tmp_path / "back_lerobot", "local/back", progress=lambda _: None)
    [back] = [load_native_episode(d) for d in native_episode_dirs(tmp_path / "back_native")]
    for key in ("environment_names", "environment_state"):
        assert np.array_equal(back.telemetry[key], native.telemetry[key]), key
    again = pd.read_parquet(next((tmp_path / "back_lerobot" / "data").glob("**/*.parquet")))
    assert np.array_equal(np.stack(again["observation.environment_state"]),
                          np.stack(frames["observation.environment_state"]))

    rig = Rig.from_preset(load_preset("piper_linkerhand_o6_single"))
    world = World(rig, WorldConfig(task="cube_assembly"))
    period_steps = world.steps_for(1 / 25)
    intervals_ns = np.diff(native.telemetry["frame_timestamps_ns"], prepend=native.telemetry["frame_timestamps_ns"][0])

    def replay(seed: int) -> bool:
        world.reset(seed)
        tracker = EpisodeOutcome(world)
        for action, interval_ns in zip(np.stack(frames["action"]), intervals_ns, strict=True):
            for role, q in rig.split_action(dict(zip(rig.action_keys, action, strict=True)), "replay").items():
                world.set_targets(role, q)
            world.step(max(period_steps, world.steps_for(interval_ns / 1e9)))
            tracker.update()
        return tracker.succeeded

    assert replay(0)  # world.seed 0 + episode 0: the recorded layout
    assert not replay(1)  # the same actions in another layout miss


def test_randomisation_is_seeded_recorded_restored_and_leaves_the_layout_alone():
    from teledex_lerobot.world.randomization import RandomizationConfig

    rig = Rig.from_preset(load_preset("piper_linkerhand_o6_single"))
    plain = World(rig, WorldConfig(task="cube_assembly"))
    varied = World(rig, WorldConfig(task="cube_assembly", randomize=RandomizationConfig(
        mass_scale=[0.5, 2.0], friction_scale=[0.7, 1.3], colors=True, lighting=True)))
    top = varied.model.body("cube_top").id
    nominal_mass = plain.model.body_mass[top]
    drawn = {}
    for seed in (4, 5, 4):
        plain.reset(seed)
        varied.reset(seed)
        assert np.array_equal(plain.object_state(), varied.object_state())  # the layout is the seed's, unchanged
        description = varied.episode_description()["randomization"]
        assert description["mass_kg"]["cube_top"] == pytest.approx(varied.model.body_mass[top], abs=1e-6)
        drawn.setdefault(seed, []).append(description)
    assert drawn[4][0] == drawn[4][1] != drawn[5][0]  # the same seed draws the same world
    assert varied.model.body_mass[top] != nominal_mass and 0.5 <= varied.model.body_mass[top] / nominal_mass <= 2
    assert set(drawn[4][0]["colors_rgb"]) == {"cube_top", "cube_bottom", "table"} and "light" in drawn[4][0]
    narrow = World(rig, WorldConfig(task="cube_assembly", randomize=RandomizationConfig(layout_spread=0.0)))
    narrow.reset(1)
    middle = narrow.object_state()
    narrow.reset(2)
    assert np.allclose(narrow.object_state(), middle)  # no spread: every layout the middle of the ranges
    with pytest.raises(ValueError, match="world.randomize.mass_scale"):
        RandomizationConfig(mass_scale=[2.0, 1.0]).validate()
