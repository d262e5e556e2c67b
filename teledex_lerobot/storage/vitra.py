"""Export native episodes to the VITRA teleoperation format: one <episode>.h5 + <episode>.mp4 each.

Kinematic transforms come from the episode's own record of its rig (models, sides, driven joints, hand mount),
never from constants: `ee_urdf` is the arm's mount frame in its URDF, `hand_mount` the hand's base frame. The head
camera is the episode's first colour camera; its pose in the arm base comes from camera_info.json. Poses are
[x, y, z, rx, ry, rz] with a rotation vector. A missing arm or hand has zero joint arrays, identity transforms (and
so zero pose vectors, the identity pose) and its masks False: every transform in a file is a valid rigid transform.
Files are named by the episode id and never overwritten. Two rigs (teledex_followers, e.g. a bimanual preset) fill
both sides, each follower on its hand's side; the head camera's pose in each side's arm base comes from the bases'
poses the episode records (hardware.rigs: the world's, or the preset's placements on hardware).

Depth: VITRA's layout has one camera and no depth of its own; the head camera's depth stream (`<camera>_depth`,
aligned to its colour, so observation/camera/intrinsics apply to it) goes in as observation/camera/depth, (T, H, W)
uint16 millimetres with 0 = nothing seen (LeRobot's quantization decodes that as depth_min: read_depth restores
it), one gzip chunk a frame; its attributes say so and give the recorded quantization. What the layout has no place
for (other cameras and their depth, tactile, the simulated world's state) is named when exporting: it stays in the
native episodes.
"""

import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import h5py
import numpy as np
from scipy.spatial.transform import Rotation

from ..presets import HandMount, PartSpec
from ..rig import Rig
from . import fields
from .errors import DatasetError
from .native import NativeEpisode, load_native_episode, native_episode_dirs, repair_fix


def pose_vector(matrices: np.ndarray) -> np.ndarray:
    """(T, 4, 4) -> (T, 6) [x, y, z, rotation vector]."""
    return np.concatenate([matrices[:, :3, 3], Rotation.from_matrix(matrices[:, :3, :3]).as_rotvec()], axis=1)


def _build_rig(record, where: str, folder: Path) -> Rig:
    try:
        parts = {role: PartSpec(**{**spec, "joints": tuple(spec["joints"]) if spec.get("joints") else None})
                 for role, spec in record["parts"].items()}
        mount = HandMount(**{k: tuple(v) for k, v in record["hand_mount"].items()})
        return Rig.from_parts(parts.get("arm"), parts.get("hand"), mount)
    except (TypeError, KeyError, ValueError, AttributeError) as err:
        raise DatasetError(f"{where} is not a rig TeleDex can build ({err}); restore metadata.json from a copy, or "
                           f"{repair_fix(folder)}") from None


@dataclass(frozen=True)
class SideRig:
    """The rig recorded on one side (left or right hand): its keys' prefix in the episode ("" for a robot of one
    rig, "<follower>_" for one of several) and its base in the first rig's base frame."""

    rig: Rig
    prefix: str = ""
    base_pose: np.ndarray = field(default_factory=lambda: np.eye(4))


def rig_of(episode: NativeEpisode) -> Rig:
    """The rig of an episode recorded from one TeleDex rig."""
    record = fields.lookup(episode.metadata, "hardware.rig")
    if record is fields.ABSENT or not record:
        raise DatasetError(f"{episode.path}/metadata.json has no hardware.rig: it was not recorded from a TeleDex rig, "
                           "so its kinematics are unknown")
    return _build_rig(record, f"{episode.path}/metadata.json: 'hardware.rig'", episode.path)


def side_rigs(episode: NativeEpisode) -> dict[str, SideRig]:
    """The rigs of an episode by side (their hand's, or their arm's): one rig's, or each follower's of several
    (hardware.rigs, teledex_followers)."""
    followers = fields.lookup(episode.metadata, "hardware.rigs")
    if followers is fields.ABSENT or not followers:
        rig = rig_of(episode)
        return {rig.side: SideRig(rig)}
    where = f"{episode.path}/metadata.json"
    sides: dict[str, SideRig] = {}
    for name, record in followers.items():
        rig = _build_rig(record, f"{where}: 'hardware.rigs.{name}'", episode.path)
        try:
            base = np.array(record["base_pose"], dtype=np.float64).reshape(4, 4)
        except (KeyError, TypeError, ValueError):
            raise DatasetError(f"{where}: 'hardware.rigs.{name}.base_pose' is not a 4x4 pose; restore metadata.json "
                               f"from a copy, or {repair_fix(episode.path)}") from None
        side = rig.side
        if side in sides:
            raise DatasetError(f"{where}: followers {sides[side].prefix.removesuffix('_')!r} and {name!r} are both "
                               f"{side} rigs, and VITRA has one of each side; export them as two datasets")
        sides[side] = SideRig(rig, f"{name}_", base)
    return sides


def _head_camera(episode: NativeEpisode):
    camera_name, camera = next(((n, c) for n, c in episode.camera_info.items() if n not in episode.depth),
                               (None, None))
    if camera is None or camera.world_from_camera is None or camera.fx is None:
        raise DatasetError(f"{episode.path}: VITRA needs a camera with intrinsics and a known pose in the arm base")
    return camera_name, camera


def _head_camera_pose(camera_name: str, camera, sides: dict[str, SideRig]) -> np.ndarray:
    """The head camera in the first rig's base frame: a follower's camera ("<follower>_<name>") is posed in its own
    rig's base."""
    base = next((side.base_pose for side in sides.values() if side.prefix and camera_name.startswith(side.prefix)),
                np.eye(4))
    return base @ np.asarray(camera.world_from_camera)


def _ee_frame(episode: NativeEpisode, rig: Rig) -> str:
    """The arm's frame the hand is mounted on (VITRA's ee_urdf), for a rig of an arm and a hand."""
    arm = rig.parts["arm"]
    if arm.mount_frame is None:
        raise DatasetError(f"{episode.path}/metadata.json: the rig's arm {arm.spec.model!r} has no known mount frame "
                           "(a URDF arm: where the hand sits on it is unknown), so VITRA's ee_urdf_to_hand_mount "
                           "cannot be computed; export episodes recorded with a built-in arm (e.g. piper)")
    return arm.mount_frame


def _episode_id(episode: NativeEpisode) -> str:
    episode_id = fields.lookup(episode.metadata, "episode.episode_id")  # a name: checked on load
    return episode_id if episode_id not in (fields.ABSENT, None, "") else episode.path.name


DEPTH = "observation/camera/depth"
# A depth video and its quantization -> its frames, (H, W, 1) uint16 millimetres, 0 = nothing seen (LeRobot's
# dequantization: the command passes recording/lerobot_dataset.py read_depth_video, as storage imports no LeRobot).
DepthReader = Callable[[Path, dict], Iterator[np.ndarray]]


def _depth_stream(episode: NativeEpisode, camera_name: str) -> str | None:
    name = f"{camera_name}_depth"  # a camera's depth stream (lerobot_robot_teledex.cameras.depth_streams.depth_key)
    return name if name in episode.depth else None


def _left_out(episode: NativeEpisode) -> list[str]:
    head, _ = _head_camera(episode)
    kept = {head, _depth_stream(episode, head)}
    return ([n for n in episode.camera_info if n not in kept] + (["tactile"] if episode.names("tactile_names") else [])
            + (["environment_state"] if "environment_names" in episode.telemetry else []))


def _write_depth(h5: h5py.File, episode: NativeEpisode, name: str, frames: int, read_depth: DepthReader) -> None:
    camera = episode.camera_info[name]
    depth = h5.create_dataset(DEPTH, shape=(frames, camera.height, camera.width), dtype=np.uint16,
                              chunks=(1, camera.height, camera.width), compression="gzip")
    count = 0
    for count, picture in enumerate(read_depth(episode.video_path(name), episode.depth[name]), start=1):
        if count <= frames:
            depth[count - 1] = picture[..., 0]
    if count != frames:
        raise DatasetError(f"{episode.video_path(name)} has {count} frames for the episode's {frames}; record or "
                           "convert the episode again")
    depth.attrs.update(unit="mm", nothing_seen=0, stream=name, aligned_to="the head camera (its intrinsics)",
                       **{f"quantization_{k}": v for k, v in episode.depth[name].items()})


def export_episode(episode: NativeEpisode, sides: dict[str, SideRig], out_dir: Path, read_depth: DepthReader) -> Path:
    t = episode.telemetry
    names, action_names = episode.names("state_names"), episode.names("action_names")
    frames = len(t["frame_timestamps_ns"])
    camera_name, camera = _head_camera(episode)
    camera_in_first = _head_camera_pose(camera_name, camera, sides)
    episode_id = _episode_id(episode)
    video_name = f"{episode_id}.mp4"
    path = Path(out_dir) / f"{episode_id}.h5"
    if path.exists() or (Path(out_dir) / video_name).exists():
        raise DatasetError(f"{path} already exists: two episodes share the id {episode_id!r}; export into an empty "
                           "folder, one dataset at a time")
    try:
        with h5py.File(path, "w") as h5:
            meta = h5.create_group("meta")
            meta["instruction"] = episode.metadata.get("episode", {}).get("task_name", "")
            meta["video_path"] = video_name
            meta["frame_count"] = frames
            meta["fps"] = float(episode.field("collection.control_frequency_hz"))
            for s in ("left", "right"):
                meta[f"has_{s}"] = s in sides
            h5.create_group("kinematics")
            h5["observation/camera/intrinsics"] = np.array([[camera.fx, 0, camera.cx], [0, camera.fy, camera.cy],
                                                             [0, 0, 1]], dtype=np.float64)
            dofs = {role: next((len(side.rig.parts[role].keys) for side in sides.values() if role in side.rig.parts), 0)
                    for role in ("arm", "hand")}
            for s in ("left", "right"):
                _write_side(h5, s, sides.get(s), episode, names, action_names, camera_in_first, dofs)
            if (depth_name := _depth_stream(episode, camera_name)) is not None:
                _write_depth(h5, episode, depth_name, frames, read_depth)
    except BaseException:
        path.unlink(missing_ok=True)  # no half-written file: it would block the export run again
        raise
    shutil.copyfile(episode.video_path(camera_name), Path(out_dir) / video_name)
    return path


def _write_side(h5: h5py.File, s: str, side: SideRig | None, episode: NativeEpisode, names: list[str],
                action_names: list[str], camera_in_first: np.ndarray, dofs: dict[str, int]) -> None:
    """One side's joints, hand mount poses, transforms and masks; an absent side (or part) as VITRA wants it: zero
    joints (as wide as the other side's), identity transforms, masks False."""
    t = episode.telemetry
    frames = len(t["frame_timestamps_ns"])
    rig = side.rig if side is not None else None
    present = {role: rig is not None and role in rig.parts for role in ("arm", "hand")}
    q: dict[str, np.ndarray] = {}
    for role in ("arm", "hand"):
        if side is not None and present[role]:
            keys = [side.prefix + key for key in side.rig.parts[role].keys]
            q[role] = t["qpos"][:, [names.index(key) for key in keys]].astype(np.float64)
            action = t["action"][:, [action_names.index(key) for key in keys]].astype(np.float64)
        else:
            q[role] = action = np.zeros((frames, dofs[role]))
        h5[f"state/{s}_{role}_joint"] = q[role]
        h5[f"action/{s}_{role}_joint"] = action
        h5[f"mask/{s}_{role}"] = np.full(frames, present[role])
    ee_to_mount, mount_vector, mount_in_cam = np.eye(4), np.zeros((frames, 6)), np.zeros((frames, 6))
    camera_pose = np.eye(4)
    if side is not None and rig is not None:
        camera_pose = np.linalg.inv(side.base_pose) @ camera_in_first
        if present["arm"] and present["hand"]:
            mount = np.stack([rig.base_poses({role: q[role][i] for role in rig.parts})["hand"] for i in range(frames)])
            arm = rig.parts["arm"]
            ee = arm.model.frame_pose(arm.full_configuration(q["arm"][0]), _ee_frame(episode, rig))
            ee_to_mount = np.linalg.inv(ee) @ mount[0]
            mount_vector = pose_vector(mount)
            mount_in_cam = pose_vector(np.linalg.inv(camera_pose) @ mount)
    h5[f"kinematics/{s}_ee_urdf_to_hand_mount"] = ee_to_mount
    h5[f"kinematics/head_camera_to_{s}_arm_base"] = camera_pose
    h5[f"state/{s}_hand_mount_pose"] = mount_vector
    h5[f"state/{s}_hand_mount_pose_in_cam"] = mount_in_cam


def export_vitra(native_root: Path, out_dir: Path, read_depth: DepthReader, progress=print) -> list[Path]:
    """Every episode read and checked (manifest and checksums, fields, rig, camera) before anything is written."""
    out_dir = Path(out_dir)
    episodes = [load_native_episode(folder, verify_checksums=True) for folder in native_episode_dirs(native_root)]
    if not episodes:
        raise DatasetError(f"No episodes under {native_root}")
    sides = [side_rigs(episode) for episode in episodes]
    for episode, rigs in zip(episodes, sides, strict=True):
        _head_camera(episode)
        episode.field("collection.control_frequency_hz")
        for side in rigs.values():
            if "arm" in side.rig.parts and "hand" in side.rig.parts:
                _ee_frame(episode, side.rig)
    ids = [_episode_id(episode) for episode in episodes]
    if len(set(ids)) != len(ids):
        raise DatasetError(f"Two episodes under {native_root} share an id ({sorted(i for i in ids if ids.count(i) > 1)}"
                           "); export one dataset at a time, into an empty folder")
    if left_out := sorted({name for episode in episodes for name in _left_out(episode)}):
        progress(f"not exported, VITRA's layout has no place for them (one camera and its depth): "
                 f"{', '.join(left_out)}; they stay in the native episodes under {native_root}")
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for episode, rigs in zip(episodes, sides, strict=True):
        written.append(export_episode(episode, rigs, out_dir, read_depth))
        progress(f"{episode.path.name} -> {written[-1]}")
    return written
