"""Hand keypoint input conventions -> the internal layout: MediaPipe-21 order, metres, operator wrist frame.

Conventions (all give positions per joint, in metres):
- "mediapipe21": MediaPipe Hands order (see `operator.keypoints`);
- "openxr26": OpenXR XR_EXT_hand_tracking / Pico: 0 palm, 1 wrist, then per finger metacarpal, proximal,
  (intermediate,) distal, tip; the palm and the four non-thumb metacarpals are dropped;
- "webxr25": WebXR / Apple Vision Pro (ARKit) 25 joints: 0 wrist, thumb 1-4, then per finger metacarpal, proximal,
  intermediate, distal, tip; the four non-thumb metacarpals are dropped.
Frames: "wrist" means the points are already in the operator wrist frame (only the wrist is moved to the origin);
"world" means any frame (camera, headset): the wrist frame is estimated from the wrist and MCP points for `side`.
"""

import numpy as np

from ..errors import ConfigError
from ..operator.hand_model import keypoints_in_wrist_frame
from ..operator.keypoints import NUM_KEYPOINTS, OPENXR26_INDEX_FOR_MEDIAPIPE21, WRIST

WEBXR25_INDEX_FOR_MEDIAPIPE21 = np.array([0, 1, 2, 3, 4, 6, 7, 8, 9, 11, 12, 13, 14, 16, 17, 18, 19, 21, 22, 23, 24])
CONVENTIONS = {
    "mediapipe21": (NUM_KEYPOINTS, None),
    "openxr26": (26, OPENXR26_INDEX_FOR_MEDIAPIPE21),
    "webxr25": (25, WEBXR25_INDEX_FOR_MEDIAPIPE21),
}
FRAMES = ("wrist", "world")


def check_convention(convention: str, frame: str) -> None:
    if convention not in CONVENTIONS:
        raise ConfigError(f"input_convention: unknown keypoint convention {convention!r}; use one of "
                          f"{sorted(CONVENTIONS)}")
    if frame not in FRAMES:
        raise ConfigError(f"input_frame: unknown keypoint frame {frame!r}; use one of {FRAMES}")


def to_internal(points, convention: str = "mediapipe21", frame: str = "wrist", side: str = "right") -> np.ndarray:
    """(..., J, 3) points in `convention` -> (..., 21, 3) MediaPipe-21, wrist frame. Raises ValueError on bad input."""
    count, selection = CONVENTIONS[convention]
    array = np.asarray(points, dtype=float)
    if array.ndim < 2 or array.shape[-2:] != (count, 3):
        raise ValueError(f"{convention} keypoints must have shape (..., {count}, 3); got {array.shape}")
    if not np.isfinite(array).all():
        raise ValueError("keypoints contain NaN/inf")
    if selection is not None:
        array = array[..., selection, :]
    if frame == "world":
        return keypoints_in_wrist_frame(array, side)
    return array - array[..., WRIST:WRIST + 1, :]
