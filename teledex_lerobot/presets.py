"""Hardware presets: which arm and hand make up a rig, how the hand is mounted, which cameras look at it.

A preset is a YAML file in configs/presets/ (or any path). Unknown keys are errors, never silently ignored.
"""

from dataclasses import dataclass, field
from pathlib import Path

import yaml

from .paths import PRESETS_DIR


@dataclass(frozen=True)
class PartSpec:
    """One kinematic chain: a built-in model name or a URDF path, its side, the joints driven, a home pose (rad/m)."""

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
class Preset:
    name: str
    description: str
    fps: int
    arm: PartSpec | None
    hand: PartSpec | None
    hand_mount: HandMount
    cameras: dict[str, dict]


_PRESET_KEYS = {"description", "fps", "arm", "hand", "hand_mount", "cameras"}
_PART_KEYS = {"model", "side", "joints", "home"}
_MOUNT_KEYS = {"xyz_m", "rpy_rad"}


def available_presets() -> list[str]:
    return sorted(p.stem for p in PRESETS_DIR.glob("*.yaml"))


def preset_path(name_or_path: str) -> Path:
    if name_or_path.endswith((".yaml", ".yml")):
        path = Path(name_or_path).expanduser()
        if not path.is_file():
            raise FileNotFoundError(f"Preset file not found: {path}")
        return path
    path = PRESETS_DIR / f"{name_or_path}.yaml"
    if not path.is_file():
        raise ValueError(f"Unknown preset {name_or_path!r}. Available presets: {', '.join(available_presets())} "
                         f"(in {PRESETS_DIR}), or give a path to a .yaml preset file.")
    return path


def load_preset(name_or_path: str) -> Preset:
    path = preset_path(name_or_path)
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as err:
        raise ValueError(f"Preset {path} is not valid YAML: {err}") from err
    where = f"preset {path}"
    _check_keys(data, _PRESET_KEYS, where)
    arm = _part(data.get("arm"), f"{where}: arm")
    hand = _part(data.get("hand"), f"{where}: hand")
    if arm is None and hand is None:
        raise ValueError(f"{where} defines neither 'arm' nor 'hand'; add at least one.")
    mount = data.get("hand_mount") or {}
    _check_keys(mount, _MOUNT_KEYS, f"{where}: hand_mount")
    cameras = data.get("cameras") or {}
    if not isinstance(cameras, dict):
        raise ValueError(f"{where}: 'cameras' must be a mapping of camera name -> settings")
    fps = data.get("fps", 30)
    if not isinstance(fps, int) or fps <= 0:
        raise ValueError(f"{where}: 'fps' must be a positive integer (got {fps!r})")
    return Preset(
        name=path.stem,
        description=str(data.get("description", "")),
        fps=fps,
        arm=arm,
        hand=hand,
        hand_mount=HandMount(tuple(mount.get("xyz_m", (0, 0, 0))), tuple(mount.get("rpy_rad", (0, 0, 0)))),
        cameras={name: dict(settings or {}) for name, settings in cameras.items()},
    )


def _part(data, where: str) -> PartSpec | None:
    if data is None:
        return None
    _check_keys(data, _PART_KEYS, where)
    if "model" not in data:
        raise ValueError(f"{where}: 'model' is required (a built-in model name or a path to a .urdf file)")
    joints = data.get("joints")
    return PartSpec(
        model=str(data["model"]),
        side=str(data.get("side", "right")),
        joints=tuple(joints) if joints else None,
        home={str(k): float(v) for k, v in (data.get("home") or {}).items()},
    )


def _check_keys(data, allowed: set[str], where: str) -> None:
    if not isinstance(data, dict):
        raise ValueError(f"{where} must be a mapping (got {type(data).__name__})")
    unknown = set(data) - allowed
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {sorted(unknown)}; allowed keys are {sorted(allowed)}")
