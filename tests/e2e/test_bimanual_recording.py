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


def test_the_vitra_export_of_a_bimanual_episode_carries_both_hands(tmp_path: Path):
    """Both rigs recorded with the preset's cameras, exported to VITRA: both sides present, each with its own
    follower's joints, and the head camera posed in each arm's base as the world stands them (0.5 m apart)."""
    import h5py
    from vitra_format import vitra_problems

    from teledex_lerobot.cli import convert

    robot = TeledexFollowersConfig(preset="bimanual_piper_linkerhand_l10", backend="mujoco",
                                   world=WorldConfig(task="handover", seed=3))
    root = tmp_path / "handover"
    recorder = Recorder(TeledexRecordConfig(
        robot=robot, teleop=TeledexWorldExpertConfig(),
        dataset=DatasetRecordConfig(repo_id="local/handover", root=str(root), single_task="handover", fps=FPS,
                                    episode_time_s=2, reset_time_s=0, num_episodes=1, push_to_hub=False),
        keep="all"))
    assert recorder.run() == 1
    native = Path(f"{root}_native")
    convert.main(["to-vitra", str(native), str(tmp_path / "vitra")])
    [path] = sorted((tmp_path / "vitra").glob("*.h5"))
    assert not vitra_problems(path), vitra_problems(path)
    episode = load_native_episode(native_episode_dirs(native)[0])
    names = episode.names("state_names")
    with h5py.File(path) as h5:
        assert h5["meta/has_left"][()] and h5["meta/has_right"][()]
        for side in ("left", "right"):
            assert h5[f"mask/{side}_arm"][()].all() and h5[f"mask/{side}_hand"][()].all()
            arm = [names.index(f"{side}_arm_joint{i}.pos") for i in range(1, 7)]
            assert np.array_equal(h5[f"state/{side}_arm_joint"][()], episode.telemetry["qpos"][:, arm])
        # each side is its own follower: the left hand picks while the right one waits
        assert not np.allclose(h5["state/left_hand_joint"][()], h5["state/right_hand_joint"][()])
        camera_in_left = h5["kinematics/head_camera_to_left_arm_base"][()]
        camera_in_right = h5["kinematics/head_camera_to_right_arm_base"][()]
        left_from_right = camera_in_left @ np.linalg.inv(camera_in_right)
        assert np.allclose(left_from_right[:3, :3], np.eye(3), atol=1e-6)
        assert np.allclose(left_from_right[:3, 3], [0.0, -0.5, 0.0], atol=1e-6)  # the preset's placements
        # each hand mount seen from the camera agrees with its pose in its own arm's base
        for side, camera in (("left", camera_in_left), ("right", camera_in_right)):
            mount = h5[f"state/{side}_hand_mount_pose"][()][5]
            in_camera = h5[f"state/{side}_hand_mount_pose_in_cam"][()][5]
            assert np.allclose(np.linalg.inv(camera)[:3, :3] @ mount[:3] + np.linalg.inv(camera)[:3, 3],
                               in_camera[:3], atol=1e-6)
