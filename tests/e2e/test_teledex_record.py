"""teledex-record end to end through the installed commands: both formats in one pass with the same episodes and
ids, lossless conversions, the VITRA export against the published format, the sync report from either format,
one-line errors, and training on the result."""

import json
import subprocess
from pathlib import Path

import h5py
import numpy as np
import pytest
from commands import command, command_env, run
from vitra_format import vitra_problems

from teledex_lerobot.sync import SYNC_RULE_VERSION

pytestmark = pytest.mark.slow

FPS = 25
TOLERANCE_MS = 80.0  # not the default: the report must draw what was recorded


def record_args(root: Path, repo_id: str, episodes: int, seconds: float, *extra: str) -> list[str]:
    return command("teledex-record", "--robot.type=teledex", "--robot.id=t", "--teleop.type=teledex_replay",
                   "--teleop.id=t", f"--dataset.repo_id={repo_id}", f"--dataset.root={root}",
                   "--dataset.single_task=grasp", f"--dataset.fps={FPS}", f"--dataset.num_episodes={episodes}",
                   f"--dataset.episode_time_s={seconds}", "--dataset.reset_time_s=0.2", "--dataset.push_to_hub=false",
                   f"--sync.tolerance_ms={TOLERANCE_MS}", *extra)


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    return tmp_path_factory.mktemp("teledex_record")


@pytest.fixture(scope="module")
def recorded(work):
    root = work / "ds"
    output = run(record_args(root, "local/rec", 2, 2), work)
    assert output.count("Saved episode") == 2 and "dropped ticks" in output
    return root


def native_of(root: Path) -> Path:
    return Path(f"{root}_native")


def test_both_formats_hold_the_same_frames_and_ids(recorded):
    from lerobot.datasets import LeRobotDataset

    from teledex_lerobot.storage.native import load_native_episode, native_episode_dirs
    from teledex_lerobot.storage.repair import committed_episodes

    dataset = LeRobotDataset("local/rec", root=recorded)
    assert dataset.meta.total_episodes == 2
    for column in ("episode_uuid", "sync_valid", "sync_max_diff_ms", "t_frame_ns", "frame_interval_ms",
                   "frame_after_gap", "t_arm_ns", "t_hand_ns", "t_top_ns", "t_input_ns"):
        assert dataset.features[column]["info"]["teledex"], column  # marked as metadata, not a sensor
    assert not any(key.startswith("observation.") and "sync" in key for key in dataset.features)
    episodes = [load_native_episode(d, verify_checksums=True) for d in native_episode_dirs(native_of(recorded))]
    assert [(e.index, e.episode_uuid) for e in episodes] == \
        [(int(e["episode_index"]), e["episode_uuid"]) for e in committed_episodes(recorded)]
    for episode in episodes:
        meta = dataset.meta.episodes[episode.index]
        rows = dataset.hf_dataset.select(range(meta["dataset_from_index"], meta["dataset_to_index"]))
        assert np.array_equal(np.stack(rows["observation.state"]), episode.telemetry["qpos"])
        assert np.array_equal(np.asarray(rows["t_hand_ns"]).reshape(-1),
                              episode.telemetry["source_timestamps_ns"][:, episode.names("source_names").index("hand")])
        assert np.array_equal(np.asarray(rows["frame_after_gap"]).reshape(-1), episode.telemetry["frame_after_gap"])
        m = episode.metadata
        assert m["episode"]["episode_uuid"] == episode.episode_uuid
        assert m["hardware"]["preset"] == "piper_linkerhand_o6_single" and m["hardware"]["total_dof"] == 12
        assert m["collection"]["control_frequency_hz"] == FPS and m["episode"]["timesteps"] == meta["length"]
        assert m["sync"]["policy"]["tolerance_ms"] == TOLERANCE_MS
        assert m["timing"]["frames_stored"] == meta["length"]
        assert episode.camera_info["top"].fx > 0 and episode.camera_info["top"].world_from_camera is not None
        # one encode for both formats: the native video is LeRobot's episode video, byte for byte
        key = "observation.images.top"
        lerobot_video = recorded / dataset.meta.video_path.format(
            video_key=key, chunk_index=meta[f"videos/{key}/chunk_index"], file_index=meta[f"videos/{key}/file_index"])
        assert lerobot_video.read_bytes() == episode.video_path("top").read_bytes()


def test_round_trip_is_lossless(recorded, work):
    from teledex_lerobot.storage.native import load_native_episode, native_episode_dirs
    from teledex_lerobot.storage.video import read_video_frames

    run(command("teledex-convert", "to-native", str(recorded), str(work / "rt_native")), work)
    run(command("teledex-convert", "to-lerobot", str(work / "rt_native"), str(work / "rt_lerobot"), "--repo-id",
                "local/rt"), work)
    run(command("teledex-convert", "to-native", str(work / "rt_lerobot"), str(work / "rt_native2")), work)
    for original, back, again in zip(native_episode_dirs(native_of(recorded)), native_episode_dirs(work / "rt_native"),
                                     native_episode_dirs(work / "rt_native2"), strict=True):
        a, b, c = load_native_episode(original), load_native_episode(back), load_native_episode(again)
        for key in a.telemetry:
            assert np.array_equal(a.telemetry[key], b.telemetry[key]), key
            assert np.array_equal(a.telemetry[key], c.telemetry[key]), key
        assert a.metadata == b.metadata and a.camera_info == b.camera_info and a.episode_uuid == c.episode_uuid
        va, vb, vc = (read_video_frames(e.video_path("top")) for e in (a, b, c))
        assert np.array_equal(va, vb)  # to-native copies the encoded packets: the very same pictures
        psnr = 10 * np.log10(255**2 / max(np.mean((va.astype(float) - vc.astype(float)) ** 2), 1e-9))
        assert va.shape == vc.shape and psnr > 30, psnr  # to-lerobot encodes once


def test_vitra_export_matches_the_published_format(recorded, work):
    from teledex_lerobot.storage.native import load_native_episode, native_episode_dirs
    from teledex_lerobot.storage.vitra import rig_of

    out = work / "vitra"
    run(command("teledex-convert", "to-vitra", str(native_of(recorded)), str(out)), work)
    files = sorted(out.glob("*.h5"))
    assert len(files) == 2 and all(not vitra_problems(f) for f in files), [vitra_problems(f) for f in files]
    episode = load_native_episode(native_episode_dirs(native_of(recorded))[0])
    rig = rig_of(episode)
    with h5py.File(out / "episode_000000.h5") as h5:
        assert h5["meta/has_right"][()] and not h5["meta/has_left"][()]
        assert np.array_equal(h5["kinematics/left_ee_urdf_to_hand_mount"][()], np.eye(4))  # absent: identity
        assert np.array_equal(h5["kinematics/head_camera_to_left_arm_base"][()], np.eye(4))
        assert not h5["mask/left_arm"][()].any() and h5["mask/right_hand"][()].all()
        q = {"arm": h5["state/right_arm_joint"][10], "hand": h5["state/right_hand_joint"][10]}
        expected = rig.base_poses(q)["hand"]
        assert np.allclose(h5["state/right_hand_mount_pose"][10][:3], expected[:3, 3], atol=1e-9)
        arm = rig.parts["arm"]
        ee = arm.model.frame_pose(arm.full_configuration(q["arm"]), arm.mount_frame)
        assert np.allclose(ee @ h5["kinematics/right_ee_urdf_to_hand_mount"][()], expected, atol=1e-9)
    again = subprocess.run(command("teledex-convert", "to-vitra", str(native_of(recorded)), str(out)),
                           env=command_env(work), capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert again.returncode == 2 and "not empty" in again.stderr  # never overwrites


def test_sync_report_both_formats_agree(recorded, work):
    results = []
    for source in (recorded, native_of(recorded)):
        output = run(command("teledex-sync-report", str(source), "--json", str(work / "r.json"), "--plot",
                             str(work / "r.png"), "--episode-plots", "1", "--plot-dir", str(work / "plots")), work)
        results.append(json.loads((work / "r.json").read_text()))
        assert f"tolerance {TOLERANCE_MS} ms" in output and "dropped" in output
        assert (work / "plots" / "episode_000001.png").is_file()
    lerobot, native = results
    for key in ("frames", "valid_frames", "timing", "policies"):
        assert lerobot["overall"][key] == native["overall"][key], key
    assert lerobot["overall"]["policies"] == [{"max_age_ms": 1000.0, "tolerance_ms": TOLERANCE_MS,
                                               "rule_version": SYNC_RULE_VERSION}]
    assert set(native["overall"]["source_lag"]) == {"arm", "hand", "top", "wrist", "input"}
    assert 5_000 < (work / "r.png").stat().st_size < 200_000


def test_bad_starts_fail_in_one_line_and_change_nothing(recorded, work):
    before = sorted(p.relative_to(recorded) for p in recorded.rglob("*"))
    cases = [(record_args(recorded, "local/rec", 1, 1), "already exists: pass --resume=true"),
             (record_args(recorded, "local/rec", 1, 1, "--resume=true", f"--dataset.fps={FPS // 2}"),
              "fps: dataset has 25"),
             (record_args(work / "none", "local/none", 1, 1, "--resume=true"), "does not exist")]
    for args, message in cases:
        done = subprocess.run(args, env=command_env(work), capture_output=True, text=True, timeout=300,
                              stdin=subprocess.DEVNULL)
        assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert sorted(p.relative_to(recorded) for p in recorded.rglob("*")) == before
    assert not (work / "none").exists()


def test_act_trains_on_the_recording_without_our_columns(recorded, work):
    out = work / "train_act"
    run(command("lerobot-train", "--dataset.repo_id=local/rec", f"--dataset.root={recorded}", "--policy.type=act",
                "--policy.device=cpu", "--policy.push_to_hub=false", "--policy.pretrained_backbone_weights=null",
                "--steps=2", "--batch_size=2", "--log_freq=1", "--save_freq=2", "--num_workers=0",
                "--wandb.enable=false", f"--output_dir={out}"), work)
    config = json.loads((out / "checkpoints/000002/pretrained_model/config.json").read_text())
    assert set(config["input_features"]) == {"observation.state", "observation.images.top",
                                             "observation.images.wrist"}  # no diagnostics
