"""A training copy acting in each hand's pose (teledex-convert to-hand-pose): its action is each arm's hand pose by
forward kinematics of the recorded joint target, beside those joints; its state the measured joints and the hand's
measured pose; only the columns a policy reads; stats for the new values; it loads in LeRobotDataset, and a preset
the recording was not made with is refused before anything is written. The recording is left as it was."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from commands import command, run_main
from commands import run as run_command
from lerobot.configs.dataset import DatasetRecordConfig
from lerobot.datasets.lerobot_dataset import LeRobotDataset
from test_corrupted_inputs import snapshot

from lerobot_robot_teledex import TeledexConfig
from lerobot_teleoperator_teledex.world_expert import TeledexWorldExpertConfig
from teledex_lerobot.cli import convert
from teledex_lerobot.recording.recorder import Recorder, TeledexRecordConfig
from teledex_lerobot.world.hand_pose_actions import hand_pose_actions_for
from teledex_lerobot.world.world import LOCKSTEP, WorldConfig

PRESET = "piper_linkerhand_o6_single"
FRAMES = 25


@pytest.fixture(scope="module")
def recording(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("hand_pose") / "cube"
    Recorder(TeledexRecordConfig(
        robot=TeledexConfig(backend="mujoco", preset=PRESET, preset_cameras=False,
                            world=WorldConfig(seed=0, clock=LOCKSTEP)),
        teleop=TeledexWorldExpertConfig(), settle_s=-1,
        dataset=DatasetRecordConfig(repo_id="local/cube", root=str(root), single_task="cube", fps=25,
                                    episode_time_s=FRAMES / 25, reset_time_s=0, num_episodes=2, push_to_hub=False,
                                    video=False))).run()
    return root


def run(argv: list[str], capsys) -> tuple[int, str]:
    return run_main(convert.main, argv, capsys)


def frames(root: Path) -> pd.DataFrame:
    return pd.concat([pd.read_parquet(path) for path in sorted((root / "data").glob("*/*.parquet"))])


def test_the_copy_acts_in_hand_poses_and_keeps_what_a_policy_reads(recording, tmp_path, capsys):
    before = snapshot(recording)
    target = tmp_path / "hand_pose"
    target.mkdir()  # an empty folder is a new one
    code, out = run(["to-hand-pose", str(recording), str(target), "--repo-id", "local/cube_hp", "--preset", PRESET],
                    capsys)
    assert code == 0, out
    assert snapshot(recording) == before
    space = hand_pose_actions_for(PRESET)
    source, copy = frames(recording), frames(target)
    assert set(copy.columns) == {"action", "observation.state", "observation.environment_state", "timestamp",
                                 "frame_index", "episode_index", "index", "task_index"}
    joints_action = np.stack(source["action"].to_numpy())
    joints_state = np.stack(source["observation.state"].to_numpy())
    assert np.allclose(np.stack(copy["action"].to_numpy()), space.from_joints(joints_action), atol=1e-5)
    state = np.stack(copy["observation.state"].to_numpy())
    assert np.allclose(state[:, :joints_state.shape[1]], joints_state)
    assert np.allclose(state[:, joints_state.shape[1]:], space.measured_poses(joints_state), atol=1e-5)
    # the hand moved in the recording, and the pose says so in metres
    assert np.ptp(state[:, joints_state.shape[1]:joints_state.shape[1] + 3], axis=0).max() > 0.02
    dataset = LeRobotDataset("local/cube_hp", root=target)
    assert dataset.meta.features["action"]["names"] == space.action_names
    assert dataset.meta.features["observation.state"]["names"] == [*space.joint_names, *space.state_names]
    assert np.asarray(dataset.meta.stats["action"]["mean"]).shape == (len(space.action_names),)
    assert np.allclose(dataset.meta.stats["action"]["mean"], np.stack(copy["action"].to_numpy()).mean(axis=0),
                       atol=1e-4)
    assert dataset[len(dataset) - 1]["action"].shape == (len(space.action_names),)
    assert dataset.meta.total_episodes == 2 and dataset.meta.total_frames == 2 * FRAMES


def test_a_preset_the_recording_was_not_made_with_is_refused(recording, tmp_path, capsys):
    target = tmp_path / "wrong"
    code, out = run(["to-hand-pose", str(recording), str(target), "--repo-id", "local/wrong", "--preset",
                     "bimanual_piper_linkerhand_l10"], capsys)
    assert code != 0
    assert "is not the joints of preset 'bimanual_piper_linkerhand_l10'" in out and "--preset" in out
    assert not target.exists() and not list(tmp_path.glob(".wrong.*"))


def test_lerobot_trains_on_the_copy_and_evaluates_in_hand_poses(recording, tmp_path, capsys):
    """lerobot-train as it is on the copy; lerobot-eval with --env.action_space=hand_pose runs what it learnt: the
    policy's features and the env's meet (the hand poses turned into joint targets: tests/world)."""
    target = tmp_path / "hand_pose"
    code, out = run(["to-hand-pose", str(recording), str(target), "--repo-id", "local/cube_hp", "--preset", PRESET],
                    capsys)
    assert code == 0, out
    train = tmp_path / "train"
    run_command(command("lerobot-train", "--dataset.repo_id=local/cube_hp", f"--dataset.root={target}",
                        "--policy.type=act", "--policy.device=cpu", "--policy.push_to_hub=false",
                        "--policy.pretrained_backbone_weights=null", "--policy.dim_model=32",
                        "--policy.dim_feedforward=64", "--policy.n_encoder_layers=1", "--policy.n_decoder_layers=1",
                        "--policy.use_vae=false", "--policy.chunk_size=5", "--policy.n_action_steps=5", "--steps=2",
                        "--batch_size=4", "--num_workers=0", "--save_freq=2", "--wandb.enable=false",
                        f"--output_dir={train}"), tmp_path)
    evaluated = tmp_path / "eval"
    output = run_command(command("lerobot-eval", "--env.type=teledex", "--env.task=cube_assembly",
                                 f"--env.preset={PRESET}", "--env.action_space=hand_pose", "--env.episode_length=10",
                                 f"--policy.path={train}/checkpoints/000002/pretrained_model", "--policy.device=cpu",
                                 "--eval.n_episodes=1", "--eval.batch_size=1", "--seed=1000",
                                 f"--output_dir={evaluated}"), tmp_path)
    assert "'n_episodes': 1" in output and (evaluated / "eval_info.json").exists()
