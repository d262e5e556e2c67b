"""Per-episode sync columns read back from either storage format."""

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ..sync.report import EpisodeSync
from .lerobot_sink import SYNC_MAX_DIFF_MS, SYNC_VALID, source_column, source_names_in
from .native import load_native_episode, native_episode_dirs


def is_lerobot_root(path: Path) -> bool:
    return (Path(path) / "meta" / "info.json").is_file()


def sync_from_lerobot(root: Path) -> list[EpisodeSync]:
    files = sorted(Path(root).glob("data/*/*.parquet"))
    if not files:
        raise ValueError(f"{root} has no data/*/*.parquet files; is it a LeRobot dataset?")
    table = pa.concat_tables([pq.read_table(f) for f in files])
    columns = table.column_names
    if SYNC_VALID not in columns:
        raise ValueError(f"{root} has no '{SYNC_VALID}' column: it was not recorded with teledex-record")
    sources = source_names_in(columns)
    episode = table.column("episode_index").to_numpy()
    valid = np.asarray(table.column(SYNC_VALID).to_pylist(), dtype=bool).reshape(-1)
    max_diff = np.asarray(table.column(SYNC_MAX_DIFF_MS).to_pylist(), dtype=float).reshape(-1)
    stamps = np.stack([np.asarray(table.column(source_column(s)).to_pylist(), dtype=np.int64).reshape(-1)
                       for s in sources], axis=1)
    return [EpisodeSync(int(e), valid[episode == e], max_diff[episode == e], sources, stamps[episode == e])
            for e in np.unique(episode)]


def sync_from_native(root: Path) -> list[EpisodeSync]:
    dirs = native_episode_dirs(root)
    if not dirs:
        raise ValueError(f"{root} has no session_*/episode_* folders; is it a native TeleDex root?")
    episodes = []
    for folder in dirs:
        t = load_native_episode(folder).telemetry
        episodes.append(EpisodeSync(int(folder.name.split("_")[-1]), t["sync_valid"], t["sync_max_diff_ns"] / 1e6,
                                    [str(s) for s in t["source_names"]], t["source_timestamps_ns"]))
    return episodes


def read_sync(path: Path) -> list[EpisodeSync]:
    return sync_from_lerobot(path) if is_lerobot_root(path) else sync_from_native(path)
