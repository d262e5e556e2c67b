"""The human side of teleoperation: hand model, keypoint conventions, glove layout and the operator stream format.

Every input device is reduced to one of two representations: MediaPipe-21 keypoints in the wrist frame, or the 20
canonical human hand angles. `hand_model` converts between them; `glove` maps the UdexReal glove onto the angles;
`stream` stores either with the wrist pose for replay.
"""

from teledex_lerobot.operator.glove import canonical_to_glove, glove_to_canonical
from teledex_lerobot.operator.hand_model import (
    AVERAGE_ADULT_HAND,
    HUMAN_ANGLE_LIMITS_RAD,
    HandGeometry,
    angles_from_keypoints,
    keypoints_from_angles,
    keypoints_in_wrist_frame,
)
from teledex_lerobot.operator.keypoints import (
    CANONICAL_ANGLE_NAMES,
    KEYPOINT_NAMES,
    mediapipe_from_openxr,
    validate_keypoints,
)
from teledex_lerobot.operator.stream import OperatorStream

__all__ = [
    "AVERAGE_ADULT_HAND",
    "CANONICAL_ANGLE_NAMES",
    "HUMAN_ANGLE_LIMITS_RAD",
    "KEYPOINT_NAMES",
    "HandGeometry",
    "OperatorStream",
    "angles_from_keypoints",
    "canonical_to_glove",
    "glove_to_canonical",
    "keypoints_from_angles",
    "keypoints_in_wrist_frame",
    "mediapipe_from_openxr",
    "validate_keypoints",
]
