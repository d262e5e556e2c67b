"""The native episode layout: complete episodes or none, clear errors on damaged files, repair without loss."""

import errno
import json
import threading

import numpy as np
import pytest

from teledex_lerobot.geometry.camera import CameraInfo
from teledex_lerobot.storage import native
from teledex_lerobot.storage.frame import FrameLayout, RecordedFrame
from teledex_lerobot.storage.native import NativeFormatError, NativeSink, load_native_episode, native_episode_dirs
from teledex_lerobot.storage.repair import repair_native
from teledex_lerobot.storage.sink import EpisodeHeader
from teledex_lerobot.storage.video import H264Writer, read_video_frames
from teledex_lerobot.sync import SyncPolicy, validate_timestamps

LAYOUT = FrameLayout(state_names=("arm_joint1.pos", "hand_index.pos", "extra_sensor"),
                     action_names=("arm_joint1.pos", "hand_index.pos"),
                     tactile_names=("hand_tactile_index_r0c0", "hand_tactile_index_r0c1"),
                     cameras={"top": (48, 64, 3)}, source_names=("arm", "hand", "top", "input"), fps=25)
CAMERAS = {"top": CameraInfo(64, 48, 50.0, 50.0, 32.0, 24.0)}


def write_episode(session_dir, index, frames=20, save=True, skip=()):
    sink = NativeSink(session_dir, LAYOUT, CAMERAS)
    header = EpisodeHeader.new(index, "test")
    sink.begin(header)
    for t in range(frames + len(skip)):
        if t in skip:  # a control tick that never made it into the data
            continue
        now = 1_000_000_000 + t * 40_000_000
        stamps = {"arm": now - 2_000_000, "hand": now - 9_000_000, "top": now - 1_000_000, "input": now}
        image = np.full((48, 64, 3), (t * 10) % 255, dtype=np.uint8)
        sink.add(RecordedFrame(np.array([0.1 * t, 0.2, 7.0]), np.array([0.1 * t + 0.05, 0.3]),
                               np.array([t, 255 - t], float), {"top": image},
                               validate_timestamps(stamps, now, SyncPolicy())))
    if save:
        sink.stage({"episode": {"task_name": "test", "episode_uuid": header.episode_uuid}})
        sink.commit()
        return sink.final_dir
    return sink


def test_round_trip_keeps_every_observation(tmp_path):
    folder = write_episode(tmp_path / "session_x", 3)
    episode = load_native_episode(folder, verify_checksums=True)
    t = episode.telemetry
    assert episode.index == 3 and episode.names("state_names") == list(LAYOUT.state_names)
    assert episode.names("action_names") == list(LAYOUT.action_names)
    assert episode.names("tactile_names") == list(LAYOUT.tactile_names)
    assert t["qpos"].shape == (20, 3) and t["action"].shape == (20, 2) and t["tactile"].shape == (20, 2)
    assert np.array_equal(t["tactile"][:, 0], np.arange(20)) and np.all(t["qpos"][:, 2] == 7.0)
    assert np.allclose(t["qvel"][:, 0], 0.1 / 0.04)  # from positions over frame times
    assert t["sync_valid"].all() and np.all(t["sync_max_diff_ns"] == 9_000_000)
    assert not t["frame_after_gap"].any() and t["frame_interval_ns"][0] == 0
    assert np.all(t["frame_interval_ns"][1:] == 40_000_000)
    assert episode.camera_info["top"].fx == 50.0 and episode.metadata["episode"]["task_name"] == "test"
    assert set(episode.manifest["files"]) == {"telemetry.npz", "camera_info.json", "metadata.json", "videos/top.mp4"}
    video = read_video_frames(episode.video_path("top"))
    assert video.shape == (20, 48, 64, 3)
    assert abs(int(video[10].mean()) - 100) <= 3  # H.264 at crf 18 keeps the picture


def test_dropped_ticks_show_in_the_timing(tmp_path):
    folder = write_episode(tmp_path / "session_x", 0, frames=20, skip=(5, 6, 7, 12))
    t = load_native_episode(folder).telemetry
    assert t["frame_after_gap"].sum() == 2
    gap_frames = np.flatnonzero(t["frame_after_gap"])
    assert list(t["frame_interval_ns"][gap_frames]) == [160_000_000, 80_000_000]
    from teledex_lerobot.sync import timing_metrics

    timing = timing_metrics(t["frame_timestamps_ns"], 25)
    assert (timing["frames_stored"], timing["frames_expected"], timing["dropped_ticks"]) == (20, 24, 4)
    assert timing["achieved_hz"] == pytest.approx(25 * 20 / 24, abs=0.01)  # frames per second of the episode
    assert timing_metrics(np.arange(100) * 10_000_000, 100)["achieved_hz"] == pytest.approx(100)


def test_both_formats_store_one_timing_and_one_missing_stamp():
    """The LeRobot sink, fed a frame at a time, stores the timing and capture times the native episode stores."""
    from teledex_lerobot.recording.lerobot_dataset import lerobot_frame

    frames, header = [], EpisodeHeader.new(0, "test")
    for t in (0, 1, 2, 5, 6, 8):  # dropped ticks: gaps after 2 and 6
        now = 1_000_000_000 + t * 40_000_000
        stamps = {"arm": now - 2_000_000, "hand": None if t == 5 else now, "top": now, "input": now}
        frames.append(RecordedFrame(np.zeros(3), np.zeros(2), np.zeros(2), {}, validate_timestamps(stamps, now,
                                                                                                    SyncPolicy())))
    native_columns = native.telemetry_arrays(LAYOUT, frames)
    rows = [lerobot_frame(LAYOUT, frame, header, before.frame_ns if before else None)
            for before, frame in zip([None, *frames], frames)]
    assert np.array_equal([r["frame_interval_ms"][0] for r in rows],
                          (native_columns["frame_interval_ns"] / 1e6).astype(np.float32))
    assert [r["frame_after_gap"][0] for r in rows] == list(native_columns["frame_after_gap"]) == [0, 0, 0, 1, 0, 1]
    stored = np.array([[r[f"t_{s}_ns"][0] for s in LAYOUT.source_names] for r in rows])
    assert np.array_equal(stored, native_columns["source_timestamps_ns"])
    assert stored.dtype == np.int64 and stored[3, 1] == -1  # the hand had no capture time: NO_STAMP in both


def test_unsaved_episode_leaves_only_a_staging_folder(tmp_path):
    session = tmp_path / "session_x"
    write_episode(session, 0)
    write_episode(session, 1, save=False)  # the process dies here
    assert [p.name for p in native_episode_dirs(tmp_path)] == ["episode_000000"]
    assert (session / "episode_000001.partial").is_dir()
    actions = repair_native(tmp_path)
    assert len(actions) == 1 and "episode_000001.partial" in actions[0]
    assert not (session / "episode_000001.partial").exists()
    assert list(tmp_path.parent.glob(f"{tmp_path.name}.damaged/*/session_x/episode_000001.partial"))
    load_native_episode(session / "episode_000000")  # what was saved is untouched


def test_a_failed_encoder_fails_the_stage_and_every_encoder_is_finished(tmp_path):
    """One camera's encoder fails: stage() names it, the other camera's encoder is finished too (it used to run on,
    its thread waiting for frames forever), and abort() removes the staging without raising the failure again."""
    layout = FrameLayout(state_names=("arm_joint1.pos",), action_names=("arm_joint1.pos",), tactile_names=(),
                         cameras={"top": (48, 64, 3), "wrist": (48, 64, 3)}, source_names=("arm",), fps=25)
    sink = NativeSink(tmp_path / "session_x", layout, {name: CAMERAS["top"] for name in ("top", "wrist")})
    before = set(threading.enumerate())  # (another test here leaves a writer running on purpose: a dying process)
    sink.begin(EpisodeHeader.new(0, "test"))
    now = 1_000_000_000
    image = np.zeros((48, 64, 3), np.uint8)
    sink.add(RecordedFrame(np.zeros(1), np.zeros(1), np.zeros(0), {"top": image[..., 0], "wrist": image},
                           validate_timestamps({"arm": now}, now, SyncPolicy())))  # top: not an RGB image
    with pytest.raises(RuntimeError, match="top.mp4"):
        sink.stage({})
    assert not [t.name for t in set(threading.enumerate()) - before if t.name.startswith("h264-")]
    sink.abort()
    assert not sink.staging_dir.exists()


def test_repair_reconciles_by_uuid(tmp_path):
    first = load_native_episode(write_episode(tmp_path / "session_a", 0))
    other = load_native_episode(write_episode(tmp_path / "session_b", 1))
    # LeRobot holds episode 0 with the same uuid and a different episode 1: the native 1 is set aside
    actions = repair_native(tmp_path, {0: first.episode_uuid, 1: "another-uuid"})
    assert any("present in the native format only" in a for a in actions), actions
    assert [load_native_episode(p).episode_uuid for p in native_episode_dirs(tmp_path)] == [first.episode_uuid]
    assert list(tmp_path.parent.glob(f"{tmp_path.name}.damaged/*/session_b/episode_000001"))
    assert other.episode_uuid not in {load_native_episode(p).episode_uuid for p in native_episode_dirs(tmp_path)}


def test_two_episodes_with_one_index_are_refused(tmp_path):
    write_episode(tmp_path / "session_a", 0)
    (tmp_path / "session_b" / "episode_000000").mkdir(parents=True)
    with pytest.raises(NativeFormatError, match="Two episodes with index 0.*teledex-repair"):
        native_episode_dirs(tmp_path)


def test_truncated_telemetry_names_the_file(tmp_path):
    folder = write_episode(tmp_path / "session_x", 0)
    data = (folder / "telemetry.npz").read_bytes()
    (folder / "telemetry.npz").write_bytes(data[: len(data) // 2])
    with pytest.raises(NativeFormatError, match="telemetry.npz.*truncated.*teledex-repair"):
        load_native_episode(folder)
    assert "does not load" in repair_native(tmp_path)[0]


def test_truncated_manifest_names_the_file(tmp_path):
    folder = write_episode(tmp_path / "session_x", 0)
    text = (folder / "manifest.json").read_text()
    (folder / "manifest.json").write_text(text[:40])
    with pytest.raises(NativeFormatError, match="manifest.json is not valid JSON"):
        load_native_episode(folder)


def test_refuses_to_overwrite_a_saved_episode(tmp_path):
    write_episode(tmp_path / "session_x", 0)
    with pytest.raises(NativeFormatError, match="episode_000000 already exists.*teledex-repair"):  # one line
        write_episode(tmp_path / "session_y", 0)


def test_disk_full_while_staging_keeps_earlier_episodes(tmp_path, monkeypatch):
    session = tmp_path / "session_x"
    saved = write_episode(session, 0)

    def no_space(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(native.np, "savez", no_space)
    with pytest.raises(OSError, match="No space left"):
        write_episode(session, 1)
    monkeypatch.undo()
    assert [p.name for p in native_episode_dirs(tmp_path)] == ["episode_000000"]
    assert json.loads((saved / "manifest.json").read_text())["frames"] == 20
    load_native_episode(saved, verify_checksums=True)


def test_an_episode_holds_no_camera_frame_in_memory(tmp_path):
    """The native episode takes the video LeRobot encoded (staged_video): it keeps no image meanwhile, so memory does
    not grow with the episode (it held every one until the episode ended: 35 MB more per second with two 640x480
    cameras)."""
    import tracemalloc

    encoded = tmp_path / "lerobot_top.mp4"  # stands for LeRobot's encode of the episode
    writer = H264Writer(encoded, 64, 48, 25)
    writer.add(np.zeros((48, 64, 3), np.uint8))
    writer.close()
    layout = FrameLayout(state_names=("arm_joint1.pos",), action_names=("arm_joint1.pos",), tactile_names=(),
                         cameras={"top": (480, 640, 3)}, source_names=("arm", "top"), fps=25)
    sink = NativeSink(tmp_path / "session_x", layout, {"top": CameraInfo(640, 480, 500.0, 500.0, 320.0, 240.0)},
                      staged_video=lambda camera: encoded)
    header = EpisodeHeader.new(0, "test")
    sink.begin(header)
    tracemalloc.start()
    try:
        for t in range(50):
            now = 1_000_000_000 + t * 40_000_000
            image = np.full((480, 640, 3), t, dtype=np.uint8)
            sink.add(RecordedFrame(np.array([0.01 * t]), np.array([0.01 * t]), np.zeros(0), {"top": image},
                                   validate_timestamps({"arm": now, "top": now}, now, SyncPolicy())))
            del image
        held_bytes, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert held_bytes < 480 * 640 * 3, f"{held_bytes / 1e6:.1f} MB held after 50 frames (one frame: 0.9 MB)"
    sink.stage({"episode": {"task_name": "test", "episode_uuid": header.episode_uuid}})
    sink.commit()
    episode = load_native_episode(sink.final_dir, verify_checksums=True)
    assert len(episode.telemetry["qpos"]) == 50 and episode.video_path("top").read_bytes() == encoded.read_bytes()
