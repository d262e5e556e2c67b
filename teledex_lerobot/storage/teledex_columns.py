"""Names of the columns and files TeleDex adds to a LeRobotDataset (defined here, without LeRobot, so the readers,
repair and merge code can find them with pyarrow alone)."""

from pathlib import Path

EPISODE_UUID = "episode_uuid"
SYNC_VALID = "sync_valid"
SYNC_MAX_DIFF_MS = "sync_max_diff_ms"
FRAME_TIME = "t_frame_ns"
FRAME_INTERVAL_MS = "frame_interval_ms"
FRAME_AFTER_GAP = "frame_after_gap"
TACTILE = "observation.tactile"
# Per-episode facts the parquet columns cannot hold (the native metadata.json and camera_info.json, the sync policy),
# one JSON file per episode uuid, kept beside LeRobot's meta so both formats hold the same episode.
SIDECAR_DIR = Path("meta") / "teledex_episodes"
# LeRobot rewrites info.json in place on every save: the recorder keeps the last good copy here for teledex-repair.
INFO_BACKUP = Path("meta") / "info.teledex-backup.json"


def source_column(source: str) -> str:
    return f"t_{source}_ns"


def source_names_in(columns) -> list[str]:
    """The sync sources whose timestamp columns a dataset has, in column order."""
    return [c[2:-3] for c in columns if c.startswith("t_") and c.endswith("_ns") and c != FRAME_TIME]
