"""Hand retargeting: operator hand keypoints (or glove angles, or a controller's grip) -> robot hand joints, for any
hand URDF.

Methods, each an engine behind `HandRetargeter` (one set of input checks and failure handling): "teledex" (the
TeleDex optimiser: calibrated keypoint alignment, pinch coupling, smoothness), "dexpilot" (DexPilot task-space
vectors), "joint_mapping" (direct per-joint maps over the operator's calibrated ranges, from glove angles or
keypoints) and "analog" (a closure 0..1 along the operator's chosen grasp). Entry point: `build_retargeter`.
"""

from .calibration import HandCalibration, calibrate, calibrate_session, default_calibration
from .config import RetargetingConfig
from .conventions import CONVENTIONS, to_internal
from .grasp_anchors import GraspAnchorSettings, GraspTemplate
from .hand_layout import HandKeypointLayout, build_layout
from .retargeter import METHODS, HandRetargeter, build_retargeter

__all__ = [
    "CONVENTIONS",
    "METHODS",
    "GraspAnchorSettings",
    "GraspTemplate",
    "HandCalibration",
    "HandKeypointLayout",
    "HandRetargeter",
    "RetargetingConfig",
    "build_layout",
    "build_retargeter",
    "calibrate",
    "calibrate_session",
    "default_calibration",
    "to_internal",
]
