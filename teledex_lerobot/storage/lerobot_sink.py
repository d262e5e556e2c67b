"""The LeRobotDataset side of a TeleDex recording: features with the sync diagnostic columns, frames, and an episode
lifecycle that survives a killed process.

Diagnostic columns are unprefixed (`sync_valid`, `sync_max_diff_ms`, `t_<source>_ns`, and `t_frame_ns`, when the
frame was checked): LeRobot treats every
`observation.*` key as a policy input, and these must not be (notes/lerobot.md §4c). Timestamps are int64 ns because
float64 columns come back as float32 through the dataset's __getitem__.

Crash safety: LeRobot's writer keeps the parquet file open and buffers episode metadata, so a SIGKILL corrupts every
episode of the session (notes/lerobot.md §4e). After each saved episode we finalize and reopen (resume) the dataset:
each episode's files are then closed and complete on disk before the next one starts.
"""

import json
from pathlib import Path

import numpy as np
from lerobot.datasets import LeRobotDataset
from lerobot.utils.constants import OBS_ENV_STATE
from lerobot.utils.feature_utils import build_dataset_frame, hw_to_dataset_features

from ..sync import SyncPacket

SYNC_VALID = "sync_valid"
SYNC_MAX_DIFF_MS = "sync_max_diff_ms"
FRAME_TIME = "t_frame_ns"
# Per-episode facts the parquet columns cannot hold (native metadata.json and camera_info.json, the sync policy),
# kept beside LeRobot's meta so both formats hold the same episode.
SIDECAR_DIR = Path("meta") / "teledex_episodes"


def source_column(source: str) -> str:
    return f"t_{source}_ns"


def source_names_in(columns) -> list[str]:
    """The sync sources whose timestamp columns a dataset has, in column order."""
    return [c[2:-3] for c in columns if c.startswith("t_") and c.endswith("_ns") and c != FRAME_TIME]


def dataset_features(robot, source_names: list[str], use_video: bool) -> dict:
    # Values a robot reports about the scene rather than itself (a simulator's object poses, named by the robot's
    # environment_state_keys) go to observation.environment_state, the input LeRobot's state-based policies read.
    environment = list(getattr(robot, "environment_state_keys", ()))
    own = {key: kind for key, kind in robot.observation_features.items() if key not in environment}
    features = {
        **hw_to_dataset_features(robot.action_features, "action", use_video),
        **hw_to_dataset_features(own, "observation", use_video),
        SYNC_VALID: {"dtype": "bool", "shape": (1,), "names": None},
        SYNC_MAX_DIFF_MS: {"dtype": "float32", "shape": (1,), "names": None},
        FRAME_TIME: {"dtype": "int64", "shape": (1,), "names": None},
    }
    if environment:
        features[OBS_ENV_STATE] = {"dtype": "float32", "shape": (len(environment),), "names": environment}
    for source in source_names:
        features[source_column(source)] = {"dtype": "int64", "shape": (1,), "names": None}
    return features


def sync_columns(packet: SyncPacket, source_names: list[str]) -> dict[str, np.ndarray]:
    columns = {
        SYNC_VALID: np.array([packet.valid]),
        SYNC_MAX_DIFF_MS: np.array([packet.max_diff_ms], dtype=np.float32),
        FRAME_TIME: np.array([packet.checked_ns], dtype=np.int64),
    }
    for source in source_names:
        stamp = packet.timestamps_ns.get(source)
        columns[source_column(source)] = np.array([-1 if stamp is None else stamp], dtype=np.int64)
    return columns


def build_frame(dataset: LeRobotDataset, observation: dict, action: dict, packet: SyncPacket,
                source_names: list[str], task: str) -> dict:
    return {
        **build_dataset_frame(dataset.features, observation, prefix="observation"),
        **build_dataset_frame(dataset.features, action, prefix="action"),
        **sync_columns(packet, source_names),
        "task": task,
    }


def sidecar_path(root: Path, episode_index: int) -> Path:
    return Path(root) / SIDECAR_DIR / f"episode_{episode_index:06d}.json"


def write_sidecar(root: Path, episode_index: int, *, metadata: dict, camera_info: dict, sync_policy: dict,
                  source_names: list[str]) -> None:
    path = sidecar_path(root, episode_index)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"metadata": metadata, "camera_info": camera_info, "sync_policy": sync_policy,
                                "source_names": source_names}, indent=2))


def read_sidecar(root: Path, episode_index: int) -> dict | None:
    path = sidecar_path(root, episode_index)
    return json.loads(path.read_text()) if path.is_file() else None


def check_compatible(dataset: LeRobotDataset, features: dict, fps: int, robot_type: str) -> None:
    """Resuming must not mix recordings of another rate, robot or feature set into one dataset."""
    problems = []
    if dataset.fps != fps:
        problems.append(f"fps: dataset has {dataset.fps}, this recording uses {fps} (set --dataset.fps={dataset.fps})")
    if dataset.meta.robot_type != robot_type:
        problems.append(f"robot type: dataset has {dataset.meta.robot_type!r}, the robot is {robot_type!r}")
    existing = {k: (v["dtype"], tuple(v["shape"]), v.get("names")) for k, v in dataset.features.items()
                if k in features}
    wanted = {k: (v["dtype"], tuple(v["shape"]), v.get("names")) for k, v in features.items()}
    missing = sorted(set(features) - set(dataset.features))
    differing = sorted(k for k in existing if existing[k] != wanted[k])
    if missing or differing:
        problems.append(f"features: new {missing}, different {differing}; record into a new dataset root instead")
    if problems:
        raise ValueError(f"Cannot resume {dataset.root}: " + "; ".join(problems) + ". Nothing was changed.")


def reopen(dataset: LeRobotDataset, **writer_options) -> LeRobotDataset:
    """Close every file of the episodes saved so far, then continue in fresh files."""
    dataset.finalize()
    return LeRobotDataset.resume(dataset.repo_id, root=Path(dataset.root), **writer_options)
