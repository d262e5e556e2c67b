"""Per-episode sync columns read back from either storage format (pyarrow and JSON only)."""

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ..sync.report import EpisodeSync
from .errors import DatasetError
from .native import load_native_episode, native_episode_dirs
from .teledex_columns import (
    EPISODE_UUID,
    FRAME_TIME,
    SIDECAR_DIR,
    SYNC_MAX_DIFF_MS,
    SYNC_VALID,
    source_column,
    source_names_in,
    uuid_from_int64_pair,
)


def is_lerobot_root(path: Path) -> bool:
    return (Path(path) / "meta" / "info.json").is_file()


def _column(table: pa.Table, name: str, dtype) -> np.ndarray:
    return np.asarray(table.column(name).to_pylist(), dtype=dtype).reshape(-1)


def sync_from_lerobot(root: Path) -> list[EpisodeSync]:
    files = sorted(Path(root).glob("data/*/*.parquet"))
    if not files:
        raise DatasetError(f"{root} has no data/*/*.parquet files; is it a LeRobot dataset?")
    table = pa.concat_tables([pq.read_table(f) for f in files])
    columns = table.column_names
    if SYNC_VALID not in columns or EPISODE_UUID not in columns:
        raise DatasetError(f"{root} has no '{SYNC_VALID}' / '{EPISODE_UUID}' columns: it was not recorded with "
                           "this version of teledex-record")
    fps = json.loads((Path(root) / "meta" / "info.json").read_text())["fps"]
    sources = source_names_in(columns)
    episode = _column(table, "episode_index", np.int64)
    uuids = table.column(EPISODE_UUID).to_pylist()
    valid = _column(table, SYNC_VALID, bool)
    max_diff = _column(table, SYNC_MAX_DIFF_MS, float)
    frame_ns = _column(table, FRAME_TIME, np.int64)
    stamps = np.stack([_column(table, source_column(s), np.int64) for s in sources], axis=1)
    episodes = []
    for e in np.unique(episode):
        rows = episode == e
        episode_uuid = uuid_from_int64_pair(uuids[int(np.flatnonzero(rows)[0])])
        sidecar = Path(root) / SIDECAR_DIR / f"{episode_uuid}.json"
        policy = json.loads(sidecar.read_text())["sync_policy"] if sidecar.is_file() else {}
        episodes.append(EpisodeSync(int(e), valid[rows], max_diff[rows], sources, stamps[rows], frame_ns[rows], fps,
                                    policy, episode_uuid))
    return episodes


def sync_from_native(root: Path) -> list[EpisodeSync]:
    dirs = native_episode_dirs(root)
    if not dirs:
        raise DatasetError(f"{root} has no session_*/episode_* folders; is it a native TeleDex root?")
    episodes = []
    for folder in dirs:
        episode = load_native_episode(folder)
        t = episode.telemetry
        episodes.append(EpisodeSync(episode.index, t["sync_valid"], t["sync_max_diff_ns"] / 1e6,
                                    episode.names("source_names"), t["source_timestamps_ns"],
                                    t["frame_timestamps_ns"], episode.metadata["collection"]["control_frequency_hz"],
                                    episode.metadata["sync"]["policy"], episode.episode_uuid))
    return episodes


def read_sync(path: Path) -> list[EpisodeSync]:
    if not Path(path).is_dir():
        raise DatasetError(f"{path} is not a folder: give a LeRobot dataset root or a native TeleDex root")
    return sync_from_lerobot(path) if is_lerobot_root(path) else sync_from_native(path)
