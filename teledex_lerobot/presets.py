"""Hardware presets: which arm and hand make up a rig, how the hand is mounted, which cameras look at it; or which
rigs work together (a bimanual pair).

A preset is a YAML file in configs/presets/ (or any path); its keys are the fields of PresetFile below. Unknown keys
and wrong types are errors naming the key, never silently ignored. The README's "Presets" section shows the schema.
"""

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.spatial.transform import Rotation

from .config_files import decode_config, read_yaml_mapping, resolve_file
from .errors import ConfigError
from .geometry.camera import WRIST_VIEW
from .paths import PRESETS_DIR


@dataclass(frozen=True)
class PartSpec:
    """One kinematic chain: a built-in model name or a URDF path, its side, the joints driven (None: every actuated
    joint, in the model's order) and a home pose (rad, m for prismatic joints; joints not given start at 0)."""

    model: str
    side: str = "right"
    joints: tuple[str, ...] | None = None
    home: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class HandMount:
    """Where the hand's base frame sits in the arm's mount frame."""

    xyz_m: tuple[float, float, float] = (0.0, 0.0, 0.0)
    rpy_rad: tuple[float, float, float] = (0.0, 0.0, 0.0)


@dataclass(frozen=True)
class RigPlacement:
    """Where a follower rig's base stands in the MuJoCo world: offset from where a rig alone stands (at the table's
    near edge; up, its kind of mount's height), and turned about the vertical."""

    xyz_m: tuple[float, float, float] = (0.0, 0.0, 0.0)  # the base's offset (m, world axes: x away, y left, z up)
    yaw_rad: float = 0.0  # the base turned about the vertical (rad, counter-clockwise seen from above)


# Followers a preset places nowhere stand side by side along the table's edge, the first on the operator's left (+y).
DEFAULT_RIG_SPACING_M = 0.5


@dataclass(frozen=True)
class PresetFile:
    """What a preset file holds."""

    description: str = ""
    fps: int = 30  # the control rate the rig is recorded at
    arm: PartSpec | None = None
    hand: PartSpec | None = None
    hand_mount: HandMount = field(default_factory=HandMount)
    # camera name -> the settings of its LeRobot camera config (by default the simulated teledex_render camera)
    cameras: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Instead of arm/hand: several rigs driven together, follower name -> preset (--robot.type=teledex_followers)
    followers: dict[str, str] = field(default_factory=dict)
    # With followers: where each rig stands in the MuJoCo world, follower name -> placement (by default side by side)
    placements: dict[str, RigPlacement] = field(default_factory=dict)


@dataclass(frozen=True)
class Preset(PresetFile):
    name: str = ""  # the file's stem

    def placement(self, follower: str) -> RigPlacement:
        return rig_placement(list(self.followers), self.placements, follower)


def shared_world_cameras(followers: dict[str, str]) -> dict[str, tuple[str, str, str]]:
    """The cameras several rigs (follower name -> preset) record in one MuJoCo world: "<follower>_<camera>" ->
    (follower, camera, view), each follower's preset cameras but a fixed view an earlier follower already has (one
    world camera draws it for both); every wrist view stays, on its own rig's hand."""
    cameras: dict[str, tuple[str, str, str]] = {}
    for follower, name in followers.items():
        for camera, settings in load_preset(name).cameras.items():
            view = settings.get("view", "oblique")
            if view != WRIST_VIEW and any(view == seen for _, _, seen in cameras.values()):
                continue
            cameras[f"{follower}_{camera}"] = (follower, camera, view)
    return cameras


def rig_placement(followers: list[str], placements: dict[str, RigPlacement], follower: str) -> RigPlacement:
    """Where a follower stands in the world: its placement, or its place in a row along the table's edge."""
    if follower in placements:
        return placements[follower]
    y = ((len(followers) - 1) / 2 - followers.index(follower)) * DEFAULT_RIG_SPACING_M
    return RigPlacement((0.0, y, 0.0))


def placed_bases(followers: list[str], placements: dict[str, RigPlacement]) -> dict[str, np.ndarray]:
    """Each follower's base in the first one's base frame (4x4) as the placements (else the row) put them: their
    offsets and yaws, the bases at one height."""
    poses = {}
    for follower in followers:
        placement = rig_placement(followers, placements, follower)
        pose = np.eye(4)
        pose[:3, :3] = Rotation.from_euler("z", placement.yaw_rad).as_matrix()
        pose[:3, 3] = placement.xyz_m
        poses[follower] = pose
    first = np.linalg.inv(poses[followers[0]])
    return {follower: first @ pose for follower, pose in poses.items()}


def load_preset(name_or_path: str) -> Preset:
    path = resolve_file(name_or_path, PRESETS_DIR, (".yaml", ".yml"), "preset")
    where = f"preset {path}"
    data = decode_config(PresetFile, read_yaml_mapping(path, "preset"), where)
    rig = data.arm is not None or data.hand is not None
    if rig == bool(data.followers):
        raise ConfigError(f"{where} must define either 'arm' and/or 'hand' (one rig) or 'followers' (several rigs).")
    unplaced = sorted(set(data.placements) - set(data.followers))
    if unplaced:
        raise ConfigError(f"{where}: 'placements' names {unplaced}, which are not followers: key them by the "
                          f"followers' names ({', '.join(data.followers) or 'none'})")
    if data.fps <= 0:
        raise ConfigError(f"{where}: 'fps' must be a positive integer (got {data.fps})")
    return Preset(**{f: getattr(data, f) for f in PresetFile.__dataclass_fields__}, name=path.stem)
