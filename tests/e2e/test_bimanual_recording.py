"""A two-rig world recorded by teledex-record (issue 33, in-process): teledex_followers with backend=mujoco and the
world expert teleoperator hand the half cube over in lockstep; one dataset holds both rigs' keys, prefixed, in both
formats, every part a sync source of its own, the success labelled; the recovery perturbations reach both rigs; a
layout the expert cannot plan is a failed attempt, not a crash."""

from pathlib import Path

import numpy as np
import pandas as pd
from lerobot.configs.dataset import DatasetRecordConfig

from lerobot_robot_teledex.robots.followers import TeledexFollowersConfig
from lerobot_teleoperator_teledex.world_expert import TeledexWorldExpertConfig
from teledex_lerobot.recording.recorder import Recorder, TeledexRecordConfig
from teledex_lerobot.storage.native import load_native_episode, native_episode_dirs
from teledex_lerobot.world.perturbation import PerturbationConfig
from teledex_lerobot.world.world import LOCKSTEP, WorldConfig

FPS = 25


def test_a_handover_records_both_rigs_in_one_dataset(tmp_path: Path, caplog):
    # layout 73 is one the expert cannot plan (the right arm does not reach over its bottom half): that attempt holds
    # still and fails, and the session goes on to layout 74 (it crashed teledex-record before)
    robot = TeledexFollowersConfig(preset="bimanual_piper_linkerhand_l10", backend="mujoco", with_cameras=False,
                                   world=WorldConfig(task="handover", seed=73))
    # every episode perturbed (the L10's pinch drops the half at the one-rig loop's 0.03 rad of finger noise)
    perturbation = PerturbationConfig(arm_std_rad=0.01, hand_std_rad=0.01, episode_share=1.0)
    root = tmp_path / "handover"
    recorder = Recorder(TeledexRecordConfig(
        robot=robot, teleop=TeledexWorldExpertConfig(perturbation=perturbation),
        dataset=DatasetRecordConfig(repo_id="local/handover", root=str(root), single_task="handover", fps=FPS,
                                    episode_time_s=30, reset_time_s=0, num_episodes=1, push_to_hub=False,
                                    video=False), keep="successes"))
    assert recorder.run() == 1
    assert "layout seed 73: The right arm does not reach over the bottom half" in caplog.text
    assert recorder.robot.robot.config.world.clock == LOCKSTEP  # auto: a scripted input drives
    frames = pd.concat([pd.read_parquet(path) for path in sorted((root / "data").glob("**/*.parquet"))])
    assert frames["next.success"].any() and frames["sync_valid"].all() and not frames["frame_after_gap"].any()
    assert {f"t_{name}_{role}_ns" for name in ("left", "right") for role in ("arm", "hand")} <= set(frames.columns)
    [folder] = native_episode_dirs(Path(f"{root}_native"))
    episode = load_native_episode(folder)
    actions = episode.names("action_names")
    assert actions[:7] == [f"left_arm_joint{i}.pos" for i in range(1, 7)] + ["left_hand_thumb_cmc_pitch.pos"]
    assert sum(name.startswith("right_") for name in actions) == 16
    assert episode.metadata["episode"]["success"] and episode.metadata["world"]["seed"] == 74
    executed = episode.telemetry["action"]  # the expert's own targets are recorded, not the perturbed ones
    measured = episode.telemetry["qpos"]
    for rig in ("left", "right"):  # each rig moved: the expert drove both
        own = [index for index, name in enumerate(actions) if name.startswith(f"{rig}_arm")]
        assert np.ptp(measured[:, own], axis=0).max() > 0.3 and np.ptp(executed[:, own], axis=0).max() > 0.3
