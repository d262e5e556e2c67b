"""Native layout <-> LeRobotDataset, lossless for what both hold.

Both hold, per frame: qpos (observation.state), action, every source's capture timestamp, the frame's check time and
the validity flag; per episode: metadata.json and camera_info.json (kept in LeRobot beside meta/, see lerobot_sink);
and the camera videos. Telemetry converts exactly (float32 and int64 both ways; max_diff, freshness and consistency
are recomputed from the timestamps with the recorded policy). Videos are re-encoded (H.264 <-> LeRobot's codec), so
frames match in count and closely in pixels, not bit for bit.
"""

from dataclasses import asdict
from pathlib import Path

import numpy as np
from lerobot.datasets import LeRobotDataset

from ..sync import SyncPolicy, validate_timestamps
from .lerobot_sink import (
    FRAME_TIME,
    SYNC_VALID,
    build_frame,
    dataset_features,
    read_sidecar,
    source_column,
    source_names_in,
    write_sidecar,
)
from ..geometry.camera import CameraInfo
from .native import NativeEpisodeWriter, load_native_episode, native_episode_dirs
from .video import read_video_frames


class _FeatureSource:
    """What dataset_features() needs, described from a native episode instead of a live robot."""

    def __init__(self, joint_names: list[str], cameras: dict[str, CameraInfo]):
        self.action_features = dict.fromkeys(joint_names, float)
        self.observation_features = {**self.action_features,
                                     **{name: (c.height, c.width, 3) for name, c in cameras.items()}}


def native_to_lerobot(native_root: Path, lerobot_root: Path, repo_id: str, progress=print) -> LeRobotDataset:
    folders = native_episode_dirs(native_root)
    if not folders:
        raise ValueError(f"No episodes under {native_root} (expected session_*/episode_* folders)")
    first = load_native_episode(folders[0])
    joint_names = [str(j) for j in first.telemetry["joint_names"]]
    sources = [str(s) for s in first.telemetry["source_names"]]
    fps = int(first.metadata["collection"]["control_frequency_hz"])
    features = dataset_features(_FeatureSource(joint_names, first.camera_info), sources, use_video=True)
    dataset = LeRobotDataset.create(repo_id, fps, root=lerobot_root, features=features, use_videos=True,
                                    robot_type=first.metadata.get("hardware", {}).get("robot_type"))
    try:
        for new_index, folder in enumerate(folders):
            episode = load_native_episode(folder)
            _check_same_layout(episode, joint_names, sources, folder)
            t = episode.telemetry
            videos = {name: read_video_frames(episode.video_path(name)) for name in episode.camera_info}
            policy = SyncPolicy(**episode.metadata["sync"]["policy"])
            for i in range(len(t["frame_timestamps_ns"])):
                stamps = {s: (None if v < 0 else int(v)) for s, v in zip(sources, t["source_timestamps_ns"][i],
                                                                          strict=True)}
                packet = validate_timestamps(stamps, int(t["frame_timestamps_ns"][i]), policy)
                observation = {**dict(zip(joint_names, t["qpos"][i].tolist(), strict=True)),
                               **{name: frames[i] for name, frames in videos.items()}}
                frame = build_frame(dataset, observation, dict(zip(joint_names, t["action"][i].tolist(), strict=True)),
                                    packet, sources, episode.metadata["episode"]["task_name"])
                frame[SYNC_VALID] = np.array([bool(t["sync_valid"][i])])  # as recorded, whatever the policy says now
                dataset.add_frame(frame)
            dataset.save_episode()
            write_sidecar(lerobot_root, new_index, metadata=episode.metadata, sync_policy=asdict(policy),
                          camera_info={n: asdict(c) for n, c in episode.camera_info.items()}, source_names=sources)
            progress(f"{folder.name} -> LeRobot episode {new_index}")
    finally:
        dataset.finalize()
    return dataset


def lerobot_to_native(lerobot_root: Path, repo_id: str, native_root: Path, progress=print) -> list[Path]:
    dataset = LeRobotDataset(repo_id, root=lerobot_root)
    joint_names = list(dataset.features["action"]["names"])
    sources = source_names_in(dataset.features)
    cameras = [key.removeprefix("observation.images.") for key in dataset.meta.video_keys]
    written = []
    for episode_index in range(dataset.meta.total_episodes):
        sidecar = read_sidecar(lerobot_root, episode_index)
        if sidecar is None:
            raise ValueError(f"{lerobot_root} has no TeleDex sidecar for episode {episode_index}: it was not recorded "
                             "by teledex-record, so its metadata and camera intrinsics are unknown")
        metadata = sidecar["metadata"]
        camera_info = {n: CameraInfo(**{**c, "distortion": tuple(c["distortion"])})
                       for n, c in sidecar["camera_info"].items()}
        policy = SyncPolicy(**sidecar["sync_policy"])
        session = Path(native_root) / (metadata["episode"].get("session_id") or "session_converted")
        session.mkdir(parents=True, exist_ok=True)
        writer = NativeEpisodeWriter(session, episode_index, joint_names=joint_names, source_names=sources,
                                     cameras=camera_info, fps=dataset.fps)
        start = int(dataset.meta.episodes[episode_index]["dataset_from_index"])
        stop = int(dataset.meta.episodes[episode_index]["dataset_to_index"])
        for index in range(start, stop):
            item = dataset[index]
            stamps = {s: _none_if_missing(int(item[source_column(s)])) for s in sources}
            packet = validate_timestamps(stamps, int(item[FRAME_TIME]), policy)
            if bool(item[SYNC_VALID]) != packet.valid:
                raise ValueError(f"Episode {episode_index} frame {index - start}: the recorded sync_valid disagrees "
                                 f"with its timestamps under the recorded policy {policy}")
            images = {name: _to_hwc_uint8(item[f"observation.images.{name}"]) for name in cameras}
            writer.add_frame(frame_ns=int(item[FRAME_TIME]), qpos=item["observation.state"].numpy(),
                             action=item["action"].numpy(), packet=packet, images=images)
        written.append(writer.save(metadata))
        progress(f"LeRobot episode {episode_index} -> {written[-1]}")
    return written


def _none_if_missing(stamp: int) -> int | None:
    return None if stamp < 0 else stamp


def _to_hwc_uint8(image) -> np.ndarray:
    array = image.numpy() if hasattr(image, "numpy") else np.asarray(image)
    if array.dtype != np.uint8:  # LeRobot returns float CHW in [0, 1]
        array = np.clip(np.round(array * 255), 0, 255).astype(np.uint8)
    return np.ascontiguousarray(array.transpose(1, 2, 0) if array.shape[0] in (1, 3) else array)


def _check_same_layout(episode, joint_names: list[str], sources: list[str], folder: Path) -> None:
    if [str(j) for j in episode.telemetry["joint_names"]] != joint_names or \
            [str(s) for s in episode.telemetry["source_names"]] != sources:
        raise ValueError(f"{folder}: joints or sources differ from the first episode; one LeRobot dataset holds one "
                         "robot layout. Convert these sessions separately.")
