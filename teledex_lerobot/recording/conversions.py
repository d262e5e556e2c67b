"""The conversions between the two formats, through the same sinks the recorder uses (lerobot_dataset.py and
storage/native.py; teledex-convert runs them): what a conversion writes is what a recording would have written.
Every episode is read and checked (manifests and checksums, JSON fields, sidecars, layouts) before anything is
written: a bad file leaves no half-converted target."""

import json
import tempfile
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

import datasets
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from lerobot.configs import DepthEncoderConfig
from lerobot.datasets.feature_utils import get_hf_features_from_features
from lerobot.utils.constants import OBS_ENV_STATE

from ..geometry.camera import CameraInfo
from ..storage.errors import DatasetError
from ..storage.frame import FrameLayout, RecordedFrame
from ..storage.lerobot_meta import read_info, read_sidecar, sidecar_path
from ..storage.native import NativeEpisode, NativeSink, load_native_episode, native_episode_dirs
from ..storage.repair import committed_episodes
from ..storage.sink import EpisodeHeader, commit_pair
from ..storage.sync_rule import RecordedRule, recorded_rule
from ..storage.teledex_columns import (
    DEVICE_FAULT,
    EPISODE_UUID,
    FRAME_TIME,
    SUCCESS,
    SYNC_VALID,
    TACTILE,
    source_column,
)
from ..storage.video import copy_video_segment, video_frames
from ..sync import SyncPacket
from .lerobot_dataset import (
    LeRobotSink,
    feature_depth_quantization,
    lerobot_frame,
    quiet_depth_encoder,
    read_depth_video,
)


def stream_shapes(cameras: dict[str, CameraInfo], depth: dict) -> dict[str, tuple[int, int, int]]:
    return {n: (c.height, c.width, 1 if n in depth else 3) for n, c in cameras.items()}


def layout_of(episode: NativeEpisode) -> FrameLayout:
    return FrameLayout(state_names=tuple(episode.names("state_names")),
                       action_names=tuple(episode.names("action_names")),
                       tactile_names=tuple(episode.names("tactile_names")),
                       cameras=stream_shapes(episode.camera_info, episode.depth),
                       source_names=tuple(episode.names("source_names")),
                       fps=int(episode.field("collection.control_frequency_hz")),
                       environment_names=tuple(episode.names("environment_names"))
                       if "environment_names" in episode.telemetry else (),
                       judged="success" in episode.telemetry)


def rejudged_packet(stamps_row, frame_ns: int, sources, rule: RecordedRule, recorded_valid: bool,
                    where: str) -> SyncPacket:
    """The frame judged again by the rule its recording was judged by, which must agree with the recorded verdict."""
    packet = rule.judge(SyncPacket.stamps_from(sources, stamps_row), int(frame_ns))
    if packet.valid != bool(recorded_valid):
        raise DatasetError(f"{where}: the recorded sync_valid disagrees with its timestamps under the recorded "
                           f"policy {rule.policy} (sync rule version {rule.version}); the file changed after it was "
                           "recorded: restore it from a copy, or record the episode again")
    return packet


def frame_faults(metadata: dict, in_fault: bool, where: str) -> dict[str, str]:
    """A converted frame's faults: the flag is stored per frame, which part and why once per episode (metadata)."""
    if not in_fault:
        return {}
    faults = {part: fault["message"] for part, fault in metadata.get("faults", {}).items()}
    if not faults:
        raise DatasetError(f"{where}: marked {DEVICE_FAULT} but the episode's metadata lists no fault")
    return faults


def native_to_lerobot(native_root: Path, lerobot_root: Path, repo_id: str, progress=print) -> int:
    folders = native_episode_dirs(native_root)
    if not folders:
        raise DatasetError(f"No episodes under {native_root} (expected session_*/episode_* folders)")
    episodes = [load_native_episode(folder, verify_checksums=True) for folder in folders]
    first = episodes[0]
    layout = layout_of(first)
    for episode in episodes:
        if layout_of(episode) != layout:
            raise DatasetError(f"{episode.path}: names, cameras, sources or rate differ from {folders[0]}; one "
                               "LeRobot dataset holds one layout. Convert these sessions separately.")
        for dotted in ("sync.policy", "episode.task_name", "hardware.robot_type"):
            episode.field(dotted)  # there, or one line now rather than once LeRobot's files are begun
        _rule_of(episode)  # one this teledex-lerobot knows, likewise
    quantizations = {json.dumps(q, sort_keys=True) for e in episodes for q in e.depth.values()}
    if len(quantizations) > 1:
        raise DatasetError(f"{native_root}: depth streams quantized differently ({', '.join(sorted(quantizations))});"
                           " a LeRobot dataset encodes all its depth with one. Convert them separately.")
    writer_options = {"streaming_encoding": True}
    if quantizations:
        writer_options["depth_encoder"] = quiet_depth_encoder(DepthEncoderConfig(**json.loads(quantizations.pop())))
    sink = LeRobotSink.open(repo_id, Path(lerobot_root), layout.fps, first.field("hardware.robot_type"),
                            layout, resume=False, use_video=True, writer_options=writer_options, extra_sidecar={})
    try:
        for index, episode in enumerate(episodes):
            folder = episode.path
            sink.extra_sidecar = {"camera_info": {n: asdict(c) for n, c in episode.camera_info.items()},
                                  "sync_policy": episode.field("sync.policy"),  # as recorded, its rule's version too
                                  "source_names": list(layout.source_names)}
            # decoded a frame at a time: an episode's pictures are never all in memory
            videos = {name: read_depth_video(episode.video_path(name), episode.depth[name]) if name in episode.depth
                      else video_frames(episode.video_path(name)) for name in layout.cameras}
            sink.begin(EpisodeHeader(episode.episode_uuid, index, episode.field("episode.task_name")))
            for frame in native_frames(episode, layout, videos):
                sink.add(frame)
            metadata = {**episode.metadata, "lerobot": {**episode.metadata.get("lerobot", {}),
                                                        "episode_index": index}}
            commit_pair(sink, None, metadata)
            progress(f"{folder.name} -> LeRobot episode {index}")
    finally:
        sink.close()
    return len(folders)


def native_frames(episode: NativeEpisode, layout: FrameLayout, videos: dict | None = None) -> Iterator[RecordedFrame]:
    """A native episode's frames as the recorder fed them to its sinks, each checked against the recorded sync
    policy; videos: camera -> its frames, decoded one at a time (none: frames without pictures)."""
    t = episode.telemetry
    rule = _rule_of(episode)
    for i in range(len(t["frame_timestamps_ns"])):
        where = f"{episode.path} frame {i}"
        packet = rejudged_packet(t["source_timestamps_ns"][i], t["frame_timestamps_ns"][i], layout.source_names,
                                 rule, t["sync_valid"][i], where)
        yield RecordedFrame(t["qpos"][i], t["action"][i], t["tactile"][i],
                            {name: _next_picture(frames, episode.video_path(name), i)
                             for name, frames in (videos or {}).items()}, packet,
                            frame_faults(episode.metadata, t["device_fault"][i], where),
                            environment=t["environment_state"][i] if layout.environment_names else np.zeros(0),
                            success=layout.judged and bool(t["success"][i]))


def _rule_of(episode: NativeEpisode) -> RecordedRule:
    return recorded_rule(episode.field("sync.policy"), episode.path / "metadata.json")


def lerobot_columns(episode: NativeEpisode, features: dict) -> pa.Table:
    """The columns a LeRobot dataset of these features holds for a native episode's frames, as to-lerobot writes
    them (lerobot_frame, LeRobot's own column types): all the native format holds, that is all but the pictures and
    LeRobot's index columns (timestamp, frame_index, episode_index, index, task_index). teledex-repair restores a
    data file's lost column from them."""
    layout = layout_of(episode)
    header = EpisodeHeader(episode.episode_uuid, episode.index, episode.field("episode.task_name"))
    rows, previous_ns = [], None
    for frame in native_frames(episode, layout):
        rows.append(lerobot_frame(layout, frame, header, previous_ns))
        previous_ns = frame.frame_ns
    held = {key: {**feature, "shape": tuple(feature["shape"])} for key, feature in features.items()
            if rows and key in rows[0]}
    hf_features = get_hf_features_from_features(held)
    columns: dict[str, np.ndarray] = {key: np.stack([row[key] for row in rows]).reshape(len(rows), -1)
                                      for key in hf_features}
    columns = {key: values[:, 0] if held[key]["shape"] == (1,) else values for key, values in columns.items()}
    return datasets.Dataset.from_dict(columns, features=hf_features).with_format("arrow")[:]


def _next_picture(frames, path: Path, index: int) -> np.ndarray:
    picture = next(frames, None)
    if picture is None:
        raise DatasetError(f"{path} ends at frame {index}, before the episode's telemetry does; "
                           "record or convert the episode again")
    return picture


def lerobot_to_native(lerobot_root: Path, native_root: Path, progress=print) -> list[Path]:
    lerobot_root = Path(lerobot_root)
    info = read_info(lerobot_root)
    features = info["features"]
    for key in ("observation.state", "action", EPISODE_UUID, SYNC_VALID, FRAME_TIME, DEVICE_FAULT):
        if key not in features:
            raise DatasetError(f"{lerobot_root}/meta/info.json has no feature {key!r}: it was not recorded by "
                               "teledex-record")
    episodes = committed_episodes(lerobot_root, complete=True)
    sidecars: dict[int, dict] = {}
    cameras_of: dict[int, dict[str, CameraInfo]] = {}
    rules: dict[int, RecordedRule] = {}
    for episode in episodes:  # every sidecar read and checked before anything is written
        index, episode_uuid = int(episode["episode_index"]), episode["episode_uuid"]
        sidecar = read_sidecar(lerobot_root, episode_uuid) if episode_uuid else None
        if sidecar is None:
            raise DatasetError(f"{lerobot_root} has no TeleDex sidecar for episode {index}: it was not recorded by "
                               "teledex-record, so its metadata and camera intrinsics are unknown")
        sidecars[index] = sidecar
        rules[index] = recorded_rule(sidecar["sync_policy"], sidecar_path(lerobot_root, episode_uuid))
        if unknown := [s for s in sidecar["source_names"] if source_column(s) not in features]:
            raise DatasetError(f"{sidecar_path(lerobot_root, episode_uuid)} names sync sources {unknown} that "
                               f"{lerobot_root}/meta/info.json has no t_<source>_ns feature for; restore the sidecar "
                               "from a copy of the dataset or from the native twin")
        try:
            cameras_of[index] = {n: CameraInfo(**{**c, "distortion": tuple(c["distortion"])})
                                 for n, c in sidecar["camera_info"].items()}
        except (TypeError, KeyError) as err:
            raise DatasetError(f"{sidecar_path(lerobot_root, episode_uuid)}: 'camera_info' is not camera name -> "
                               f"{{width, height, fx, fy, cx, cy, distortion, ...}} ({err}); restore it from a copy "
                               "of the dataset or from the native twin's camera_info.json") from None
    written = []
    with tempfile.TemporaryDirectory(dir=native_root.parent) as scratch:
        for episode in episodes:
            index, episode_uuid = int(episode["episode_index"]), episode["episode_uuid"]
            sidecar, cameras = sidecars[index], cameras_of[index]
            metadata = sidecar["metadata"]
            depth = {n: q for n in cameras
                     if (q := feature_depth_quantization(features.get(f"observation.images.{n}", {}))) is not None}
            layout = FrameLayout(
                state_names=tuple(features["observation.state"]["names"]),
                action_names=tuple(features["action"]["names"]),
                tactile_names=tuple(features[TACTILE]["names"]) if TACTILE in features else (),
                cameras=stream_shapes(cameras, depth),
                source_names=tuple(sidecar["source_names"]), fps=info["fps"],
                environment_names=tuple(features[OBS_ENV_STATE]["names"]) if OBS_ENV_STATE in features else (),
                judged=SUCCESS in features)
            data = lerobot_root / info["data_path"].format(chunk_index=episode["data/chunk_index"],
                                                          file_index=episode["data/file_index"])
            rows = pq.read_table(data).to_pandas()
            rows = rows[rows["episode_index"] == index]
            segments = {}
            for name in cameras:
                key = f"observation.images.{name}"
                source = lerobot_root / info["video_path"].format(
                    video_key=key, chunk_index=episode[f"videos/{key}/chunk_index"],
                    file_index=episode[f"videos/{key}/file_index"])
                segments[name] = Path(scratch) / f"{episode_uuid}_{name}.mp4"
                copied = copy_video_segment(source, segments[name], episode[f"videos/{key}/from_timestamp"],
                                            episode[f"videos/{key}/to_timestamp"])
                if copied != len(rows):
                    raise DatasetError(f"{source}: episode {index} has {copied} video frames for {len(rows)} rows")
            session = Path(native_root) / (metadata["episode"].get("session_id") or "session_converted")
            session.mkdir(parents=True, exist_ok=True)
            sink = NativeSink(session, layout, cameras, staged_video=segments.__getitem__, depth=depth)
            sink.begin(EpisodeHeader(episode_uuid, index, metadata["episode"]["task_name"]))
            stamps = np.stack([rows[source_column(s)].to_numpy() for s in layout.source_names], axis=1)
            for i, (_, row) in enumerate(rows.iterrows()):
                where = f"{lerobot_root} episode {index} frame {i}"
                packet = rejudged_packet(stamps[i], row[FRAME_TIME], layout.source_names, rules[index],
                                         row[SYNC_VALID], where)
                sink.add(RecordedFrame(np.asarray(row["observation.state"]), np.asarray(row["action"]),
                                       np.asarray(row[TACTILE]) if layout.tactile_names else np.zeros(0), {}, packet,
                                       frame_faults(metadata, row[DEVICE_FAULT], where),
                                       environment=np.asarray(row[OBS_ENV_STATE]) if layout.environment_names
                                       else np.zeros(0), success=layout.judged and bool(row[SUCCESS])))
            commit_pair(sink, None, {**metadata, "lerobot": {**metadata.get("lerobot", {}), "episode_index": index}})
            written.append(sink.final_dir)
            progress(f"LeRobot episode {index} -> {sink.final_dir}")
    return written
