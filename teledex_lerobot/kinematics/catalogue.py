"""The kinematic models we know by name, and how a model name or a URDF path becomes the URDF file to load.

Built-in models: the arms below (the Piper, whose URDF we authored in configs/urdf/, and the Linker Arm A7, whose
URDF ships inside the installed `linkerbot` package, not copied into this repository), and every hand with a
descriptor in configs/hands/ (kinematics/hands.py: its URDF per side). Anything ending in `.urdf` is a path to a
user's file.
"""

import importlib.util
from dataclasses import dataclass
from pathlib import Path

from ..errors import ConfigError
from ..geometry.sides import check_side
from ..paths import URDF_DIR
from .errors import UrdfError
from .hands import HANDS


@dataclass(frozen=True)
class ModelInfo:
    kind: str  # "arm" or "hand"
    mount_frame: str | None = None  # arms: the frame a hand is mounted on; "{Side}" becomes "Right" or "Left"

    def mount_frame_for(self, side: str) -> str | None:
        return None if self.mount_frame is None else self.mount_frame.format(Side=side.capitalize())


# The arms: each one's URDF is configs/urdf/<arm>.urdf (both sides), but the A7's, which comes from its package.
# Hands are described by files (HANDS).
ARMS: dict[str, ModelInfo] = {
    "piper": ModelInfo("arm", mount_frame="hand_mount"),
    "linker_a7": ModelInfo("arm", mount_frame="{Side}_Wrist_Roll_Link"),
}
BUILTIN_MODELS: dict[str, ModelInfo] = {**ARMS, **{name: ModelInfo("hand") for name in HANDS}}


def is_urdf_path(model: str) -> bool:
    return model.endswith(".urdf")


def resolve_urdf(model: str, side: str) -> Path:
    """A built-in model name or a path to a URDF file -> the URDF path to load."""
    check_side(side)
    if is_urdf_path(model):
        path = Path(model).expanduser()
        if not path.is_file():
            raise UrdfError(f"URDF file not found: {path}. Give an existing .urdf path or a built-in model name: "
                            f"{', '.join(BUILTIN_MODELS)}")
        return path
    if model in HANDS:
        return HANDS[model].urdf_path(side)
    if model == "linker_a7":
        return linker_a7_urdf_path(side)
    if model in ARMS:
        return urdf_path(model)
    raise ConfigError(f"Unknown model {model!r}. Use a built-in model ({', '.join(BUILTIN_MODELS)}) or a path to a "
                      ".urdf file.")


def urdf_path(name: str) -> Path:
    """Path of an authored URDF in configs/urdf/, by file name with or without .urdf (e.g. "piper")."""
    file_name = name if name.endswith(".urdf") else f"{name}.urdf"
    path = URDF_DIR / file_name
    if not path.is_file():
        available = sorted(p.stem for p in URDF_DIR.glob("*.urdf"))
        raise UrdfError(f"No URDF named {name!r} in {URDF_DIR}. Available: {available}")
    return path


def linker_a7_urdf_path(side: str) -> Path:
    """The Linker Arm A7 URDF shipped inside the installed `linkerbot` package.

    Base link `Base_Link` (a torso; the right file puts the shoulder 1.217 m above it, the left file at 0 m);
    end-effector link `{Right,Left}_Wrist_Roll_Link`. Raises ModuleNotFoundError if linkerbot is not installed.
    """
    check_side(side)
    # find_spec locates the package without importing it (its arm module pulls in pinocchio and python-can).
    spec = importlib.util.find_spec("linkerbot")
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError("The Linker Arm A7 URDF comes from the 'linkerbot' package, which is not "
                                  "installed. Install it: pip install 'linkerbot>=0.5.4'.")
    path = Path(spec.origin).parent / "arm" / "kinetix" / "urdf" / f"a7__{side}.urdf"
    if not path.is_file():
        raise UrdfError(f"The installed linkerbot ({Path(spec.origin).parent}) has no {path.name} at {path}; "
                        "use linkerbot 0.5.4 or a version that ships arm/kinetix/urdf/a7__{left,right}.urdf.")
    return path
