"""Direct joint mapping as a retargeting method: canonical human angles -> robot joints through a `JointMap`.

The map itself (per-joint linear maps, configs/joint_maps/) lives in `control.joint_mapping`. This adds the
operator's calibrated ranges: each map entry's `human_range_rad` (a nominal human range of the weighted angle sum)
is replaced by the range the operator actually covered in the calibration recording, so that their own full fist
and full opening reach the robot's limits. Gloves feed canonical angles directly; keypoint input is converted with
`operator.hand_model.angles_from_keypoints`.
"""

import dataclasses

import numpy as np

from ..control.joint_mapping import JointMap
from ..operator.hand_model import angles_from_keypoints
from ..operator.keypoints import CANONICAL_ANGLE_NAMES


def with_operator_ranges(joint_map: JointMap, canonical_angle_ranges_rad: dict) -> JointMap:
    """`joint_map` with each entry's human range taken from the operator's per-angle [low, high] ranges.

    A weighted sum Σ w_a angle_a spans [Σ min(w_a lo_a, w_a hi_a), Σ max(...)]; the entry keeps its direction (a
    map written high-to-low stays high-to-low). Entries reading an angle the calibration lacks keep their range.
    """
    if not canonical_angle_ranges_rad:
        return joint_map
    missing = [name for name in CANONICAL_ANGLE_NAMES if name not in canonical_angle_ranges_rad]
    ranges = np.array([canonical_angle_ranges_rad.get(name, (np.nan, np.nan)) for name in CANONICAL_ANGLE_NAMES])
    ends = joint_map.weights[:, :, None] * ranges[None, :, :]  # (joints, 20, 2)
    low = np.where(joint_map.weights != 0, ends.min(axis=2), 0.0).sum(axis=1)
    high = np.where(joint_map.weights != 0, ends.max(axis=2), 0.0).sum(axis=1)
    usable = np.isfinite(low) & np.isfinite(high) & (high - low > 1e-3)
    if missing:
        usable &= ~joint_map.weights[:, [CANONICAL_ANGLE_NAMES.index(m) for m in missing]].any(axis=1)
    ascending = joint_map.human_low < joint_map.human_high
    new_low = np.where(usable, np.where(ascending, low, high), joint_map.human_low)
    new_high = np.where(usable, np.where(ascending, high, low), joint_map.human_high)
    return dataclasses.replace(joint_map, human_low=new_low, human_high=new_high)


class JointMappingRetargeter:
    def __init__(self, joint_map: JointMap, side: str):
        self.joint_map = joint_map
        self.side = side

    def map_angles(self, canonical_angles: np.ndarray) -> np.ndarray:
        return self.joint_map(canonical_angles)

    def solve(self, keypoints: np.ndarray, q_previous: np.ndarray) -> np.ndarray:
        return self.joint_map(angles_from_keypoints(keypoints, self.side))
