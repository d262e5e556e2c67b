"""Operator intent -> rig joint targets: the hand by direct joint mapping, the arm by Cartesian relative control."""

import logging

import numpy as np

from ..rig import Rig
from .joint_mapping import joint_map_path, load_joint_map
from .relative_arm import CartesianRelativeArm

logger = logging.getLogger(__name__)


class OperatorToRig:
    """Holds the last good target of each part: a non-finite input never reaches the rig, it is counted instead."""

    def __init__(self, rig: Rig, joint_map_file: str = ""):
        self.rig = rig
        self.hand_map = None
        self.arm_control = None
        self.rejected_samples = 0
        self._last = {role: part.home for role, part in rig.parts.items()}
        hand = rig.parts.get("hand")
        if hand is not None:
            path = joint_map_file or joint_map_path(hand.spec.model, hand.spec.side)
            self.hand_map = load_joint_map(path, hand.joints, hand.lower, hand.upper)
        if "arm" in rig.parts:
            self.arm_control = CartesianRelativeArm(rig.parts["arm"])

    def reset(self) -> None:
        if self.arm_control is not None:
            self.arm_control.reset()

    def __call__(self, canonical_angles: np.ndarray, wrist_pose: np.ndarray) -> dict[str, np.ndarray]:
        if not (np.all(np.isfinite(canonical_angles)) and np.all(np.isfinite(wrist_pose))):
            self.rejected_samples += 1
            logger.warning("Non-finite operator sample rejected (%d so far); holding targets", self.rejected_samples)
            return dict(self._last)
        if self.hand_map is not None:
            self._last["hand"] = self.hand_map(canonical_angles)
        if self.arm_control is not None:
            self._last["arm"] = self.arm_control(wrist_pose, self._last["arm"])
        return dict(self._last)
