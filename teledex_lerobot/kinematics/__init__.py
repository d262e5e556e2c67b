"""Kinematics: URDF parsing, forward kinematics / Jacobians (`KinematicModel`), IK (`solve_ik`), the catalogue of
built-in models and where their URDFs are (`catalogue`).

Units: metres, radians, seconds. Poses are 4x4 homogeneous matrices in the model's base (root link) frame.
Joint vectors are the actuated joints in command order (`KinematicModel.joint_names`, URDF document order);
mimic joints are computed from them.

Hand base frame (every hand URDF in configs/urdf/, `linkerhand_*_{left,right}.urdf`): base link `hand_base`, origin
at the wrist; +z from the wrist toward the middle-finger MCP; +y out of the palm face (the side the fingers flex
toward); +x = y × z, i.e. toward the pinky on a right hand and toward the thumb on a left hand. At zero joint angles
the hand is flat and open with the fingers along +z; flexion moves the fingertips toward +y. Keypoint frames:
`{index,middle,ring,pinky}_{mcp,pip,dip,tip}` and `thumb_{cmc,mcp,ip,tip}`. A left hand is the mirror image
(x -> -x) of the right hand; the per-model mirror rule for joint signs is in each URDF's header comment.
"""

from .catalogue import BUILTIN_MODELS, ModelInfo, linker_a7_urdf_path, resolve_urdf, urdf_path
from .errors import UrdfError
from .ik import IkResult, solve_ik
from .model import KinematicModel
from .urdf import JointLimits, JointSpec, Mimic, UrdfDescription, load_urdf, parse_urdf

__all__ = [
    "BUILTIN_MODELS",
    "IkResult",
    "JointLimits",
    "JointSpec",
    "KinematicModel",
    "Mimic",
    "ModelInfo",
    "UrdfDescription",
    "UrdfError",
    "linker_a7_urdf_path",
    "load_urdf",
    "parse_urdf",
    "resolve_urdf",
    "solve_ik",
    "urdf_path",
]
