"""The control strategy scheduler: the config, not the code, chooses how an input drives a rig.

- "direct": joint space. The hand maps canonical human angles (a glove, or angles measured from keypoints) through
  a joint map; the arm copies a leader arm's joints (renamed by `leader_joint_map`).
- "hybrid": the hand by keypoint retargeting, a joint map, or an analog input closing it along the operator's chosen
  grasp (a measured pinch or wrap, or open .. fist; a button steps through them); the arm by Cartesian relative
  control of an operator pose (controller or wrist) with IK, engaged while `anchor_input` is pressed.

A part whose input is missing from a frame keeps its reference (the last command sent).
"""

from collections.abc import Callable

import numpy as np

from ..inputs.frame import OperatorFrame
from ..operator.hand_model import angles_from_keypoints
from ..operator.poses import FIST, OPEN_HAND
from ..retargeting import HandCalibration, HandRetargeter, RetargetingConfig
from ..retargeting.calibration import calibration_file
from ..retargeting.joint_mapping import joint_map_path, load_joint_map, with_operator_ranges
from ..retargeting.retargeter import hand_name
from ..rig import Rig
from .config import RelativeArmConfig, StrategyConfig
from .hand_grasps import GraspChoice
from .relative_arm import CartesianRelativeArm


class RigStrategy:
    def __init__(self, rig: Rig, config: StrategyConfig, arm_config: RelativeArmConfig | None = None):
        config.validate()
        if config.strategy == "direct" and config.hand_method != "joint_mapping":
            raise ValueError("strategy 'direct' drives the hand by joint mapping; set hand_method: joint_mapping "
                             f"(got {config.hand_method!r}) or use strategy 'hybrid'")
        self.rig = rig
        self.config = config
        self.hand_map = self.hand_retargeter = self.arm_control = self.grasps = None
        self.last_ik_s = 0.0
        hand = rig.parts.get("hand")
        if hand is not None:
            calibration = HandCalibration.load(calibration_file(config.hand_calibration, hand_name(hand.model),
                                                                hand.spec.side)) if config.hand_calibration else None
            if config.hand_method in ("joint_mapping", "analog"):
                path = config.joint_map or joint_map_path(hand.spec.model, hand.spec.side)
                self.hand_map = load_joint_map(path, hand.joints, hand.lower, hand.upper)
                if calibration is not None:
                    self.hand_map = with_operator_ranges(self.hand_map, calibration.canonical_angle_ranges_rad)
                if config.hand_method == "analog":
                    self.grasps = GraspChoice(config.hand_grasps, hand.spec.model, hand.joints, hand.lower,
                                              hand.upper,
                                              lambda closure: self.hand_map(OPEN_HAND + closure * (FIST - OPEN_HAND)))
            else:
                self.hand_retargeter = HandRetargeter(hand.model, config.hand_method, config.side,
                                                      RetargetingConfig.load(config.retargeting_config or None),
                                                      calibration)
        arm = rig.parts.get("arm")
        if arm is not None and config.strategy == "hybrid":
            self.arm_control = CartesianRelativeArm(arm, arm_config)
        if arm is not None and config.strategy == "direct":
            self.leader_joints = [config.leader_joint_map.get(joint, joint) for joint in arm.joints]

    def reset(self) -> None:
        """Clear the arm's anchors and the hand retargeter's memory."""
        if self.arm_control is not None:
            self.arm_control.reset()
        if self.hand_retargeter is not None:
            self.hand_retargeter.reset()

    def anchor_pressed(self, frame: OperatorFrame) -> bool:
        name = self.config.anchor_input
        return bool(name) and frame.analog.get(name, 0.0) >= self.config.anchor_threshold

    def engaged(self, frame: OperatorFrame) -> bool:
        """Whether the arm follows this frame: its anchor input pressed, or always without one."""
        return not self.config.anchor_input or self.anchor_pressed(frame)

    def targets(self, frame: OperatorFrame, reference: dict[str, np.ndarray], arm_enabled: bool = True,
                dt_s: float | None = None,
                measured: Callable[[], dict[str, np.ndarray] | None] = lambda: None) -> dict[str, np.ndarray]:
        """Joint targets per role for one frame; `reference` is the last command sent per role; `dt_s` (the time
        since the previous tick) bounds the arm IK's joint speed; `measured` gives the robot's measured pose per
        role (None while unknown), read only when a grasp lets go."""
        self.last_ik_s = 0.0
        targets = {role: np.array(q, dtype=float) for role, q in reference.items()}
        if "hand" in self.rig.parts:
            hand = self._hand_target(frame, lambda: (measured() or {}).get("hand"))
            if hand is not None:
                targets["hand"] = hand
        if "arm" in self.rig.parts:
            arm = self._arm_target(frame, reference["arm"], arm_enabled, dt_s)
            if arm is not None:
                targets["arm"] = arm
        return targets

    def _hand_target(self, frame: OperatorFrame, measured_hand: Callable[[], np.ndarray | None] = lambda: None
                     ) -> np.ndarray | None:
        side, method = self.config.side, self.config.hand_method
        keypoints = frame.hand_keypoints_m.get(side)
        if self.hand_retargeter is not None:
            if keypoints is None:
                return None
            return self.hand_retargeter.retarget(keypoints)[self.rig.parts["hand"].indices]
        if method == "analog":
            if self.config.grasp_select_input:
                self.grasps.select(frame.buttons.get(self.config.grasp_select_input, False))
            closure = frame.analog.get(self.config.hand_analog_input)
            return None if closure is None else self.grasps(closure, measured_hand)
        angles = frame.hand_angles_rad.get(side)
        if angles is None and keypoints is not None:
            angles = angles_from_keypoints(keypoints, side)
        return None if angles is None else self.hand_map(angles)

    def _arm_target(self, frame: OperatorFrame, reference: np.ndarray, arm_enabled: bool,
                    dt_s: float | None) -> np.ndarray | None:
        if self.arm_control is None:  # direct: a leader arm
            if not all(joint in frame.joint_positions for joint in self.leader_joints):
                return None
            return np.array([frame.joint_positions[joint] for joint in self.leader_joints])
        pose = frame.poses.get(self.config.arm_pose_source)
        if pose is None:
            # no pose this frame (tracking lost, or dropped as implausible): release the anchor, so it cannot jump
            # when tracking returns
            self.arm_control.reset()
            return None
        target = self.arm_control(pose, reference, engaged=arm_enabled and self.engaged(frame), dt_s=dt_s)
        self.last_ik_s = self.arm_control.last_ik_s
        return target
