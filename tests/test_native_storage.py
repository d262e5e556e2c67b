"""The native episode layout: complete episodes or none, clear errors on damaged files, repair without loss."""

import errno
import json

import numpy as np
import pytest

from teledex_lerobot.storage import native
from teledex_lerobot.storage.native import (
    CameraInfo,
    NativeEpisodeWriter,
    NativeFormatError,
    load_native_episode,
    native_episode_dirs,
)
from teledex_lerobot.storage.repair import repair_native
from teledex_lerobot.storage.video import read_video_frames
from teledex_lerobot.sync import SyncPolicy, validate_timestamps

JOINTS = ["arm_joint1.pos", "hand_index_mcp_pitch.pos"]
SOURCES = ["arm", "hand", "top", "input"]
CAMERAS = {"top": CameraInfo(64, 48, 50.0, 50.0, 32.0, 24.0)}


def write_episode(session_dir, index, frames=20, save=True):
    writer = NativeEpisodeWriter(session_dir, index, joint_names=JOINTS, source_names=SOURCES, cameras=CAMERAS, fps=25)
    for t in range(frames):
        now = 1_000_000_000 + t * 40_000_000
        stamps = {"arm": now - 2_000_000, "hand": now - 9_000_000, "top": now - 1_000_000, "input": now}
        image = np.full((48, 64, 3), (t * 10) % 255, dtype=np.uint8)
        writer.add_frame(frame_ns=now, qpos=np.array([0.1 * t, 0.2]), action=np.array([0.1 * t + 0.05, 0.3]),
                         packet=validate_timestamps(stamps, now, SyncPolicy()), images={"top": image})
    if save:
        return writer.save({"episode": {"task_name": "test"}})
    return writer


def test_round_trip(tmp_path):
    folder = write_episode(tmp_path / "session_x", 3)
    episode = load_native_episode(folder, verify_checksums=True)
    t = episode.telemetry
    assert episode.index == 3 and list(t["joint_names"]) == JOINTS and list(t["source_names"]) == SOURCES
    assert t["qpos"].shape == (20, 2) and t["action"].shape == (20, 2) and t["qvel"].shape == (20, 2)
    assert np.allclose(t["qvel"][:, 0], 0.1 / 0.04)  # from positions over frame times
    assert t["sync_valid"].all() and np.all(t["sync_max_diff_ns"] == 9_000_000)
    assert episode.camera_info["top"].fx == 50.0 and episode.metadata["episode"]["task_name"] == "test"
    assert set(episode.manifest["files"]) == {"telemetry.npz", "camera_info.json", "metadata.json", "videos/top.mp4"}
    video = read_video_frames(episode.video_path("top"))
    assert video.shape == (20, 48, 64, 3)
    assert abs(int(video[10].mean()) - 100) <= 3  # H.264 at crf 18 keeps the picture


def test_unsaved_episode_leaves_only_a_partial_folder(tmp_path):
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
    with pytest.raises(FileExistsError, match="episode_000000 already exists"):
        write_episode(tmp_path / "session_x", 0)


def test_disk_full_while_saving_keeps_earlier_episodes(tmp_path, monkeypatch):
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
