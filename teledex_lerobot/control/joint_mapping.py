"""Direct joint mapping: canonical human hand angles -> robot hand joints, one linear map per robot joint.

A map file (configs/joint_maps/<model>[_<side>].yaml) gives, for each driven robot joint:

    <robot_joint>:
      from: {<canonical angle>: <weight>, ...}   # weighted sum of human angles, rad
      human_range_rad: [a, b]                     # the part of that sum that spans the robot joint's range
      robot_range: [at_a, at_b]                   # optional; the robot value at a and at b (default: the joint's
                                                  # lower and upper limit from the model)

robot = at_a + (sum - a) / (b - a) * (at_b - at_a), then clipped to the model's limits.
"""

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml

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
    """The map for a built-in hand: a side-specific file if there is one, else the model's file."""
    for candidate in (JOINT_MAPS_DIR / f"{model}_{side}.yaml", JOINT_MAPS_DIR / f"{model}.yaml"):
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(
        f"No joint map for hand model {model!r} ({side}) in {JOINT_MAPS_DIR}. Write {model}.yaml there "
        "(format in teledex_lerobot/control/joint_mapping.py) or pass a map file path."
    )


def load_joint_map(path: Path, joints: list[str], lower: np.ndarray, upper: np.ndarray) -> JointMap:
    """Build the map for `joints` (the driven joints, with their limits) from a map file."""
    try:
        data = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError) as err:
        raise ValueError(f"Cannot read joint map {path}: {err}") from err
    if not isinstance(data, dict):
        raise ValueError(f"Joint map {path} must map robot joint names to entries")
    unknown = sorted(set(data) - set(joints))
    if unknown:
        raise ValueError(f"Joint map {path} names joints the hand does not drive: {unknown}. Driven joints: {joints}")
    unmapped = [j for j in joints if j not in data]
    if unmapped:
        raise ValueError(f"Joint map {path} has no entry for driven joint(s) {unmapped}; add them.")
    n = len(joints)
    weights = np.zeros((n, len(CANONICAL_ANGLE_NAMES)))
    human_low, human_high = np.zeros(n), np.zeros(n)
    robot_at_low, robot_at_high = np.asarray(lower, float).copy(), np.asarray(upper, float).copy()
    for i, joint in enumerate(joints):
        entry, where = data[joint], f"joint map {path}, joint {joint!r}"
        if not isinstance(entry, dict) or set(entry) - _ENTRY_KEYS or not {"from", "human_range_rad"} <= set(entry):
            raise ValueError(f"{where}: needs 'from' and 'human_range_rad' (optional 'robot_range'), got {entry!r}")
        for angle, weight in entry["from"].items():
            if angle not in CANONICAL_ANGLE_NAMES:
                raise ValueError(f"{where}: unknown human angle {angle!r}; valid names: {list(CANONICAL_ANGLE_NAMES)}")
            weights[i, CANONICAL_ANGLE_NAMES.index(angle)] = float(weight)
        human_low[i], human_high[i] = (float(v) for v in entry["human_range_rad"])
        if human_low[i] == human_high[i]:
            raise ValueError(f"{where}: human_range_rad must span a non-zero range")
        if "robot_range" in entry:
            robot_at_low[i], robot_at_high[i] = (float(v) for v in entry["robot_range"])
    return JointMap(joints, weights, human_low, human_high, robot_at_low, robot_at_high,
                    np.asarray(lower, float), np.asarray(upper, float))
