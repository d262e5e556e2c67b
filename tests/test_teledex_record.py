"""teledex-record end to end: both formats in one pass, crash safety, resume, conversions, export, sync report and
training on the result."""

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import h5py
import numpy as np
import pytest
from commands import command, command_env, run

pytestmark = pytest.mark.slow

FPS = 25


def record_args(root: Path, repo_id: str, episodes: int, seconds: float, *extra: str) -> list[str]:
    return command("teledex-record", "--robot.type=teledex", "--robot.id=t", "--teleop.type=teledex_replay",
                   "--teleop.id=t", f"--dataset.repo_id={repo_id}", f"--dataset.root={root}",
                   "--dataset.single_task=grasp", f"--dataset.fps={FPS}", f"--dataset.num_episodes={episodes}",
                   f"--dataset.episode_time_s={seconds}", "--dataset.reset_time_s=0.2", "--dataset.push_to_hub=false",
                   *extra)


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    return tmp_path_factory.mktemp("teledex_record")


@pytest.fixture(scope="module")
def recorded(work):
    root = work / "ds"
    run(record_args(root, "local/rec", 2, 2), work)
    return root


def test_both_formats_hold_the_same_frames(recorded):
    from lerobot.datasets import LeRobotDataset

    from teledex_lerobot.storage.native import load_native_episode, native_episode_dirs

    dataset = LeRobotDataset("local/rec", root=recorded)
    assert dataset.meta.total_episodes == 2
    for column in ("sync_valid", "sync_max_diff_ms", "t_frame_ns", "t_arm_ns", "t_hand_ns", "t_top_ns", "t_input_ns"):
        assert column in dataset.features, column
    assert not any(key.startswith("observation.") and "sync" in key for key in dataset.features)
    episodes = [load_native_episode(d, verify_checksums=True) for d in native_episode_dirs(Path(f"{recorded}_native"))]
    assert [e.index for e in episodes] == [0, 1]
    for episode in episodes:
        meta = dataset.meta.episodes[episode.index]
        assert len(episode.telemetry["qpos"]) == meta["length"]
        rows = dataset.hf_dataset.select(range(meta["dataset_from_index"], meta["dataset_to_index"]))
        assert np.array_equal(np.stack(rows["observation.state"]), episode.telemetry["qpos"])
        assert np.array_equal(np.asarray(rows["t_hand_ns"]).reshape(-1),
                              episode.telemetry["source_timestamps_ns"][:, 2 - 1])
        m = episode.metadata
        assert m["hardware"]["preset"] == "piper_linkerhand_o6_single" and m["hardware"]["total_dof"] == 12
        assert m["collection"]["control_frequency_hz"] == FPS and m["episode"]["timesteps"] == meta["length"]
        assert episode.camera_info["top"].fx > 0 and episode.camera_info["top"].world_from_camera is not None
        assert episode.telemetry["sync_valid"].mean() >= 0.99


def test_round_trip_native_lerobot_native(recorded, work):
    from teledex_lerobot.storage.convert import lerobot_to_native, native_to_lerobot
    from teledex_lerobot.storage.native import load_native_episode, native_episode_dirs
    from teledex_lerobot.storage.video import read_video_frames

    native_to_lerobot(Path(f"{recorded}_native"), work / "rt_lerobot", "local/rt", progress=lambda _: None)
    lerobot_to_native(work / "rt_lerobot", "local/rt", work / "rt_native", progress=lambda _: None)
    for original, back in zip(native_episode_dirs(Path(f"{recorded}_native")), native_episode_dirs(work / "rt_native"),
                              strict=True):
        a, b = load_native_episode(original), load_native_episode(back)
        assert a.telemetry.keys() == b.telemetry.keys()
        for key in a.telemetry:
            assert np.array_equal(a.telemetry[key], b.telemetry[key]), key
        assert a.metadata == b.metadata and a.camera_info == b.camera_info
        va, vb = read_video_frames(a.video_path("top")), read_video_frames(b.video_path("top"))
        assert va.shape == vb.shape
        psnr = 10 * np.log10(255**2 / np.mean((va.astype(float) - vb.astype(float)) ** 2))
        assert psnr > 30, psnr  # re-encoded twice, still the same pictures


def test_vitra_export(recorded, work):
    from teledex_lerobot.storage.native import load_native_episode, native_episode_dirs
    from teledex_lerobot.storage.vitra import export_vitra, rig_of

    out = work / "vitra"
    export_vitra(Path(f"{recorded}_native"), out, progress=lambda _: None)
    episode = load_native_episode(native_episode_dirs(Path(f"{recorded}_native"))[0])
    rig = rig_of(episode)
    with h5py.File(out / "episode_000000.h5") as h5:
        frames = int(h5["meta/frame_count"][()])
        assert h5["meta/has_right"][()] and not h5["meta/has_left"][()]
        assert h5["state/right_arm_joint"].shape == (frames, 6) and h5["state/right_hand_joint"].shape == (frames, 6)
        assert h5["state/left_arm_joint"].shape == (frames, 6) and not h5["mask/left_arm"][()].any()
        q = {"arm": h5["state/right_arm_joint"][10], "hand": h5["state/right_hand_joint"][10]}
        expected = rig.base_poses(q)["hand"]
        pose = h5["state/right_hand_mount_pose"][10]
        assert np.allclose(pose[:3], expected[:3, 3], atol=1e-9)
        # the stored transform chain agrees: FK(ee) . ee_to_hand_mount == hand_mount
        arm = rig.parts["arm"]
        ee = arm.model.frame_pose(arm.full_configuration(q["arm"]), arm.mount_frame)
        assert np.allclose(ee @ h5["kinematics/right_ee_urdf_to_hand_mount"][()], expected, atol=1e-9)
        camera = h5["kinematics/head_camera_to_right_arm_base"][()]
        in_cam = h5["state/right_hand_mount_pose_in_cam"][10]
        assert np.allclose(in_cam[:3], (np.linalg.inv(camera) @ expected)[:3, 3], atol=1e-9)
    assert (out / "episode_000000.mp4").stat().st_size > 10_000


def test_sync_report_both_formats(recorded, work):
    for source in (recorded, Path(f"{recorded}_native")):
        output = run(command("teledex-sync-report", str(source), "--json", str(work / "r.json"), "--plot",
                             str(work / "r.png")), work)
        result = json.loads((work / "r.json").read_text())
        assert result["overall"]["frames"] > 90 and result["overall"]["sync_success_rate"] >= 0.99
        assert set(result["overall"]["source_lag"]) == {"arm", "hand", "top", "input"}
        assert (work / "r.png").stat().st_size > 5_000 and "sync ok %" in output


def test_resume_with_other_fps_is_refused_and_changes_nothing(recorded, work):
    before = sorted(p.relative_to(recorded) for p in recorded.rglob("*"))
    args = record_args(recorded, "local/rec", 1, 1, "--resume=true")
    args[args.index(f"--dataset.fps={FPS}")] = "--dataset.fps=50"
    done = subprocess.run(args, env=command_env(work), capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL)
    assert done.returncode != 0 and "fps: dataset has 25" in done.stderr
    assert sorted(p.relative_to(recorded) for p in recorded.rglob("*")) == before


def test_sigkill_mid_episode_loses_only_that_episode_then_trains(work):
    from lerobot.datasets import LeRobotDataset

    from teledex_lerobot.storage.native import native_episode_dirs

    root = work / "crash"
    process = subprocess.Popen(record_args(root, "local/crash", 3, 3), env=command_env(work), stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 240
    for line in process.stdout:
        if "Recording episode 1" in line or time.monotonic() > deadline:
            break
    time.sleep(1.5)  # well inside episode 1
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    dataset = LeRobotDataset("local/crash", root=root)  # loads as it is, before any repair
    assert dataset.meta.total_episodes == 1 and len(dataset) == dataset.meta.episodes[0]["length"]
    assert [p.name for p in native_episode_dirs(Path(f"{root}_native"))] == ["episode_000000"]
    output = run(command("teledex-repair", str(root)), work)
    assert "episode_000001.partial" in output
    run(record_args(root, "local/crash", 1, 1, "--resume=true"), work)  # recording continues where it stopped
    assert LeRobotDataset("local/crash", root=root).meta.total_episodes == 2
    assert [p.name for p in native_episode_dirs(Path(f"{root}_native"))] == ["episode_000000", "episode_000001"]
    for policy, extra in (("act", []), ("diffusion", ["--policy.down_dims=[32,64,128]", "--policy.horizon=8",
                                                      "--policy.n_action_steps=4"])):
        out = work / f"train_{policy}"
        run(command("lerobot-train", "--dataset.repo_id=local/crash", f"--dataset.root={root}",
                    f"--policy.type={policy}", "--policy.device=cpu", "--policy.push_to_hub=false",
                    "--policy.pretrained_backbone_weights=null", "--steps=2", "--batch_size=2", "--log_freq=1",
                    "--save_freq=2", "--num_workers=0", "--wandb.enable=false", f"--output_dir={out}", *extra), work)
        config = json.loads((out / "checkpoints/000002/pretrained_model/config.json").read_text())
        assert set(config["input_features"]) == {"observation.state", "observation.images.top"}  # no diagnostics
