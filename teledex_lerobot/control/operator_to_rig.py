"""Operator intent -> rig joint targets: the hand by direct joint mapping or keypoint retargeting, the arm by
Cartesian relative control."""

import logging

import numpy as np

from ..retargeting import HandCalibration, HandRetargeter, RetargetingConfig
from ..retargeting.joint_mapping import joint_map_path, load_joint_map, with_operator_ranges
from ..rig import Rig
from .relative_arm import FAITHFUL, CartesianRelativeArm

logger = logging.getLogger(__name__)

HAND_METHODS = ("joint_mapping", "teledex", "dexpilot")


class OperatorToRig:
    """Holds the last good target of each part: a non-finite input never reaches the rig, it is counted instead.

    retargeting: "joint_mapping" maps canonical human angles (any input); "teledex" and "dexpilot" retarget hand
    keypoints (then `__call__` needs them). hand_calibration: a teledex-calibrate-hand file of the operator.
    """

    def __init__(self, rig: Rig, joint_map_file: str = "", retargeting: str = "joint_mapping",
                 retargeting_config=None, hand_calibration: str = ""):
        if retargeting not in HAND_METHODS:
            raise ValueError(f"retargeting must be one of {HAND_METHODS}, got {retargeting!r}")
        self.rig = rig
        self.retargeting = retargeting
        self.hand_map = None
        self.hand_retargeter: HandRetargeter | None = None
        self.arm_control = None
        self.rejected_samples = 0
        self._last = {role: part.home for role, part in rig.parts.items()}
        hand = rig.parts.get("hand")
        calibration = HandCalibration.load(hand_calibration) if hand_calibration else None
        if hand is not None and retargeting == "joint_mapping":
            path = joint_map_file or joint_map_path(hand.spec.model, hand.spec.side)
            self.hand_map = load_joint_map(path, hand.joints, hand.lower, hand.upper)
            if calibration is not None:
                self.hand_map = with_operator_ranges(self.hand_map, calibration.canonical_angle_ranges_rad)
        elif hand is not None:
            self.hand_retargeter = HandRetargeter(hand.model, retargeting, hand.spec.side,
                                                  RetargetingConfig.load(retargeting_config or None), calibration)
        if "arm" in rig.parts:
            self.arm_control = CartesianRelativeArm(rig.parts["arm"], FAITHFUL)

    def reset(self) -> None:
        if self.arm_control is not None:
            self.arm_control.reset()
        if self.hand_retargeter is not None:
            self.hand_retargeter.reset()

    def __call__(self, canonical_angles: np.ndarray | None, wrist_pose: np.ndarray,
                 hand_keypoints: np.ndarray | None = None) -> dict[str, np.ndarray]:
        uses_angles = self.hand_map is not None
        if not np.all(np.isfinite(wrist_pose)) or (uses_angles and not np.all(np.isfinite(canonical_angles))):
            self.rejected_samples += 1
            logger.warning("Non-finite operator sample rejected (%d so far); holding targets", self.rejected_samples)
            return dict(self._last)
        if self.hand_map is not None:
            self._last["hand"] = self.hand_map(canonical_angles)
        elif self.hand_retargeter is not None:
            hand = self.rig.parts["hand"]
            # The retargeter holds its last output itself on a bad frame (and counts it in .failures).
            self._last["hand"] = self.hand_retargeter.retarget(hand_keypoints)[hand.indices]
        if self.arm_control is not None:
            self._last["arm"] = self.arm_control(wrist_pose, self._last["arm"])
        return dict(self._last)
