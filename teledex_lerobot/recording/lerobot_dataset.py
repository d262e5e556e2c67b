"""The LeRobotDataset side of a TeleDex recording (LeRobot glue, hence in recording/ and not in storage/, which
imports no LeRobot): the features and columns, the LeRobot sink, and the one video encoder both formats share.

Columns beside LeRobot's own (unprefixed, so no policy takes them as inputs; every one is marked in its feature
metadata `info.teledex` as recording metadata, not a sensor):
- episode_uuid (int64 x 2, the uuid's 128 bits): pairs this episode with its native twin, kept through LeRobot's
  merge, split and delete tools;
- sync_valid (bool), sync_max_diff_ms (float32), t_frame_ns and t_<source>_ns (int64, -1 = none: never measured,
  or the part was in fault): the sync packet;
- frame_interval_ms (float32, 0 on an episode's first frame) and frame_after_gap (bool): the frame timing, because
  LeRobot's own `timestamp` column is frame_index / fps and cannot show a dropped tick;
- device_fault (bool): a device was in fault (storage/teledex_columns.py): never sync_valid; once the fault latched,
  the action is the target the hardware held; which device and why are in the episode's metadata ("faults");
- next.success (bool, LeRobot's own name), from robots that judge their episodes (a simulated world): the task has
  succeeded by this frame; an episode's last frame says whether it succeeded.
Tactile taxels are the feature observation.tactile, never part of observation.state.

Depth maps (a camera's `<camera>_depth`, uint16 millimetres) are LeRobot's own depth features: a video LeRobot
marks is_depth_map and encodes with --dataset.depth_encoder (12-bit codes of its log quantization between
depth_min and depth_max, HEVC lossless by default), and LeRobotDataset decodes to millimetres or metres. The native
layout keeps that very file and the quantization (depth_quantization); read_depth_video decodes it as LeRobot does.

Timestamps are int64 ns because float64 columns come back as float32 through the dataset's __getitem__.

Crash safety: LeRobot keeps its parquet file open and buffers episode metadata, so a killed process would corrupt
every episode of the session. After each saved episode the dataset is finalized and reopened (resume): each episode
then lives in files that are closed and complete before the next one starts.
"""

import json
import queue
import shutil
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import av
import numpy as np
from lerobot.configs import DepthEncoderConfig
from lerobot.configs.video import DEPTH_ENCODER_INFO_FIELD_NAMES, encoder_config_from_video_info
from lerobot.datasets import LeRobotDataset
from lerobot.datasets.depth_utils import dequantize_depth
from lerobot.datasets.video_utils import StreamingVideoEncoder
from lerobot.utils.constants import OBS_ENV_STATE
from lerobot.utils.feature_utils import hw_to_dataset_features

from ..storage.errors import DatasetError
from ..storage.frame import FrameLayout, RecordedFrame, source_stamps
from ..storage.lerobot_meta import sidecar_path
from ..storage.native import write_json_atomic
from ..storage.sink import EpisodeHeader, EpisodeSink
from ..storage.teledex_columns import (
    DEVICE_FAULT,
    EPISODE_UUID,
    FRAME_AFTER_GAP,
    FRAME_INTERVAL_MS,
    FRAME_TIME,
    INFO_BACKUP,
    SUCCESS,
    SYNC_MAX_DIFF_MS,
    SYNC_VALID,
    TACTILE,
    source_column,
    uuid_to_int64_pair,
)
from ..sync import frame_timing

_MARK = {"teledex": "recording metadata, not a sensor and not a policy input"}


def _column(dtype: str, description: str) -> dict:
    return {"dtype": dtype, "shape": (1,), "names": None, "info": {**_MARK, "description": description}}


def dataset_features(layout: FrameLayout, use_video: bool) -> dict:
    features = {
        **hw_to_dataset_features(dict.fromkeys(layout.action_names, float), "action", use_video),
        **hw_to_dataset_features({**dict.fromkeys(layout.state_names, float), **layout.cameras}, "observation",
                                 use_video),
    }
    if layout.tactile_names:
        features[TACTILE] = {"dtype": "float32", "shape": (len(layout.tactile_names),),
                             "names": list(layout.tactile_names)}
    if layout.environment_names:
        features[OBS_ENV_STATE] = {"dtype": "float32", "shape": (len(layout.environment_names),),
                                   "names": list(layout.environment_names)}
    features.update({
        EPISODE_UUID: {"dtype": "int64", "shape": (2,), "names": ["uuid_high64", "uuid_low64"],
                       "info": {**_MARK, "description": "the episode uuid's 128 bits: pairs this episode with the "
                                                        "native episode of the same uuid"}},
        SYNC_VALID: _column("bool", "the frame passed the freshness and consistency checks"),
        SYNC_MAX_DIFF_MS: _column("float32", "newest minus oldest source capture time in the frame, ms"),
        FRAME_TIME: _column("int64", "when the frame was checked, monotonic ns"),
        FRAME_INTERVAL_MS: _column("float32", "time since the episode's previous frame, ms (0 on the first)"),
        FRAME_AFTER_GAP: _column("bool", "the frame follows a gap of more than 1.5 control periods"),
        DEVICE_FAULT: _column("bool", "a device was in fault: not a demonstration (once latched, the action is the "
                                      "target it held)"),
    })
    if layout.judged:
        features[SUCCESS] = _column("bool", "the task has succeeded by this frame (the simulated world's judgement)")
    for source in layout.source_names:
        features[source_column(source)] = _column(
            "int64", f"capture time of {source}, monotonic ns, -1 = none (never measured, or in fault)")
    return features


def lerobot_frame(layout: FrameLayout, frame: RecordedFrame, header: EpisodeHeader, previous_ns: int | None) -> dict:
    """previous_ns: the check time of the episode's previous frame, None on its first."""
    timing = frame_timing([frame.frame_ns], layout.fps, previous_ns)
    values = {
        "action": frame.action.astype(np.float32),
        "observation.state": frame.state.astype(np.float32),
        EPISODE_UUID: uuid_to_int64_pair(header.episode_uuid),
        SYNC_VALID: np.array([frame.packet.valid]),
        SYNC_MAX_DIFF_MS: np.array([frame.packet.max_diff_ms], dtype=np.float32),
        FRAME_TIME: np.array([frame.frame_ns], dtype=np.int64),
        FRAME_INTERVAL_MS: (timing.interval_ns / 1e6).astype(np.float32),
        FRAME_AFTER_GAP: timing.after_gap,
        DEVICE_FAULT: np.array([bool(frame.faults)]),
        "task": header.task,
    }
    if layout.tactile_names:
        values[TACTILE] = frame.tactile.astype(np.float32)
    if layout.environment_names:
        values[OBS_ENV_STATE] = frame.environment.astype(np.float32)
    if layout.judged:
        values[SUCCESS] = np.array([frame.success])
    for name, image in frame.images.items():
        values[f"observation.images.{name}"] = image
    for source, stamp in zip(layout.source_names, source_stamps([frame], layout.source_names).T, strict=True):
        values[source_column(source)] = stamp  # (1,) int64
    return values


def depth_quantization(encoder: DepthEncoderConfig) -> dict:
    """What decoding a depth video needs of its encoder (depth_min, depth_max, shift in metres; use_log): the
    native manifest's "depth" entry."""
    return {name: getattr(encoder, name) for name in sorted(DEPTH_ENCODER_INFO_FIELD_NAMES)}


def feature_depth_quantization(feature: dict) -> dict | None:
    """A LeRobot video feature's depth quantization, from its info as LeRobot reads it; None for colour."""
    encoder = encoder_config_from_video_info(feature.get("info"))
    return depth_quantization(encoder) if isinstance(encoder, DepthEncoderConfig) else None


def quiet_depth_encoder(encoder: DepthEncoderConfig) -> DepthEncoderConfig:
    """The encoder, with x265's banner and statistics (some 25 lines per episode and depth stream) kept off the
    terminal unless its x265-params say otherwise."""
    params = encoder.extra_options.get("x265-params", "")
    if encoder.vcodec not in ("hevc", "libx265") or "log-level" in params:
        return encoder
    return replace(encoder, extra_options={**encoder.extra_options,
                                           "x265-params": ":".join(filter(None, (params, "log-level=error")))})


def read_depth_video(path: Path, quantization: dict, nothing_seen_as_zero: bool = False) -> Iterator[np.ndarray]:
    """The frames of a depth video, as LeRobotDataset decodes them: (H, W, 1) uint16 millimetres. LeRobot's
    quantization stores "nothing seen" (0) as code 0, which it decodes as depth_min (10 mm by default), like a near
    object; nothing_seen_as_zero makes code 0 (nothing seen, or within half a step of depth_min) 0 again."""
    with av.open(str(path)) as container:
        for frame in container.decode(video=0):
            codes = frame.to_ndarray(format="gray12le")
            depth = dequantize_depth(codes, **quantization, output_unit="mm", output_tensor=False,
                                     output_channel_last=True)
            if nothing_seen_as_zero:
                depth[codes == 0] = 0
            yield depth


class SharedVideoEncoder(StreamingVideoEncoder):
    """LeRobot's own streaming encoder (its codec settings, its video statistics), with two changes: a frame is never
    dropped (a full queue makes the control loop wait, which then shows as dropped ticks in the frame timing), and
    an episode's videos can be finished before LeRobot's save, so the native episode stages the very same files."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.finished: dict[str, tuple[Path, dict | None]] | None = None

    def feed_frame(self, video_key: str, image: np.ndarray) -> None:
        thread = self._threads[video_key]
        while True:
            if not thread.is_alive():
                super().feed_frame(video_key, image)  # raises with the encoder's own error
            try:
                self._frame_queues[video_key].put(image.copy(), timeout=0.5)
                return
            except queue.Full:  # the encoder is behind: wait rather than lose the frame
                continue

    def finish_now(self) -> dict[str, Path]:
        if self.finished is None:
            self.finished = super().finish_episode()
        return {key: path for key, (path, _) in self.finished.items()}

    def finish_episode(self):
        finished, self.finished = self.finished, None
        return finished if finished is not None else super().finish_episode()

    def discard_finished(self) -> None:
        for path, _ in (self.finished or {}).values():
            shutil.rmtree(path.parent, ignore_errors=True)
        self.finished = None


class _Dataset(LeRobotDataset):
    @staticmethod
    def _build_streaming_encoder(fps, rgb_encoder, depth_encoder, encoder_queue_maxsize, encoder_threads):
        return SharedVideoEncoder(fps=fps, rgb_encoder=rgb_encoder, depth_encoder=depth_encoder,
                                  queue_maxsize=encoder_queue_maxsize, encoder_threads=encoder_threads)


class LeRobotSink(EpisodeSink):
    """Appends episodes to a LeRobotDataset. Staging = LeRobot's episode buffer plus the finished videos and the
    episode's sidecar (metadata, camera intrinsics, sync policy), which names its uuid; commit = save_episode and
    the finalize/reopen that closes the episode's files."""

    def __init__(self, dataset: LeRobotDataset, layout: FrameLayout, writer_options: dict, extra_sidecar: dict):
        self.dataset = dataset
        self.layout = layout
        self.writer_options = writer_options
        self.extra_sidecar = extra_sidecar  # camera_info, sync_policy, source names: the same for every episode
        self.header: EpisodeHeader | None = None
        self._previous_ns: int | None = None
        self._videos: dict[str, Path] = {}
        self._sidecar: Path | None = None

    @classmethod
    def open(cls, repo_id: str, root: Path, fps: int, robot_type: str, layout: FrameLayout, resume: bool,
             use_video: bool, writer_options: dict, extra_sidecar: dict,
             former_robot_type: str | None = None) -> "LeRobotSink":
        """former_robot_type: what this robot's datasets said before robot_type named the rig (its class's name,
        "teledex"); a dataset saying it resumes, and keeps it (one robot_type per dataset)."""
        features = dataset_features(layout, use_video)
        if resume:
            dataset = _Dataset.resume(repo_id, root=root, **writer_options)
            check_compatible(dataset, features, fps, robot_type, writer_options.get("depth_encoder"),
                             former_robot_type)
        else:
            dataset = _Dataset.create(repo_id, fps, root=root, robot_type=robot_type, features=features,
                                      use_videos=use_video, **writer_options)
        return cls(dataset, layout, writer_options, extra_sidecar)

    @property
    def root(self) -> Path:
        return Path(self.dataset.root)

    @property
    def next_index(self) -> int:
        return self.dataset.meta.total_episodes

    def _encoder(self) -> SharedVideoEncoder | None:
        return self.dataset.writer._streaming_encoder  # set by _Dataset; None without video features

    def begin(self, header: EpisodeHeader) -> None:
        if header.index != self.next_index:
            raise ValueError(f"LeRobot's next episode is {self.next_index}, not {header.index}")
        self.header = header
        self._previous_ns = None

    @property
    def _episode(self) -> EpisodeHeader:
        """The episode begun (begin())."""
        if self.header is None:
            raise RuntimeError("LeRobotSink has no episode: begin() one first")  # the caller's bug
        return self.header

    def add(self, frame: RecordedFrame) -> None:
        self.dataset.add_frame(lerobot_frame(self.layout, frame, self._episode, self._previous_ns))
        self._previous_ns = frame.frame_ns

    def staged_video(self, camera: str) -> Path:
        return self._videos[f"observation.images.{camera}"]

    def stage(self, metadata: dict) -> None:
        encoder = self._encoder()
        self._videos = encoder.finish_now() if encoder is not None and self.layout.cameras else {}
        self._sidecar = sidecar_path(self.root, self._episode.episode_uuid)
        self._sidecar.parent.mkdir(parents=True, exist_ok=True)
        write_json_atomic(self._sidecar, {"episode_uuid": self._episode.episode_uuid, "metadata": metadata,
                                          **self.extra_sidecar})
        write_json_atomic(self.root / INFO_BACKUP, json.loads((self.root / "meta" / "info.json").read_text()))

    def commit(self) -> None:
        self.dataset.save_episode()
        self.dataset.finalize()
        self.dataset = _Dataset.resume(self.dataset.repo_id, root=self.root, **self.writer_options)
        self._sidecar = None
        self._videos = {}

    def abort(self) -> None:
        encoder = self._encoder()
        if encoder is not None:
            encoder.discard_finished()
        if self.dataset.has_pending_frames():
            self.dataset.clear_episode_buffer()
        if self._sidecar is not None:
            self._sidecar.unlink(missing_ok=True)
            self._sidecar = None
        self._videos = {}

    def release(self) -> None:
        # the sidecar stays with the episode LeRobot may have committed; close() still drops the unsaved buffer
        self._sidecar = None
        self._videos = {}

    def close(self) -> None:
        self.abort()
        self.dataset.finalize()


def check_compatible(dataset: LeRobotDataset, features: dict, fps: int, robot_type: str,
                     depth_encoder: DepthEncoderConfig | None = None, former_robot_type: str | None = None) -> None:
    """Resuming must not mix recordings of another rate, robot, feature set or depth quantization (LeRobot decodes
    every episode with the one in info.json) into one dataset."""
    problems = []
    if dataset.fps != fps:
        problems.append(f"fps: dataset has {dataset.fps}, this recording uses {fps} (set --dataset.fps={dataset.fps})")
    if dataset.meta.robot_type not in (robot_type, former_robot_type):
        problems.append(f"robot type: dataset has {dataset.meta.robot_type!r}, the robot is {robot_type!r}")
    existing = {k: (v["dtype"], tuple(v["shape"]), v.get("names")) for k, v in dataset.features.items()
                if k in features}
    wanted = {k: (v["dtype"], tuple(v["shape"]), v.get("names")) for k, v in features.items()}
    missing = sorted(set(features) - set(dataset.features))
    differing = sorted(k for k in existing if existing[k] != wanted[k])
    if missing or differing:
        problems.append(f"features: new {missing}, different {differing}; record into a new dataset root instead")
    if depth_encoder is not None and dataset.meta.total_episodes:
        wanted_depth = depth_quantization(depth_encoder)
        for key in dataset.meta.depth_keys:
            if (recorded := feature_depth_quantization(dataset.features[key])) != wanted_depth:
                problems.append(f"depth quantization of {key}: dataset has {recorded}, this recording uses "
                                f"{wanted_depth} (set --dataset.depth_encoder.<name> to the dataset's)")
    if problems:
        raise DatasetError(f"Cannot resume {dataset.root}: " + "; ".join(problems) + ". Nothing was changed.")
