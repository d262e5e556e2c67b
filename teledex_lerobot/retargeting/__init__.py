"""Hand retargeting: operator hand keypoints (or glove angles) -> robot hand joints, for any hand URDF.

Methods: "teledex" (the TeleDex optimiser: calibrated keypoint alignment, pinch coupling, smoothness), "dexpilot"
(DexPilot task-space vectors) and "joint_mapping" (direct per-joint maps over the operator's calibrated ranges).
Entry point: `build_retargeter`.
"""

from .calibration import HandCalibration, calibrate, default_calibration
from .config import RetargetingConfig
from .conventions import CONVENTIONS, to_internal
from .hand_layout import HandKeypointLayout, build_layout
from .retargeter import METHODS, HandRetargeter, build_retargeter

__all__ = [
    "CONVENTIONS",
    "METHODS",
    "HandCalibration",
    "HandKeypointLayout",
    "HandRetargeter",
    "RetargetingConfig",
    "build_layout",
    "build_retargeter",
    "calibrate",
    "default_calibration",
    "to_internal",
]
