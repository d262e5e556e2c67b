"""The kinematic models we know by name, and how a model name (or a URDF path) becomes a URDF file."""

from dataclasses import dataclass
from pathlib import Path

from .geometry.sides import check_side
from .kinematics import linker_a7_urdf_path
from .paths import URDF_DIR



@dataclass(frozen=True)
class ModelInfo:
    kind: str  # "arm" or "hand"
    mount_frame: str | None = None  # arms: the frame a hand is mounted on; "{Side}" becomes "Right" or "Left"

    def mount_frame_for(self, side: str) -> str | None:
        return None if self.mount_frame is None else self.mount_frame.format(Side=side.capitalize())


BUILTIN_MODELS: dict[str, ModelInfo] = {
    "piper": ModelInfo("arm", mount_frame="hand_mount"),
    "linker_a7": ModelInfo("arm", mount_frame="{Side}_Wrist_Roll_Link"),
    "linkerhand_o6": ModelInfo("hand"),
    "linkerhand_l10": ModelInfo("hand"),
    "linkerhand_l20": ModelInfo("hand"),
}


def is_urdf_path(model: str) -> bool:
    return model.endswith(".urdf")


def resolve_urdf(model: str, side: str) -> Path:
    """A built-in model name or a path to a URDF file -> the URDF path to load."""
    check_side(side)
    if is_urdf_path(model):
        path = Path(model).expanduser()
        if not path.is_file():
            raise FileNotFoundError(f"URDF file not found: {path}. Give an existing .urdf path or a built-in model "
                                    f"name: {', '.join(BUILTIN_MODELS)}")
        return path
    if model not in BUILTIN_MODELS:
        raise ValueError(f"Unknown model {model!r}. Use a built-in model ({', '.join(BUILTIN_MODELS)}) or a path to "
                         "a .urdf file.")
    if model == "linker_a7":
        return linker_a7_urdf_path(side)
    if model == "piper":
        return URDF_DIR / "piper.urdf"
    return URDF_DIR / f"{model}_{side}.urdf"
