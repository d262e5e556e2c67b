"""Two stations' recordings merged into one dataset in both formats (teledex-merge: LeRobot's aggregate_datasets for
the LeRobot side, our copy for the native side): every episode keeps its uuid, its sync metadata and its pairing."""

import json
from pathlib import Path

import numpy as np
import pytest
from commands import command, run
from lerobot.configs.dataset import DatasetRecordConfig
from lerobot.datasets import LeRobotDataset

from lerobot_robot_teledex import TeledexConfig
from lerobot_teleoperator_teledex import TeledexReplayConfig
from teledex_lerobot.recording.recorder import Recorder, TeledexRecordConfig
from teledex_lerobot.storage.native import load_native_episode, native_episode_dirs
from teledex_lerobot.storage.repair import committed_episodes
from teledex_lerobot.sync import SyncPolicy

pytestmark = pytest.mark.slow


def station(root: Path, episodes: int, tolerance_ms: float) -> list:
    Recorder(TeledexRecordConfig(
        robot=TeledexConfig(backend="fake"), teleop=TeledexReplayConfig(), sync=SyncPolicy(tolerance_ms=tolerance_ms),
        dataset=DatasetRecordConfig(repo_id="local/station", root=str(root), single_task="grasp", fps=25,
                                    episode_time_s=1.0, reset_time_s=0, num_episodes=episodes,
                                    push_to_hub=False))).run()
    return [load_native_episode(d) for d in native_episode_dirs(Path(f"{root}_native"))]


def test_two_stations_merge_with_pairs_and_ids_intact(tmp_path):
    a = station(tmp_path / "a", 2, tolerance_ms=100.0)
    b = station(tmp_path / "b", 1, tolerance_ms=60.0)
    out = tmp_path / "merged"
    run(command("teledex-merge", str(out), str(tmp_path / "a"), str(tmp_path / "b"), "--repo-id", "local/merged"),
        tmp_path)
    merged = [load_native_episode(d, verify_checksums=True) for d in native_episode_dirs(Path(f"{out}_native"))]
    sources = a + b
    assert [e.episode_uuid for e in merged] == [e.episode_uuid for e in sources]
    assert [(int(e["episode_index"]), e["episode_uuid"]) for e in committed_episodes(out)] == \
        [(e.index, e.episode_uuid) for e in merged] == [(i, e.episode_uuid) for i, e in enumerate(sources)]
    dataset = LeRobotDataset("local/merged", root=out)
    assert dataset.meta.total_episodes == 3
    for index, (source, episode) in enumerate(zip(sources, merged, strict=True)):
        for key in source.telemetry:
            assert np.array_equal(source.telemetry[key], episode.telemetry[key]), key
        assert episode.metadata["sync"] == source.metadata["sync"]
        assert episode.metadata["lerobot"]["episode_index"] == index
        assert episode.metadata["merged_from"][0]["episode_index"] == source.index
        sidecar = json.loads((out / "meta" / "teledex_episodes" / f"{episode.episode_uuid}.json").read_text())
        assert sidecar["sync_policy"] == source.metadata["sync"]["policy"]
        meta = dataset.meta.episodes[index]
        rows = dataset.hf_dataset.select(range(meta["dataset_from_index"], meta["dataset_to_index"]))
        assert np.array_equal(np.asarray(rows["sync_valid"]).reshape(-1), source.telemetry["sync_valid"])
        assert np.array_equal(np.asarray(rows["t_frame_ns"]).reshape(-1), source.telemetry["frame_timestamps_ns"])
    assert "Nothing to repair" in run(command("teledex-repair", str(out)), tmp_path)
    report = run(command("teledex-sync-report", str(out), "--json", str(tmp_path / "r.json"), "--plot",
                         str(tmp_path / "r.png")), tmp_path)
    assert "tolerance 60.0 ms" in report and "tolerance 100.0 ms" in report  # each station's own policy
    # the merged LeRobot dataset converts back to the merged native layout exactly
    run(command("teledex-convert", "to-native", str(out), str(tmp_path / "back")), tmp_path)
    for episode, back in zip(merged, map(load_native_episode, native_episode_dirs(tmp_path / "back")), strict=True):
        assert back.episode_uuid == episode.episode_uuid and back.metadata == episode.metadata
        for key in episode.telemetry:
            assert np.array_equal(back.telemetry[key], episode.telemetry[key]), key


def test_stations_of_another_robot_type_are_refused_in_one_line(tmp_path):
    """A station recorded before robot_type named the rig ("teledex") beside one recorded after: LeRobot refuses to
    merge them; teledex-merge says so in one line, with the fix, and writes nothing."""
    import subprocess

    from commands import command_env

    station(tmp_path / "a", 1, tolerance_ms=100.0)
    station(tmp_path / "b", 1, tolerance_ms=100.0)
    info = tmp_path / "b" / "meta" / "info.json"
    info.write_text(json.dumps({**json.loads(info.read_text()), "robot_type": "teledex"}))
    out = tmp_path / "merged"
    done = subprocess.run(command("teledex-merge", str(out), str(tmp_path / "a"), str(tmp_path / "b"), "--repo-id",
                                  "local/merged"), env=command_env(tmp_path), capture_output=True, text=True,
                          timeout=600)
    last = done.stderr.strip().splitlines()[-1]  # after LeRobot's progress bar
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-3000:]
    assert last.startswith("teledex-merge: error: ") and "set robot_type in its meta/info.json" in last
    assert not out.exists() and not Path(f"{out}_native").exists()
