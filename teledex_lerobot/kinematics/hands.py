"""The hands we know by name: one descriptor per hand, configs/hands/<name>.yaml, whose keys are HandFile's fields.

Every table of hands is derived from the descriptors: the model catalogue (kinematics/catalogue.py: the URDF of
each side), the device registry (devices/registry.py: the vendor whose driver runs it), the joint maps
(retargeting/joint_mapping.py), the grasp shapes a controller closes the hand along (control/hand_grasps.py) and how
the world's scripted expert holds each task's object with them (world/grasps.py). Paths in a descriptor are relative
to its file. docs/extending.md adds a hand.

A descriptor is decoded by draccus (config_files.py): an unknown key or a wrong type is a ConfigError naming the file
and the key.
"""

import os
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Literal

from ..config_files import decode_config, read_yaml_mapping
from ..errors import ConfigError, ModelError
from ..geometry.sides import SIDES
from ..paths import HANDS_DIR

Vector3 = tuple[float, float, float]


@dataclass(frozen=True)
class GraspShape:
    """A grasp that holds: where the fingers wait and where they close to, each joint name (or name ending, e.g.
    mcp_pitch) -> rad. Closed lies beyond contact: the servos' force limits set the grip."""

    preshape: dict[str, float]
    closed: dict[str, float]
    human: Literal["pinch", "wrap"]  # the person's grasp it answers (operator/object_grasps.py human_grasps)


@dataclass(frozen=True)
class WorldGraspFile:
    """How the hand holds one world task's object with one of its grasps (world/grasps.py's Grasp: what each field
    means and in which frame)."""

    grasp: str  # a name in the descriptor's `grasps`
    hand_axes: tuple[Vector3, Vector3, Vector3]  # rows: the hand's x, y, z axes in the object's heading frame
    object_in_hand_m: Vector3
    approach_m: Vector3
    symmetry: int
    release_by_easing: bool = True
    preferred_heading_rad: float = 0.0
    ik_start_by_arm: dict[str, dict[str, float]] = field(default_factory=dict)


@dataclass(frozen=True)
class HandFile:
    """What a hand descriptor holds."""

    description: str
    # The package whose VENDOR declares this hand's driver (a DeviceModel named as this file): a folder under
    # teledex_lerobot/devices/ (e.g. linkerhand) or any importable module.
    vendor: str
    urdf: dict[str, str]  # side ("right", "left") -> its URDF file; the file's stem is "<name>_<side>"
    joint_map: dict[str, str] = field(default_factory=dict)  # side -> its joint map (retargeting/joint_mapping.py)
    grasps: dict[str, GraspShape] = field(default_factory=dict)  # grasp name -> its hand shapes
    world_grasps: dict[str, WorldGraspFile] = field(default_factory=dict)  # world task -> how the hand holds it


@dataclass(frozen=True)
class HandDescriptor(HandFile):
    name: str = ""  # the file's stem: the model name presets, the registry and the grasp tables use
    path: Path = Path()

    def where(self, key: str) -> str:
        """Where a value comes from, for error messages: the descriptor file and the key."""
        return f"hand descriptor {self.path}, key `{key}`"

    def urdf_path(self, side: str) -> Path:
        if side not in self.urdf:
            raise ModelError(f"Hand {self.name!r} has no {side} URDF ({self.where('urdf')} names "
                             f"{', '.join(self.urdf)}): add `{side}: <file>.urdf` there, or use a "
                             f"{' or '.join(self.urdf)} hand.")
        return self._file(self.urdf[side])

    def joint_map_path(self, side: str) -> Path | None:
        return self._file(self.joint_map[side]) if side in self.joint_map else None

    def _file(self, relative: str) -> Path:
        return Path(os.path.normpath(self.path.parent / relative))  # "../urdf/x.urdf" read as the folder it names


def load_hand(path: Path) -> HandDescriptor:
    """One descriptor, with every file it names checked to exist."""
    where = f"hand descriptor {path}"
    data = decode_config(HandFile, read_yaml_mapping(path, "hand descriptor"), where)
    hand = HandDescriptor(**{f.name: getattr(data, f.name) for f in fields(HandFile)}, name=path.stem, path=path)
    for key in ("urdf", "joint_map"):
        files: dict[str, str] = getattr(hand, key)
        for side, file in files.items():
            if side not in SIDES:
                raise ConfigError(f"{where}: `{key}.{side}`: a side is 'right' or 'left'")
            if not (path.parent / file).is_file():
                raise ConfigError(f"{where}: `{key}.{side}`: no file {path.parent / file} (paths are relative to "
                                  "the descriptor)")
    for side, file in hand.urdf.items():
        # The retargeter knows a hand by its URDF's stem (its joint map and the operators' calibrations for it).
        if Path(file).stem != f"{hand.name}_{side}":
            raise ConfigError(f"{where}: `urdf.{side}`: name the file {hand.name}_{side}.urdf (got {Path(file).name})")
    if not hand.urdf:
        raise ConfigError(f"{where}: `urdf` names no file; give `right:` and/or `left:` URDF files")
    for task, placement in hand.world_grasps.items():
        if placement.grasp not in hand.grasps:
            raise ConfigError(f"{where}: `world_grasps.{task}.grasp`: {placement.grasp!r} is not one of its grasps "
                              f"({', '.join(hand.grasps) or 'none'}); name one, or add it under `grasps`")
    return hand


def load_hands(folder: Path) -> dict[str, HandDescriptor]:
    """Every descriptor in `folder`, by name."""
    return {path.stem: load_hand(path) for path in sorted(folder.glob("*.yaml"))}


HANDS: dict[str, HandDescriptor] = load_hands(HANDS_DIR)
