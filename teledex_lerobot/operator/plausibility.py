"""Is this frame a human hand? Checks that catch lost or mis-scaled tracking before it reaches a robot hand.

Trackers report a lost hand in many ways that are finite numbers: all zeros, every point at one place, the last
position repeated in millimetres, a mirrored hand. Each check below compares a MediaPipe-21 frame in the operator
wrist frame (metres) with what a human hand can be:

- hand size: wrist to middle-finger MCP between 4 and 15 cm (adult hands are 7-11 cm, children's from 5 cm;
  millimetres or centimetres given as metres land far outside, so the message names the unit);
- bone lengths: each of the 20 bones, relative to the hand size, between 0.25 and 2.5 times its proportion on the
  average adult hand (`hand_model.AVERAGE_ADULT_HAND`): all points equal, collapsed fingers and swapped joints fail,
  MediaPipe's depth noise does not;
- palm orientation: in the wrist frame the middle-finger MCP lies within 60 degrees of +z, and the index MCP is on
  the thumb side of the pinky MCP (x grows toward the pinky on a right hand): a mirrored or flipped hand fails.

`implausibility(points, side)` returns None for a plausible frame, else (reason, message); the reason is a short
key for counters ("hand_size", "bone_length", "palm_orientation").
"""

import math

import numpy as np

from .hand_model import AVERAGE_ADULT_HAND, keypoints_from_angles
from .keypoints import FINGER_CHAINS, INDEX_MCP, MIDDLE_MCP, NUM_CANONICAL_ANGLES, PINKY_MCP, WRIST

HAND_SIZE_RANGE_M = (0.04, 0.15)  # wrist to middle-finger MCP
BONE_RATIO_RANGE = (0.25, 2.5)  # bone / hand size, relative to the average adult hand's proportion
MAX_PALM_TILT_RAD = np.radians(60.0)

# The 20 bones: wrist -> each finger's base, then along each finger.
_BONES = np.array([(WRIST, chain[0]) for chain in FINGER_CHAINS.values()]
                  + [(a, b) for chain in FINGER_CHAINS.values() for a, b in zip(chain[:-1], chain[1:])])


def _nominal_bone_ratios() -> np.ndarray:
    flat = keypoints_from_angles(np.zeros(NUM_CANONICAL_ANGLES), "right", geometry=AVERAGE_ADULT_HAND)
    lengths = np.linalg.norm(flat[_BONES[:, 1]] - flat[_BONES[:, 0]], axis=1)
    return lengths / np.linalg.norm(flat[MIDDLE_MCP] - flat[WRIST])


_NOMINAL_BONE_RATIOS = _nominal_bone_ratios()
_BONE_STARTS, _BONE_ENDS = _BONES[:, 0].copy(), _BONES[:, 1].copy()
_BONE_SQUARED_BOUNDS = (np.array(BONE_RATIO_RANGE)[:, None] * _NOMINAL_BONE_RATIOS) ** 2  # (2, 20), per size²
_MIN_PALM_COSINE = float(np.cos(MAX_PALM_TILT_RAD))
_ONES_3 = np.ones(3)


def implausibility(points: np.ndarray, side: str) -> tuple[str, str] | None:
    """None if `points` (21, 3), wrist frame, metres, can be a human `side` hand; else (reason, message)."""
    middle = points[MIDDLE_MCP] - points[WRIST]
    size = math.sqrt(middle @ middle)
    low, high = HAND_SIZE_RANGE_M
    if not low <= size <= high:
        unit = " (millimetres or centimetres given as metres?)" if size > high else ""
        return "hand_size", (f"wrist to middle-finger MCP is {size:.4g} m, outside a human hand's "
                             f"{low:g}-{high:g} m{unit}")
    # squared bone lengths against the plausible range's squared bounds (no roots or logarithms on a good frame:
    # this runs on every tracked frame)
    bones = points.take(_BONE_ENDS, axis=0) - points.take(_BONE_STARTS, axis=0)
    squared = (bones * bones) @ _ONES_3
    low_squared, high_squared = _BONE_SQUARED_BOUNDS * (size * size)
    outside = (squared < low_squared) | (squared > high_squared)
    if outside.any():
        ratios = np.sqrt(squared) / size / _NOMINAL_BONE_RATIOS
        worst = int(np.argmax(np.where(outside, np.abs(np.log(np.maximum(ratios, 1e-12))), -1.0)))
        a, b = _BONES[worst]
        return "bone_length", (f"bone {a}-{b} is {ratios[worst]:.2f} x its usual proportion of the hand "
                               f"(plausible: {BONE_RATIO_RANGE[0]}-{BONE_RATIO_RANGE[1]})")
    if middle[2] / size < _MIN_PALM_COSINE:
        return "palm_orientation", "the middle finger does not point along the wrist frame's +z"
    across = points[PINKY_MCP, 0] - points[INDEX_MCP, 0]
    if (across < 0) if side == "right" else (across > 0):
        return "palm_orientation", f"the index and little fingers are swapped for a {side} hand (mirrored input?)"
    return None
