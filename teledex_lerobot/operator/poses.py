"""Named canonical hand poses and a pinch solver on the synthetic hand model (used to make realistic streams)."""

import numpy as np
from scipy.optimize import least_squares

from teledex_lerobot.operator.hand_model import (
    AVERAGE_ADULT_HAND,
    HUMAN_ANGLE_LIMITS_RAD,
    HandGeometry,
    keypoints_from_angles,
)
from teledex_lerobot.operator.keypoints import FINGER_CHAINS, FINGER_NAMES, THUMB_TIP


def hand_pose(thumb, index, middle, ring, pinky) -> np.ndarray:
    """Canonical angles (20,) from per-finger 4-tuples, each in canonical order.

    thumb = (cmc_flex, cmc_abd, mcp_flex, ip_flex); fingers = (mcp_flex, mcp_abd, pip_flex, dip_flex).
    """
    pose = np.concatenate([thumb, index, middle, ring, pinky]).astype(float)
    pose.flags.writeable = False
    return pose


# Fingers straight and slightly spread, thumb out: the "open" end of open/close cycles.
OPEN_HAND = hand_pose(
    thumb=(-0.15, 0.20, 0.05, 0.05),
    index=(0.05, 0.10, 0.05, 0.03),
    middle=(0.05, 0.00, 0.05, 0.03),
    ring=(0.05, 0.06, 0.05, 0.03),
    pinky=(0.05, 0.14, 0.05, 0.03),
)
# The resting posture of an unloaded hand: all joints partly flexed.
RELAXED_HAND = hand_pose(
    thumb=(0.15, 0.35, 0.20, 0.15),
    index=(0.30, 0.05, 0.40, 0.20),
    middle=(0.35, 0.00, 0.45, 0.22),
    ring=(0.40, 0.03, 0.50, 0.25),
    pinky=(0.45, 0.08, 0.50, 0.25),
)
# A closed fist, thumb wrapped over the middle phalanges of the index and middle fingers.
FIST = hand_pose(
    thumb=(0.10, 0.60, 0.55, 1.35),
    index=(1.45, 0.00, 1.75, 1.00),
    middle=(1.50, 0.00, 1.75, 1.00),
    ring=(1.50, 0.00, 1.70, 1.00),
    pinky=(1.45, 0.00, 1.65, 0.95),
)
# A power grasp around a cylinder of about 5 cm diameter lying across the palm (fingers wrap over it, the thumb
# closes the ring from below).
POWER_GRASP = hand_pose(
    thumb=(0.45, 0.90, 0.10, 0.10),
    index=(0.50, 0.00, 0.90, 0.55),
    middle=(0.60, 0.00, 1.00, 0.60),
    ring=(0.60, 0.00, 1.00, 0.60),
    pinky=(0.45, 0.05, 0.75, 0.45),
)


def solve_pinch(
    finger: str,
    start_pose=RELAXED_HAND,
    tip_gap_m: float = 0.0,
    geometry: HandGeometry = AVERAGE_ADULT_HAND,
    scale: float = 1.0,
) -> np.ndarray:
    """Canonical pose (20,) in which the thumb tip meets the tip of `finger`, from `start_pose`.

    Solves the thumb's four angles and the finger's four angles (within human limits) so that the tip distance is
    `tip_gap_m`, with a light pull toward a natural pinch posture so the solution is unique and human-looking. The
    other fingers keep their `start_pose` angles. Raises RuntimeError if the tips cannot be brought together.
    """
    if finger not in FINGER_NAMES[1:]:
        raise ValueError(f"pinch finger must be one of {FINGER_NAMES[1:]}, got {finger!r}")
    finger_number = FINGER_NAMES.index(finger)
    solved = np.r_[0:4, 4 * finger_number : 4 * finger_number + 4]
    # Natural pinch: the thumb opposes further, and the finger curls more, the farther it is from the thumb.
    reach = finger_number - 1
    natural = np.r_[0.25 + 0.2 * reach, 0.75, 0.25, 0.15, 0.55 + 0.15 * reach, 0.0, 0.75, 0.40]
    finger_tip = FINGER_CHAINS[finger][-1]
    pose = np.array(start_pose, dtype=float)

    def residuals(x):
        pose[solved] = x
        keypoints = keypoints_from_angles(pose, "right", scale, geometry)
        gap = keypoints[finger_tip] - keypoints[THUMB_TIP]
        gap_mm = 1000.0 * (gap - tip_gap_m * gap / max(np.linalg.norm(gap), 1e-9))
        return np.r_[gap_mm, 0.3 * (x - natural)]

    lower, upper = HUMAN_ANGLE_LIMITS_RAD[solved].T
    result = least_squares(residuals, np.clip(natural, lower, upper), bounds=(lower, upper), xtol=1e-10)
    pose[solved] = result.x
    keypoints = keypoints_from_angles(pose, "right", scale, geometry)
    gap_error_m = abs(np.linalg.norm(keypoints[finger_tip] - keypoints[THUMB_TIP]) - tip_gap_m)
    if gap_error_m > 0.5e-3:
        raise RuntimeError(f"cannot pinch thumb and {finger}: tips stay {gap_error_m * 1000:.1f} mm off the target gap")
    pose.flags.writeable = False
    return pose
