"""Per-episode sync columns read back from either storage format (pyarrow and JSON only), every file checked as it
is read: a native episode against its manifest (sizes and SHA-256), a LeRobot dataset's info.json and sidecars field
by field, its parquet files readable and present where meta/episodes says."""

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..sync.report import EpisodeSync
from .errors import DatasetError, check_root
from .lerobot_meta import info_path, read_info, read_sidecar
from .native import load_native_episode, native_episode_dirs
from .repair import committed_episodes
from .teledex_columns import (
    EPISODE_UUID,
    FRAME_TIME,
    SYNC_MAX_DIFF_MS,
    SYNC_VALID,
    source_column,
    source_names_in,
    uuid_from_int64_pair,
)


def is_lerobot_root(path: Path) -> bool:
    """A LeRobot dataset (its info.json perhaps damaged or missing), not a native root."""
    return (Path(path) / "meta").is_dir() or info_path(path).is_symlink()


def _column(table: pa.Table, name: str, dtype) -> np.ndarray:
    return np.asarray(table.column(name).to_pylist(), dtype=dtype).reshape(-1)


def sync_from_lerobot(root: Path) -> list[EpisodeSync]:
    info = read_info(root)
    committed = committed_episodes(root, complete=True)
    files = sorted({Path(root) / info["data_path"].format(chunk_index=e["data/chunk_index"],
                                                          file_index=e["data/file_index"]) for e in committed})
    if not files:
        raise DatasetError(f"{root} has no committed episodes (meta/episodes); is it a LeRobot dataset?")
    tables = []
    for path in files:
        try:
            tables.append(pq.read_table(path))
        except (pa.ArrowInvalid, OSError) as err:
            raise DatasetError(f"{path} cannot be read, truncated? ({err}); run `teledex-repair {root}` to set it "
                               "aside") from None
    table = pa.concat_tables(tables)
    columns = table.column_names
    if absent := [c for c in (SYNC_VALID, EPISODE_UUID, SYNC_MAX_DIFF_MS, FRAME_TIME) if c not in columns]:
        raise DatasetError(f"{root} has no {', '.join(map(repr, absent))} columns: it was not recorded with this "
                           "version of teledex-record")
    table = table.filter(pc.is_in(table.column("episode_index"),  # only committed episodes' rows
                                  value_set=pa.array([int(e["episode_index"]) for e in committed], pa.int64())))
    fps = info["fps"]
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
        sidecar = read_sidecar(root, episode_uuid)
        policy = sidecar["sync_policy"] if sidecar is not None else {}
        episodes.append(EpisodeSync(int(e), valid[rows], max_diff[rows], sources, stamps[rows], frame_ns[rows], fps,
                                    policy, episode_uuid))
    return episodes


def sync_from_native(root: Path) -> list[EpisodeSync]:
    dirs = native_episode_dirs(root)
    if not dirs:
        raise DatasetError(f"{root} has no session_*/episode_* folders; is it a native TeleDex root?")
    episodes = []
    for folder in dirs:
        episode = load_native_episode(folder, verify_checksums=True)
        t = episode.telemetry
        episodes.append(EpisodeSync(episode.index, t["sync_valid"], t["sync_max_diff_ns"] / 1e6,
                                    episode.names("source_names"), t["source_timestamps_ns"],
                                    t["frame_timestamps_ns"], episode.field("collection.control_frequency_hz"),
                                    episode.field("sync.policy"), episode.episode_uuid))
    return episodes


def read_sync(path: Path) -> list[EpisodeSync]:
    check_root(path)
    if not Path(path).is_dir():
        raise DatasetError(f"{path} does not exist: give a LeRobot dataset root or a native TeleDex root")
    return sync_from_lerobot(path) if is_lerobot_root(path) else sync_from_native(path)
