"""Names of the columns and files TeleDex adds to a LeRobotDataset (defined here, without LeRobot, so the readers,
repair and merge code can find them with pyarrow alone)."""

import uuid
from pathlib import Path

import numpy as np

# The episode uuid as two int64 (its 128 bits, high then low): LeRobot carries per-frame columns through all its
# tools (merge, split, delete), and validators read numeric columns without complaint (a string column is legal in
# LeRobot 0.6.1 but robovet 0.2.2 fails a dataset that has one).
EPISODE_UUID = "episode_uuid"
SYNC_VALID = "sync_valid"
SYNC_MAX_DIFF_MS = "sync_max_diff_ms"
FRAME_TIME = "t_frame_ns"
FRAME_INTERVAL_MS = "frame_interval_ms"
FRAME_AFTER_GAP = "frame_after_gap"
# A device was in fault at this frame (from when the cause began, where the driver can tell): the frame is not a
# demonstration (a part in fault counts as not measured, so it is never sync-valid), and once the fault latched the
# action is the target the hardware held, not the one asked for.
DEVICE_FAULT = "device_fault"
TACTILE = "observation.tactile"
# The task has succeeded by this frame, as the robot judged it (a simulated world): LeRobot's own name for it.
SUCCESS = "next.success"
# Per-episode facts the parquet columns cannot hold (the native metadata.json and camera_info.json, the sync policy),
# one JSON file per episode uuid, kept beside LeRobot's meta so both formats hold the same episode.
SIDECAR_DIR = Path("meta") / "teledex_episodes"
# LeRobot rewrites info.json in place on every save: the recorder keeps the last good copy here for teledex-repair.
INFO_BACKUP = Path("meta") / "info.teledex-backup.json"


def uuid_to_int64_pair(episode_uuid: str) -> np.ndarray:
    value = uuid.UUID(episode_uuid).int
    return np.array([value >> 64, value & (2**64 - 1)], dtype=np.uint64).view(np.int64)


def uuid_from_int64_pair(pair) -> str:
    high, low = np.asarray(pair, dtype=np.int64).view(np.uint64).tolist()
    return str(uuid.UUID(int=(high << 64) | low))


def source_column(source: str) -> str:
    return f"t_{source}_ns"


def source_names_in(columns) -> list[str]:
    """The sync sources whose timestamp columns a dataset has, in column order."""
    return [c[2:-3] for c in columns if c.startswith("t_") and c.endswith("_ns") and c != FRAME_TIME]
