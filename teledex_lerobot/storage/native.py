"""The native TeleDex episode layout, written (as a sink) and read.

    <root>/session_<YYYY-MM-DD_HH-MM-SS>/
        session.json                 format, ids, the paired LeRobot dataset, rate, robot type, names, sync policy
        episode_<NNNNNN>/            NNNNNN = the episode's index in the paired LeRobotDataset
            telemetry.npz            state_names, action_names, tactile_names; qpos (T, n_state), qvel, action
                                     (T, n_action), tactile (T, n_taxels), environment_state (T, n_env; with
                                     environment_names, from recordings of a simulated world) float32 (what LeRobot
                                     stores, so the formats
                                     convert both ways losslessly); frame_timestamps_ns, frame_interval_ns (T,) int64,
                                     frame_after_gap (T,) bool; source_names (S,), source_timestamps_ns (T, S) int64
                                     (-1 = none: never measured, or the part was in fault); sync_valid, sync_fresh,
                                     sync_consistent (T,) bool; sync_max_diff_ns; device_fault (T,) bool: a device
                                     was in fault (storage/teledex_columns.py); success (T,) bool, from robots that
                                     judge their episodes (a simulated world): the task has succeeded by the frame
            manifest.json            format, episode uuid, frame count, every file with its size and SHA-256, each
                                     depth stream's quantization (below)
            metadata.json            task, ids (episode uuid shared with the LeRobot episode), duration, hardware,
                                     cameras, collection settings, sync and frame-timing figures, faults
            camera_info.json         per camera stream: resolution, pinhole intrinsics, distortion, extrinsics if
                                     known; a depth stream its depth scale too; a stereo pair (one side-by-side
                                     image) its baseline, with the left eye's intrinsics and pose (CameraInfo)
            videos/<camera>.mp4      the very file LeRobot stores for the episode (one encode for both formats)
            videos/<camera>_depth.mp4  a camera's depth map, aligned to its colour, the very file LeRobot stores: 12-bit
                                     codes of LeRobot's depth quantization (manifest "depth": depth_min, depth_max,
                                     shift, use_log, in metres), losslessly encoded; decoded with LeRobot's
                                     dequantize_depth (recording/lerobot_dataset.py read_depth_video)

An episode is staged in episode_<NNNNNN>.partial/ and renamed into place only once every file is complete and
flushed, so a reader never sees a half-written episode.

This module owns the format: what is written (create_session, shared_metadata, NativeSink) and what is checked on
read (load_native_episode). The sync policy is stored with the version of the rule that judged by it (sync_rule.py).
"""

import errno
import hashlib
import json
import os
import shutil
import zipfile
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..geometry.camera import CameraInfo
from ..sync import SyncPolicy, frame_timing
from . import fields
from .errors import DatasetError
from .fields import ABSENT, NAME, SYNC_POLICY
from .frame import FrameLayout, RecordedFrame, source_stamps
from .sink import EpisodeHeader, EpisodeSink
from .sync_rule import stored_policy
from .video import H264Writer

if TYPE_CHECKING:  # the rig's models are not loaded to write what they are
    from ..rig import Rig

NATIVE_FORMAT = "teledex-native/3"  # 3: device_fault
PARTIAL_SUFFIX = ".partial"
TELEMETRY_KEYS = ("state_names", "action_names", "tactile_names", "qpos", "qvel", "action", "tactile",
                  "frame_timestamps_ns", "frame_interval_ns", "frame_after_gap", "source_names",
                  "source_timestamps_ns", "sync_valid", "sync_fresh", "sync_consistent", "sync_max_diff_ns",
                  "device_fault")


# What manifest.json, metadata.json and camera_info.json hold, checked on read (fields.py); the manifest's fields are
# required but depth, metadata.json's where a reader needs them (NativeEpisode.field).
_MANIFEST_FIELDS: fields.Fields = {
    "format": (fields.text, "a format name"),
    "episode_uuid": (fields.a_uuid, "a uuid such as 'f47ac10b-58cc-4372-a567-0e02b2c3d479'"),
    "frames": (fields.count, "a frame count (a whole number >= 0)"),
    "cameras": (lambda v: isinstance(v, dict) and all(fields.name(k) and fields.inside(p) for k, p in v.items()),
                "an object of camera name -> its video's path inside the episode folder"),
    "files": (lambda v: isinstance(v, dict) and all(
        fields.inside(k) and isinstance(e, dict) and fields.count(e.get("bytes")) and fields.text(e.get("sha256"))
        for k, e in v.items()), "an object of path inside the episode folder -> {bytes, sha256}"),
    "depth": (lambda v: isinstance(v, dict) and all(fields.name(k) and _depth_quantization(e) for k, e in v.items()),
              "an object of depth stream name -> {depth_min, depth_max, shift, use_log}"),
}
_MANIFEST_REQUIRED = tuple(name for name in _MANIFEST_FIELDS if name != "depth")  # a recording without depth
_METADATA_FIELDS: fields.Fields = {
    "episode": (fields.an_object, "an object"),
    "episode.episode_uuid": (fields.a_uuid, "a uuid"),
    "episode.task_name": (fields.text, "a string"),
    "episode.episode_id": (fields.optional_name, NAME),
    "episode.session_id": (fields.optional_name, NAME),
    "collection": (fields.an_object, "an object"),
    "collection.control_frequency_hz": (fields.positive_number, "a positive number of frames per second"),
    "sync": (fields.an_object, "an object"),
    "sync.policy": (fields.sync_policy, SYNC_POLICY),
    "hardware": (fields.an_object, "an object"),
    "hardware.robot_type": (fields.optional_text, "a string"),
    "faults": (lambda v: isinstance(v, dict) and all(isinstance(f, dict) and fields.text(f.get("message"))
                                                     for f in v.values()),
               "an object of part -> {message, first_frame, frames}"),
    "lerobot": (fields.an_object, "an object"),
    "merged_from": (fields.a_list, "a list"),
}


def _depth_quantization(entry) -> bool:
    return (isinstance(entry, dict) and isinstance(entry.get("use_log"), bool) and fields.number(entry.get("shift"))
            and all(fields.positive_number(entry.get(k)) for k in ("depth_min", "depth_max")))


class NativeFormatError(DatasetError):
    """`problem`: what is wrong, where; the message adds the fix."""

    def __init__(self, problem: str, fix: str = ""):
        super().__init__(f"{problem}; {fix}" if fix else problem)
        self.problem = problem


def episode_dir_name(index: int) -> str:
    return f"episode_{index:06d}"


def episode_index_of(folder: Path) -> int:
    number = folder.name.removesuffix(PARTIAL_SUFFIX).split("_")[-1]
    if not number.isdigit():
        raise NativeFormatError(f"{folder}: not an episode folder (episode_<NNNNNN>)",
                                "rename or move it out of the native root")
    return int(number)


def repair_fix(folder: Path) -> str:
    """The command that sets a damaged episode (or staging) folder aside."""
    native_root = Path(folder).parent.parent
    dataset = native_root.with_name(native_root.name.removesuffix("_native"))
    command = (f"teledex-repair {dataset}" if dataset != native_root
               else f"teledex-repair <the LeRobot dataset root> --native-root {native_root}")
    return f"run `{command}` to set the damaged episode aside (nothing is deleted)"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_json_atomic(path: Path, data) -> None:
    """Readers see the old file or the new one, never a torn one."""
    path = Path(path)
    temporary = path.with_name(f".{path.name}.tmp")
    try:
        with open(temporary, "w") as file:
            json.dump(data, file, indent=2)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def fsync_dir(folder: Path) -> None:
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _fsync_tree(folder: Path) -> None:
    for path in folder.rglob("*"):
        if path.is_file():
            with open(path, "rb") as file:
                os.fsync(file.fileno())
    fsync_dir(folder)


def telemetry_arrays(layout: FrameLayout, frames: list[RecordedFrame]) -> dict[str, np.ndarray]:
    """What telemetry.npz holds for these frames."""
    frame_ns = np.array([f.frame_ns for f in frames], dtype=np.int64)
    qpos = np.stack([f.state for f in frames]).astype(np.float32).reshape(len(frames), len(layout.state_names))
    timing = frame_timing(frame_ns, layout.fps)
    packets = [f.packet for f in frames]
    return {
        "state_names": np.asarray(layout.state_names, dtype=str),
        "action_names": np.asarray(layout.action_names, dtype=str),
        "tactile_names": np.asarray(layout.tactile_names, dtype=str),
        "qpos": qpos,
        # from the positions over the frames' own times: not every device reports velocities
        "qvel": (np.gradient(qpos.astype(np.float64), frame_ns / 1e9, axis=0).astype(np.float32)
                 if len(qpos) > 1 else np.zeros_like(qpos)),
        "action": np.stack([f.action for f in frames]).astype(np.float32).reshape(len(frames), -1),
        "tactile": np.stack([f.tactile for f in frames]).astype(np.float32).reshape(len(frames),
                                                                                     len(layout.tactile_names)),
        "environment_names": np.asarray(layout.environment_names, dtype=str),
        "environment_state": np.stack([f.environment for f in frames]).astype(np.float32).reshape(
            len(frames), len(layout.environment_names)),
        "frame_timestamps_ns": frame_ns,
        "frame_interval_ns": timing.interval_ns,
        "frame_after_gap": timing.after_gap,
        "source_names": np.asarray(layout.source_names, dtype=str),
        "source_timestamps_ns": source_stamps(frames, layout.source_names),
        "sync_valid": np.array([p.valid for p in packets], dtype=bool),
        "sync_fresh": np.array([p.fresh for p in packets], dtype=bool),
        "sync_consistent": np.array([p.consistent for p in packets], dtype=bool),
        "sync_max_diff_ns": np.array([p.max_diff_ns for p in packets], dtype=np.int64),
        "device_fault": np.array([bool(f.faults) for f in frames], dtype=bool),
        **({"success": np.array([f.success for f in frames], dtype=bool)} if layout.judged else {}),
    }


def create_session(native_root: Path, lerobot_root: Path, repo_id: str, robot_type: str, layout: FrameLayout,
                   sync_policy: SyncPolicy) -> Path:
    """A new session folder under the native root, named by the time now, with its session.json: what every episode
    of the session shares. The folder."""
    session_id = f"session_{datetime.now():%Y-%m-%d_%H-%M-%S}"
    session_dir = Path(native_root) / session_id
    session_dir.mkdir(parents=True)
    write_json_atomic(session_dir / "session.json", {
        "format": NATIVE_FORMAT, "session_id": session_id, "lerobot_root": str(Path(lerobot_root).resolve()),
        "repo_id": repo_id, "fps": layout.fps, "robot_type": robot_type,
        "layout": {"state_names": layout.state_names, "action_names": layout.action_names,
                   "tactile_names": layout.tactile_names, "sources": layout.source_names,
                   "environment_names": layout.environment_names},
        "sync_policy": stored_policy(sync_policy)})
    return session_dir


@dataclass(frozen=True)
class RecordedCamera:
    """A camera as metadata.json's "cameras" describes it."""

    type: str  # its class's name
    width: int
    height: int
    fps: int
    depth: bool  # it records a depth stream too


def shared_metadata(layout: FrameLayout, robot_type: str, cameras: dict[str, RecordedCamera], video_codec: str,
                    repo_id: str, lerobot_root: Path, preset: str | None = None, backend: str | None = None,
                    rig: "Rig | None" = None, followers: "dict[str, tuple[Rig, np.ndarray]] | None" = None) -> dict:
    """What every episode's metadata.json shares (hardware, cameras, collection settings, the paired dataset); the
    recording adds each episode's own fields. rig: the robot's, recorded with its parts' specs and hand mount, so
    exports compute kinematics from the episode's own models and mount; followers (several rigs): each one's rig and
    its base in the first one's base frame (4x4), as hardware.rigs, keyed by the follower (its keys' prefix)."""
    models = {role: part.spec.model for role, part in rig.parts.items()} if rig is not None else {}
    rigs = None if followers is None else {name: {**_rig_record(follower), "base_pose": np.asarray(base).tolist()}
                                           for name, (follower, base) in followers.items()}
    return {
        "format": NATIVE_FORMAT,
        "hardware": {"preset": preset, "robot_type": robot_type, "arm_type": models.get("arm"),
                     "hand_type": models.get("hand"), "backend": backend, "total_dof": len(layout.action_names),
                     "rig": None if rig is None else _rig_record(rig), **({"rigs": rigs} if rigs else {})},
        "cameras": {name: asdict(camera) for name, camera in cameras.items()},
        "collection": {"control_frequency_hz": layout.fps, "dt_s": 1 / layout.fps, "video_codec": video_codec,
                       "data_format": "video_compressed", "qpos_dim": len(layout.state_names),
                       "camera_streams": list(cameras), "tactile_dim": len(layout.tactile_names),
                       "tactile_sensors": ["hand"] if layout.tactile_names else []},
        "lerobot": {"repo_id": repo_id, "root": str(Path(lerobot_root).resolve())},
    }


def _rig_record(rig: "Rig") -> dict:
    return {"parts": {role: asdict(part.spec) for role, part in rig.parts.items()},
            "hand_mount": asdict(rig.hand_mount_spec)}


def write_episode_files(folder: Path, telemetry: dict, metadata: dict, cameras: dict[str, CameraInfo],
                        depth: dict[str, dict]) -> None:
    """telemetry.npz, camera_info.json, metadata.json, then manifest.json over everything in the folder; flushed.
    depth: each depth stream's quantization."""
    np.savez(folder / "telemetry.npz", **telemetry)
    (folder / "camera_info.json").write_text(json.dumps({n: asdict(i) for n, i in cameras.items()}, indent=2))
    (folder / "metadata.json").write_text(json.dumps(metadata, indent=2))
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    (folder / "manifest.json").write_text(json.dumps({
        "format": NATIVE_FORMAT,
        "episode_uuid": metadata["episode"]["episode_uuid"],
        "frames": int(len(telemetry["frame_timestamps_ns"])),
        "cameras": {name: f"videos/{name}.mp4" for name in cameras},
        **({"depth": depth} if depth else {}),
        "files": {str(p.relative_to(folder)): {"bytes": p.stat().st_size, "sha256": _sha256(p)} for p in files},
    }, indent=2))
    _fsync_tree(folder)


class NativeSink(EpisodeSink):
    """Writes each episode into <session>/episode_<index>.partial and renames it into place on commit.

    Videos: with `staged_video` (camera -> path of the episode's encoded file, available once the other format has
    staged) the native episode takes that very file; without it (a recording with no LeRobot videos) it encodes its
    own H.264 while recording. Depth streams (`depth`: name -> the quantization LeRobot encoded them with) come
    from LeRobot's files only."""

    def __init__(self, session_dir: Path, layout: FrameLayout, cameras: dict[str, CameraInfo],
                 staged_video: Callable[[str], Path] | None = None, video_crf: int = 18,
                 depth: dict[str, dict] | None = None):
        self.session_dir = Path(session_dir)
        self.layout = layout
        self.cameras = dict(cameras)
        self.depth = dict(depth or {})
        self.staged_video = staged_video
        self.video_crf = video_crf
        self._frames: list[RecordedFrame] = []
        self._own_videos: dict[str, H264Writer] = {}
        self.header: EpisodeHeader | None = None

    @property
    def final_dir(self) -> Path:
        """The episode's folder (begun: begin())."""
        if self.header is None:
            raise RuntimeError("NativeSink has no episode: begin() one first")  # the caller's bug
        return self.session_dir / episode_dir_name(self.header.index)

    @property
    def staging_dir(self) -> Path:
        return self.final_dir.with_name(self.final_dir.name + PARTIAL_SUFFIX)

    def begin(self, header: EpisodeHeader) -> None:
        self.header = header
        existing = [d for d in self.session_dir.parent.glob(f"session_*/{self.final_dir.name}")]
        if existing:
            raise NativeFormatError(f"{existing[0]} already exists: the native root and the LeRobot dataset "
                                    "disagree on the next episode", "run `teledex-repair` on the dataset first")
        shutil.rmtree(self.staging_dir, ignore_errors=True)  # an earlier crash's staging of this very index
        (self.staging_dir / "videos").mkdir(parents=True)
        self._frames = []
        if self.staged_video is None:
            self._own_videos = {name: H264Writer(self.staging_dir / "videos" / f"{name}.mp4", info.width,
                                                 info.height, self.layout.fps, self.video_crf)
                                for name, info in self.cameras.items()}

    def add(self, frame: RecordedFrame) -> None:
        for name, video in self._own_videos.items():
            video.add(frame.images[name])
        self._frames.append(replace(frame, images={}))  # the images are in a video already: memory stays flat

    def stage(self, metadata: dict) -> None:
        failures = self._close_own_videos()
        if failures:
            raise failures[0]
        if not self._frames:
            raise NativeFormatError(f"{self.final_dir}: the episode has no frames to save",
                                    "an episode needs at least one frame; record or convert it again")
        if self.staged_video is not None:
            for name in self.cameras:
                shutil.copyfile(self.staged_video(name), self.staging_dir / "videos" / f"{name}.mp4")
        write_episode_files(self.staging_dir, telemetry_arrays(self.layout, self._frames), metadata, self.cameras,
                            self.depth)

    def commit(self) -> None:
        os.replace(self.staging_dir, self.final_dir)
        fsync_dir(self.session_dir)
        self._frames = []

    def release(self) -> None:
        self._frames = []  # the staging folder stays: complete, teledex-repair commits it where LeRobot holds its uuid

    def abort(self) -> None:
        self._close_own_videos()  # a failed encoder's error was raised by add() or stage(): the episode goes anyway
        self._frames = []
        if self.header is not None:
            shutil.rmtree(self.staging_dir, ignore_errors=True)

    def _close_own_videos(self) -> list[RuntimeError]:
        """Finish every encoder, even after one fails (its thread would outlive the episode); their failures."""
        videos, self._own_videos = self._own_videos, {}
        failures = []
        for video in videos.values():
            try:
                video.close()
            except RuntimeError as failure:
                failures.append(failure)
        return failures


@dataclass
class NativeEpisode:
    path: Path
    telemetry: dict[str, np.ndarray]
    metadata: dict
    manifest: dict
    camera_info: dict[str, CameraInfo]

    @property
    def index(self) -> int:
        return episode_index_of(self.path)

    @property
    def episode_uuid(self) -> str:
        return self.manifest["episode_uuid"]

    def names(self, key: str) -> list[str]:
        return [str(n) for n in self.telemetry[key]]

    def video_path(self, camera: str) -> Path:
        return self.path / self.manifest["cameras"][camera]

    @property
    def depth(self) -> dict[str, dict]:
        """Each depth stream's quantization (manifest "depth"); {} without depth."""
        return self.manifest.get("depth", {})

    def field(self, dotted: str):
        """A field of metadata.json that a reader needs (its type was checked on load)."""
        value = fields.lookup(self.metadata, dotted)
        if value is ABSENT:
            raise NativeFormatError(f"{self.path / 'metadata.json'} has no '{dotted}'",
                                    "it was not written by teledex-record; record or convert the episode again")
        return value


def load_native_episode(folder: Path, verify_checksums: bool = False) -> NativeEpisode:
    """Read one episode folder, checking it is complete and its JSON fields are of their types; with
    verify_checksums, that every file has the SHA-256 its manifest records. Errors name the file, the field and the
    fix."""
    folder = Path(folder)
    fix = repair_fix(folder)
    manifest = _read_json(folder / "manifest.json", fix)
    if isinstance(manifest, dict) and manifest.get("format") != NATIVE_FORMAT:
        raise NativeFormatError(f"{folder / 'manifest.json'}: format {fields.shown(manifest.get('format'))} is not "
                                f"{NATIVE_FORMAT!r}", "convert it with the teledex version that wrote it")
    if wrong := fields.problem(manifest, _MANIFEST_FIELDS, required=_MANIFEST_REQUIRED):
        raise NativeFormatError(f"{folder / 'manifest.json'} {wrong}", fix)
    if stray := sorted(set(manifest.get("depth", {})) - set(manifest["cameras"])):
        raise NativeFormatError(f"{folder / 'manifest.json'}: depth streams {stray} are not among its cameras", fix)
    for name, entry in manifest["files"].items():
        path = folder / name
        if not path.is_file() or path.stat().st_size != entry["bytes"]:
            raise NativeFormatError(f"{path}: missing or truncated (manifest says {entry['bytes']} bytes)", fix)
        if verify_checksums and _sha256(path) != entry["sha256"]:
            raise NativeFormatError(f"{path}: its SHA-256 is not the one manifest.json records (the file changed "
                                    "after it was written)", f"restore it from a copy, or {fix}")
    try:
        with np.load(folder / "telemetry.npz", allow_pickle=False) as archive:
            telemetry = {key: archive[key] for key in archive.files}
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as err:
        raise NativeFormatError(f"{folder / 'telemetry.npz'} cannot be read ({err})", fix) from err
    missing = [key for key in TELEMETRY_KEYS if key not in telemetry]
    if missing:
        raise NativeFormatError(f"{folder / 'telemetry.npz'} lacks {missing}", fix)
    if len(telemetry["frame_timestamps_ns"]) != manifest["frames"]:
        raise NativeFormatError(f"{folder / 'telemetry.npz'}: {len(telemetry['frame_timestamps_ns'])} frames, "
                                f"manifest says {manifest['frames']}", fix)
    for array, names in (("qpos", "state_names"), ("action", "action_names"), ("tactile", "tactile_names")):
        if telemetry[array].ndim != 2 or telemetry[array].shape[1] != len(telemetry[names]):
            raise NativeFormatError(f"{folder / 'telemetry.npz'}: {array} has shape {telemetry[array].shape} for "
                                    f"{len(telemetry[names])} {names}", fix)
    metadata = _read_json(folder / "metadata.json", fix)
    if wrong := fields.problem(metadata, _METADATA_FIELDS):
        raise NativeFormatError(f"{folder / 'metadata.json'} {wrong}", fix)
    return NativeEpisode(folder, telemetry, metadata, manifest, _camera_info(folder / "camera_info.json", fix))


def _camera_info(path: Path, fix: str) -> dict[str, CameraInfo]:
    cameras = _read_json(path, fix)
    if not isinstance(cameras, dict):
        raise NativeFormatError(f"{path} holds {fields.shown(cameras)}, not an object of camera name -> intrinsics",
                                fix)
    result = {}
    for name, info in cameras.items():
        try:
            result[name] = CameraInfo(**{**info, "distortion": tuple(info["distortion"])})
        except (TypeError, KeyError, ValueError) as err:
            raise NativeFormatError(f"{path}: camera {name!r} is not {{width, height, fx, fy, cx, cy, "
                                    f"distortion_model, distortion, world_from_camera}} ({err})", fix) from err
        if not (fields.positive_whole(result[name].width) and fields.positive_whole(result[name].height)):
            raise NativeFormatError(f"{path}: camera {name!r} is {fields.shown(info.get('width'))} x "
                                    f"{fields.shown(info.get('height'))} pixels, not positive whole numbers", fix)
        for scale in ("depth_scale_m", "sensor_depth_scale_m"):
            if info.get(scale) is not None and not fields.positive_number(info[scale]):
                raise NativeFormatError(f"{path}: camera {name!r} has {scale} {fields.shown(info[scale])}, not a "
                                        "positive number of metres per unit (or null)", fix)
        baseline = info.get("stereo_baseline_m")
        if baseline is not None and not fields.positive_number(baseline):
            raise NativeFormatError(f"{path}: camera {name!r} has stereo_baseline_m {fields.shown(baseline)}, not a "
                                    "positive number of metres (or null: one camera)", fix)
    return result


def _read_json(path: Path, fix: str):
    try:
        return json.loads(path.read_text())
    except FileNotFoundError as err:
        raise NativeFormatError(f"{path} is missing", fix) from err
    except json.JSONDecodeError as err:
        raise NativeFormatError(f"{path} is not valid JSON (truncated or empty?): {err}", fix) from err
    except OSError as err:
        if err.errno not in (errno.ELOOP, errno.EISDIR):
            raise
        raise NativeFormatError(f"{path} cannot be read ({err.strerror})", fix) from err


def native_episode_dirs(root: Path) -> list[Path]:
    """Every committed episode folder under a native root (all sessions), by episode index; two folders with one
    index (which only a damaged or hand-edited root has) are refused rather than guessed between."""
    dirs = [p for p in Path(root).glob("session_*/episode_*") if p.is_dir() and not p.name.endswith(PARTIAL_SUFFIX)]
    by_index: dict[int, Path] = {}
    for folder in dirs:
        index = episode_index_of(folder)
        if index in by_index:
            raise NativeFormatError(f"Two episodes with index {index}: {by_index[index]} and {folder}",
                                    repair_fix(folder).replace("set the damaged episode aside",
                                                               "reconcile it with the LeRobot dataset"))
        by_index[index] = folder
    return [by_index[i] for i in sorted(by_index)]


def copy_episode(source: Path, target: Path, metadata: dict) -> None:
    """Copy a committed episode to a new place (staged, then renamed in) with new metadata, e.g. its index in a
    merged dataset; the telemetry and videos are copied byte for byte and the manifest recomputed."""
    staging = target.with_name(target.name + PARTIAL_SUFFIX)
    shutil.rmtree(staging, ignore_errors=True)
    shutil.copytree(source, staging)
    (staging / "metadata.json").write_text(json.dumps(metadata, indent=2))
    manifest = json.loads((staging / "manifest.json").read_text())
    manifest["files"]["metadata.json"] = {"bytes": (staging / "metadata.json").stat().st_size,
                                          "sha256": _sha256(staging / "metadata.json")}
    (staging / "manifest.json").write_text(json.dumps(manifest, indent=2))
    _fsync_tree(staging)
    os.replace(staging, target)
    fsync_dir(target.parent)
