"""Keypoint and joint-angle naming conventions shared by every operator input.

Keypoints follow MediaPipe's 21-point hand order, in metres, in the operator *wrist frame* (see
`teledex_lerobot.operator.hand_model` for the frame definition):

    0 wrist
    1-4   thumb  CMC, MCP, IP, TIP
    5-8   index  MCP, PIP, DIP, TIP
    9-12  middle MCP, PIP, DIP, TIP
    13-16 ring   MCP, PIP, DIP, TIP
    17-20 pinky  MCP, PIP, DIP, TIP
"""

import numpy as np

FINGER_NAMES = ("thumb", "index", "middle", "ring", "pinky")

NUM_KEYPOINTS = 21
WRIST = 0
THUMB_CMC, THUMB_MCP, THUMB_IP, THUMB_TIP = 1, 2, 3, 4
INDEX_MCP, MIDDLE_MCP, RING_MCP, PINKY_MCP = 5, 9, 13, 17

# Each finger's four keypoints from its base joint to its tip.
FINGER_CHAINS = {name: tuple(range(1 + 4 * i, 5 + 4 * i)) for i, name in enumerate(FINGER_NAMES)}
FINGERTIP_INDICES = tuple(chain[-1] for chain in FINGER_CHAINS.values())

_JOINT_LABELS = {"thumb": ("cmc", "mcp", "ip", "tip")} | {
    name: ("mcp", "pip", "dip", "tip") for name in FINGER_NAMES[1:]
}
KEYPOINT_NAMES = ("wrist",) + tuple(f"{name}_{joint}" for name in FINGER_NAMES for joint in _JOINT_LABELS[name])

# The canonical human hand angles (radians): the one joint-angle layout every input device is converted into.
# Four per finger, in finger order; see hand_model for the exact geometric meaning and signs.
CANONICAL_ANGLE_NAMES = (
    "thumb_cmc_flex", "thumb_cmc_abd", "thumb_mcp_flex", "thumb_ip_flex",
    "index_mcp_flex", "index_mcp_abd", "index_pip_flex", "index_dip_flex",
    "middle_mcp_flex", "middle_mcp_abd", "middle_pip_flex", "middle_dip_flex",
    "ring_mcp_flex", "ring_mcp_abd", "ring_pip_flex", "ring_dip_flex",
    "pinky_mcp_flex", "pinky_mcp_abd", "pinky_pip_flex", "pinky_dip_flex",
)  # fmt: skip
NUM_CANONICAL_ANGLES = len(CANONICAL_ANGLE_NAMES)

# OpenXR XR_EXT_hand_tracking (also Pico/XRoboToolkit) 26 joints: 0 palm, 1 wrist, then per finger metacarpal,
# proximal, (intermediate,) distal, tip. MediaPipe keeps the thumb metacarpal as its CMC point and drops the palm and
# the four other metacarpals.
OPENXR26_INDEX_FOR_MEDIAPIPE21 = np.array([1, 2, 3, 4, 5, 7, 8, 9, 10, 12, 13, 14, 15, 17, 18, 19, 20, 22, 23, 24, 25])


def validate_keypoints(keypoints) -> None:
    """Raise ValueError naming the problem if `keypoints` is not a finite (..., 21, 3) array.

    It only reports; the caller decides whether to hold the last good frame or stop.
    """
    array = np.asarray(keypoints)
    if array.ndim < 2 or array.shape[-2:] != (NUM_KEYPOINTS, 3):
        raise ValueError(
            f"hand keypoints must have shape (..., {NUM_KEYPOINTS}, 3) in MediaPipe-21 order (metres); "
            f"got shape {array.shape}"
        )
    if not np.issubdtype(array.dtype, np.number) or np.issubdtype(array.dtype, np.complexfloating):
        raise ValueError(f"hand keypoints must be real numbers; got dtype {array.dtype}")
    bad = ~np.isfinite(array)
    if bad.any():
        where = np.argwhere(bad)[0]
        sample, keypoint = tuple(int(i) for i in where[:-2]), int(where[-2])
        prefix = f"sample {sample}, " if sample else ""
        raise ValueError(
            f"hand keypoints contain NaN/inf ({int(bad.sum())} values); first at {prefix}"
            f"keypoint {keypoint} ({KEYPOINT_NAMES[keypoint]})"
        )


def mediapipe_from_openxr(joint_positions) -> np.ndarray:
    """Select MediaPipe-21 keypoints from OpenXR 26-joint positions (..., 26, 3); frame and units unchanged."""
    joints = np.asarray(joint_positions)
    if joints.ndim < 2 or joints.shape[-2:] != (26, 3):
        raise ValueError(f"OpenXR hand joints must have shape (..., 26, 3); got shape {joints.shape}")
    return joints[..., OPENXR26_INDEX_FOR_MEDIAPIPE21, :]
