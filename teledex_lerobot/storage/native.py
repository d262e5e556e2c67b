"""The native TeleDex episode layout (report §3.3.3 and appendix A2), written and read.

    <root>/session_<YYYY-MM-DD_HH-MM-SS>/
        session.json
        episode_<NNNNNN>/            NNNNNN = the episode's index in the paired LeRobotDataset
            telemetry.npz            joint_names, qpos, qvel, action (T, n) float32 (what LeRobot stores, so the two
                                     formats convert both ways losslessly); frame_timestamps_ns (T,) int64;
                                     source_names (S,), source_timestamps_ns (T, S) int64 (-1 = none);
                                     sync_valid, sync_fresh, sync_consistent (T,) bool; sync_max_diff_ns (T,)
            manifest.json            format, frame count, every file with its size and SHA-256
            metadata.json            the report's table 4: task, ids, duration, hardware, cameras, collection
            camera_info.json         per camera: resolution, pinhole intrinsics, distortion, extrinsics if known
            videos/<camera>.mp4      H.264

An episode is written into episode_<NNNNNN>.partial/ and renamed into place only once every file is complete, so a
crash leaves at most one .partial folder and never a half-written episode that looks whole.
"""

import hashlib
import json
import os
import shutil
import zipfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from ..geometry.camera import CameraInfo
from ..sync import SyncPacket
from .video import H264Writer

NATIVE_FORMAT = "teledex-native/1"
PARTIAL_SUFFIX = ".partial"
TELEMETRY_KEYS = ("joint_names", "qpos", "qvel", "action", "frame_timestamps_ns", "source_names",
                  "source_timestamps_ns", "sync_valid", "sync_fresh", "sync_consistent", "sync_max_diff_ns")


def episode_dir_name(index: int) -> str:
    return f"episode_{index:06d}"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _write_json(path: Path, data) -> None:
    path.write_text(json.dumps(data, indent=2, sort_keys=False))


def _fsync_tree(folder: Path) -> None:
    for path in folder.rglob("*"):
        if path.is_file():
            with open(path, "rb") as file:
                os.fsync(file.fileno())


@dataclass
class _Buffers:
    qpos: list = field(default_factory=list)
    action: list = field(default_factory=list)
    frame_ns: list = field(default_factory=list)
    source_ns: list = field(default_factory=list)
    valid: list = field(default_factory=list)
    fresh: list = field(default_factory=list)
    consistent: list = field(default_factory=list)
    max_diff_ns: list = field(default_factory=list)


class NativeEpisodeWriter:
    def __init__(self, session_dir: Path, index: int, *, joint_names: list[str], source_names: list[str],
                 cameras: dict[str, CameraInfo], fps: int, video_crf: int = 18):
        self.final_dir = Path(session_dir) / episode_dir_name(index)
        self.work_dir = self.final_dir.with_name(self.final_dir.name + PARTIAL_SUFFIX)
        if self.final_dir.exists():
            raise FileExistsError(f"{self.final_dir} already exists; refusing to overwrite a saved episode")
        shutil.rmtree(self.work_dir, ignore_errors=True)  # a previous crash's leftovers for this very index
        (self.work_dir / "videos").mkdir(parents=True)
        self.joint_names = list(joint_names)
        self.source_names = list(source_names)
        self.cameras = dict(cameras)
        self.fps = fps
        self._videos = {name: H264Writer(self.work_dir / "videos" / f"{name}.mp4", info.width, info.height, fps,
                                         video_crf) for name, info in self.cameras.items()}
        self._buffers = _Buffers()

    def __len__(self) -> int:
        return len(self._buffers.frame_ns)

    @property
    def video_blocked_adds(self) -> int:
        return sum(video.blocked_adds for video in self._videos.values())

    def add_frame(self, *, frame_ns: int, qpos: np.ndarray, action: np.ndarray, packet: SyncPacket,
                  images: dict[str, np.ndarray]) -> None:
        b = self._buffers
        b.qpos.append(np.asarray(qpos, dtype=np.float32))
        b.action.append(np.asarray(action, dtype=np.float32))
        b.frame_ns.append(frame_ns)
        b.source_ns.append([-1 if packet.timestamps_ns.get(s) is None else packet.timestamps_ns[s]
                            for s in self.source_names])
        b.valid.append(packet.valid)
        b.fresh.append(packet.fresh)
        b.consistent.append(packet.consistent)
        b.max_diff_ns.append(packet.max_diff_ns)
        for name, video in self._videos.items():
            video.add(images[name])

    def save(self, metadata: dict) -> Path:
        """Finish the videos, write every file, then move the episode into place."""
        for video in self._videos.values():
            video.close()
        b = self._buffers
        if not b.frame_ns:
            raise ValueError(f"{self.final_dir.name}: no frames to save")
        frame_ns = np.asarray(b.frame_ns, dtype=np.int64)
        qpos = np.stack(b.qpos)
        arrays = {
            "joint_names": np.asarray(self.joint_names),
            "qpos": qpos,
            # from the positions: not every device reports velocities
            "qvel": (np.gradient(qpos.astype(np.float64), frame_ns / 1e9, axis=0).astype(np.float32)
                     if len(qpos) > 1 else np.zeros_like(qpos)),
            "action": np.stack(b.action),
            "frame_timestamps_ns": frame_ns,
            "source_names": np.asarray(self.source_names),
            "source_timestamps_ns": np.asarray(b.source_ns, dtype=np.int64).reshape(len(frame_ns), -1),
            "sync_valid": np.asarray(b.valid, dtype=bool),
            "sync_fresh": np.asarray(b.fresh, dtype=bool),
            "sync_consistent": np.asarray(b.consistent, dtype=bool),
            "sync_max_diff_ns": np.asarray(b.max_diff_ns, dtype=np.int64),
        }
        write_episode_files(self.work_dir, arrays, metadata, self.cameras)
        os.replace(self.work_dir, self.final_dir)
        return self.final_dir

    def discard(self) -> None:
        for video in self._videos.values():
            video.close()
        shutil.rmtree(self.work_dir, ignore_errors=True)


def write_episode_files(folder: Path, telemetry: dict, metadata: dict, cameras: dict[str, CameraInfo]) -> None:
    """telemetry.npz, camera_info.json, metadata.json, then manifest.json over everything in the folder."""
    np.savez(folder / "telemetry.npz", **telemetry)
    _write_json(folder / "camera_info.json", {name: asdict(info) for name, info in cameras.items()})
    _write_json(folder / "metadata.json", metadata)
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    _write_json(folder / "manifest.json", {
        "format": NATIVE_FORMAT,
        "frames": int(len(telemetry["frame_timestamps_ns"])),
        "cameras": {name: f"videos/{name}.mp4" for name in cameras},
        "files": {str(p.relative_to(folder)): {"bytes": p.stat().st_size, "sha256": _sha256(p)} for p in files},
    })
    _fsync_tree(folder)


@dataclass
class NativeEpisode:
    path: Path
    telemetry: dict[str, np.ndarray]
    metadata: dict
    manifest: dict
    camera_info: dict[str, CameraInfo]

    @property
    def index(self) -> int:
        return int(self.path.name.split("_")[-1])

    def video_path(self, camera: str) -> Path:
        return self.path / self.manifest["cameras"][camera]


class NativeFormatError(ValueError):
    pass


def load_native_episode(folder: Path, verify_checksums: bool = False) -> NativeEpisode:
    """Read one episode folder, checking it is complete; errors name the file and the fix."""
    folder = Path(folder)
    fix = f"run `teledex-repair {folder.parent.parent}` to set aside damaged episodes"
    manifest = _read_json(folder / "manifest.json", fix)
    if manifest.get("format") != NATIVE_FORMAT:
        raise NativeFormatError(f"{folder / 'manifest.json'}: format {manifest.get('format')!r} is not "
                                f"{NATIVE_FORMAT!r}")
    for name, entry in manifest.get("files", {}).items():
        path = folder / name
        if not path.is_file() or path.stat().st_size != entry["bytes"]:
            raise NativeFormatError(f"{path}: missing or truncated (manifest says {entry['bytes']} bytes); {fix}")
        if verify_checksums and _sha256(path) != entry["sha256"]:
            raise NativeFormatError(f"{path}: checksum differs from the manifest; {fix}")
    try:
        with np.load(folder / "telemetry.npz", allow_pickle=False) as archive:
            telemetry = {key: archive[key] for key in archive.files}
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as err:
        raise NativeFormatError(f"{folder / 'telemetry.npz'} cannot be read ({err}); {fix}") from err
    missing = [key for key in TELEMETRY_KEYS if key not in telemetry]
    if missing:
        raise NativeFormatError(f"{folder / 'telemetry.npz'} lacks {missing}; {fix}")
    if len(telemetry["frame_timestamps_ns"]) != manifest["frames"]:
        raise NativeFormatError(f"{folder / 'telemetry.npz'}: {len(telemetry['frame_timestamps_ns'])} frames, "
                                f"manifest says {manifest['frames']}; {fix}")
    cameras = {name: CameraInfo(**{**info, "distortion": tuple(info["distortion"])})
               for name, info in _read_json(folder / "camera_info.json", fix).items()}
    return NativeEpisode(folder, telemetry, _read_json(folder / "metadata.json", fix), manifest, cameras)


def _read_json(path: Path, fix: str) -> dict:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError as err:
        raise NativeFormatError(f"{path} is missing; {fix}") from err
    except json.JSONDecodeError as err:
        raise NativeFormatError(f"{path} is not valid JSON (truncated?): {err}; {fix}") from err


def native_episode_dirs(root: Path) -> list[Path]:
    """Every complete episode folder under a native root (all sessions), by episode index."""
    dirs = [p for p in Path(root).glob("session_*/episode_*") if p.is_dir() and not p.name.endswith(PARTIAL_SUFFIX)]
    return sorted(dirs, key=lambda p: int(p.name.split("_")[-1]))
