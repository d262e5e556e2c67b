"""Direct joint mapping: canonical human hand angles -> robot hand joints, one linear map per robot joint.

A map file (configs/joint_maps/<model>[_<side>].yaml) gives, for each driven robot joint:

    <robot_joint>:
      from: {<canonical angle>: <weight>, ...}   # weighted sum of human angles, rad
      human_range_rad: [a, b]                     # the part of that sum that spans the robot joint's range
      robot_range: [at_a, at_b]                   # optional; the robot value at a and at b (default: the joint's
                                                  # lower and upper limit from the model)

robot = at_a + (sum - a) / (b - a) * (at_b - at_a), then clipped to the model's limits.

As a retargeting method ("joint_mapping"), each entry's nominal `human_range_rad` can be replaced by the range the
operator actually covered in the calibration recording (`with_operator_ranges`), so that their own full fist and
full opening reach the robot's limits. Gloves feed canonical angles directly; keypoint input is converted with
`operator.hand_model.angles_from_keypoints`.
"""

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml

from ..errors import ConfigError
from ..kinematics.hands import HANDS
from ..operator.hand_model import angles_from_keypoints
from ..operator.keypoints import CANONICAL_ANGLE_NAMES
from ..paths import JOINT_MAPS_DIR

_ENTRY_KEYS = {"from", "human_range_rad", "robot_range"}


@dataclass(frozen=True)
class JointMap:
    joints: list[str]
    weights: np.ndarray  # (n_joints, 20): robot joint i reads weights[i] @ canonical angles
    human_low: np.ndarray
    human_high: np.ndarray
    robot_at_low: np.ndarray
    robot_at_high: np.ndarray
    lower: np.ndarray
    upper: np.ndarray

    def __call__(self, canonical_angles: np.ndarray) -> np.ndarray:
        combined = self.weights @ canonical_angles
        fraction = (combined - self.human_low) / (self.human_high - self.human_low)
        return np.clip(self.robot_at_low + fraction * (self.robot_at_high - self.robot_at_low), self.lower, self.upper)


def joint_map_path(model: str, side: str) -> Path:
    """The map for a hand: the one its descriptor names for the side (configs/hands/<model>.yaml `joint_map`), else a
    side-specific file in configs/joint_maps/ if there is one, else the model's file there."""
    described = HANDS[model].joint_map_path(side) if model in HANDS else None
    if described is not None:
        return described
    for candidate in (JOINT_MAPS_DIR / f"{model}_{side}.yaml", JOINT_MAPS_DIR / f"{model}.yaml"):
        if candidate.is_file():
            return candidate
    raise ConfigError(f"No joint map for hand model {model!r} ({side}) in {JOINT_MAPS_DIR}: write {model}.yaml there "
                      "(format in teledex_lerobot/retargeting/joint_mapping.py), or set joint_map to a map file path")


def load_joint_map(path: str | Path, joints: list[str], lower: np.ndarray, upper: np.ndarray) -> JointMap:
    """Build the map for `joints` (the driven joints, with their limits) from a map file."""
    try:
        data = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError, UnicodeDecodeError) as err:
        raise ConfigError(f"Cannot read joint map {path}: {' '.join(str(err).split())}; fix the file, or give "
                          "another") from err
    if not isinstance(data, dict):
        raise ConfigError(f"Joint map {path} must map robot joint names to entries (got {type(data).__name__}); see "
                          "the format in teledex_lerobot/retargeting/joint_mapping.py")
    unknown = sorted(set(data) - set(joints))
    if unknown:
        raise ConfigError(f"Joint map {path} names joints the hand does not drive: {unknown}; map only the driven "
                          f"joints: {joints}")
    unmapped = [j for j in joints if j not in data]
    if unmapped:
        raise ConfigError(f"Joint map {path} has no entry for driven joint(s) {unmapped}; add them")
    n = len(joints)
    weights = np.zeros((n, len(CANONICAL_ANGLE_NAMES)))
    human_low, human_high = np.zeros(n), np.zeros(n)
    robot_at_low, robot_at_high = np.asarray(lower, float).copy(), np.asarray(upper, float).copy()
    for i, joint in enumerate(joints):
        entry, where = data[joint], f"joint map {path}, joint {joint!r}"
        if not isinstance(entry, dict) or set(entry) - _ENTRY_KEYS or not {"from", "human_range_rad"} <= set(entry) \
                or not isinstance(entry["from"], dict):
            raise ConfigError(f"{where}: needs 'from' (a mapping of human angles to weights) and 'human_range_rad' "
                              f"(optional 'robot_range'), got {entry!r}")
        for angle, weight in entry["from"].items():
            if angle not in CANONICAL_ANGLE_NAMES:
                raise ConfigError(f"{where}: unknown human angle {angle!r}; valid names: {list(CANONICAL_ANGLE_NAMES)}")
            weights[i, CANONICAL_ANGLE_NAMES.index(angle)] = _number(weight, f"{where}, from.{angle}")
        human_low[i], human_high[i] = _range(entry["human_range_rad"], f"{where}, human_range_rad")
        if human_low[i] == human_high[i]:
            raise ConfigError(f"{where}: human_range_rad must span a non-zero range; give two different angles")
        if "robot_range" in entry:
            robot_at_low[i], robot_at_high[i] = _range(entry["robot_range"], f"{where}, robot_range")
    return JointMap(joints, weights, human_low, human_high, robot_at_low, robot_at_high,
                    np.asarray(lower, float), np.asarray(upper, float))


def _number(value, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"{where}: must be a number, got {value!r}")
    return float(value)


def _range(value, where: str) -> tuple[float, float]:
    if not isinstance(value, list | tuple) or len(value) != 2:
        raise ConfigError(f"{where}: must be [low, high] (two numbers), got {value!r}")
    return _number(value[0], where), _number(value[1], where)


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
