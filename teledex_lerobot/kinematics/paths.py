"""Where URDF files come from: ours in configs/urdf/, the Linker Arm A7's from the installed linkerbot wheel."""

import importlib.util
from pathlib import Path

from ..geometry.sides import check_side
from ..paths import URDF_DIR
from .errors import UrdfError


def urdf_path(name: str) -> Path:
    """Path of an authored URDF in configs/urdf/, by file name with or without .urdf (e.g. "piper")."""
    file_name = name if name.endswith(".urdf") else f"{name}.urdf"
    path = URDF_DIR / file_name
    if not path.is_file():
        available = sorted(p.stem for p in URDF_DIR.glob("*.urdf"))
        raise UrdfError(f"No URDF named {name!r} in {URDF_DIR}. Available: {available}")
    return path


def linker_a7_urdf_path(side: str) -> Path:
    """The Linker Arm A7 URDF shipped inside the installed `linkerbot` package (not copied into this repo).

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
