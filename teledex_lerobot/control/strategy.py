"""The control strategy scheduler: the config, not the code, chooses how an input drives a rig.

- "direct": joint space. The hand maps canonical human angles (a glove, or angles measured from keypoints) through
  a joint map; the arm copies a leader arm's joints (renamed by `leader_joint_map`).
- "hybrid": the hand by keypoint retargeting, a joint map, or an analog input closing it along the operator's chosen
  grasp (a measured pinch or wrap, or open .. fist; a button steps through them); the arm by Cartesian relative
  control of an operator pose (controller or wrist) with IK, engaged while `anchor_input` is pressed.

Every hand method is an engine of one HandRetargeter (its input checks, failure handling and joint limits); this
module only chooses it and routes the frame's input to it. A part whose input is missing from a frame keeps its
reference (the last command sent).
"""

import dataclasses
from collections.abc import Callable

import numpy as np

from ..errors import ConfigError
from ..inputs.frame import OperatorFrame
from ..retargeting import HandCalibration, HandRetargeter, RetargetingConfig
from ..retargeting.analog import GraspChoice
from ..retargeting.calibration import calibration_file
from ..retargeting.retargeter import hand_name
from ..rig import Rig, RigPart
from .config import RelativeArmConfig, StrategyConfig
from .hand_grasps import grasp_anchors, grasp_paths, mirrored_joints
from .relative_arm import CartesianRelativeArm


class RigStrategy:
    def __init__(self, rig: Rig, config: StrategyConfig, arm_config: RelativeArmConfig | None = None):
        config.validate()
        if config.strategy == "direct" and config.hand_method != "joint_mapping":
            raise ConfigError("strategy 'direct' drives the hand by joint mapping; set hand_method: joint_mapping "
                              f"(got {config.hand_method!r}) or use strategy 'hybrid'")
        self.rig = rig
        self.config = config
        self.hand_retargeter: HandRetargeter | None = None
        self.arm_control: CartesianRelativeArm | None = None
        self.last_ik_s = 0.0
        hand = rig.parts.get("hand")
        if hand is not None:
            self.hand_retargeter = _hand_retargeter(hand, config)
        arm = rig.parts.get("arm")
        if arm is not None and config.strategy == "hybrid":
            self.arm_control = CartesianRelativeArm(arm, arm_config)
        if arm is not None and config.strategy == "direct":
            self.leader_joints = [config.leader_joint_map.get(joint, joint) for joint in arm.joints]

    @property
    def grasps(self) -> GraspChoice | None:
        """The analog method's grasps (the chosen one's name is shown to the operator), else None."""
        return None if self.hand_retargeter is None else self.hand_retargeter.grasps

    def reset(self, resuming: bool = False) -> None:
        """Clear the arm's anchors and the hand retargeter's memory (`resuming` after a stale gap: the relative arm
        resumes without its dead zones, relative_arm.py)."""
        if self.arm_control is not None:
            self.arm_control.reset(resuming)
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
        """The hand's driven joints from this frame's input for the method: a grip (and the grasp selection button),
        a glove's angles, or keypoints; None when the frame lacks it. `measured_hand`: the driven joints measured."""
        retargeter, hand, side = self.hand_retargeter, self.rig.parts["hand"], self.config.side
        assert retargeter is not None  # made with the rig's hand
        if retargeter.method == "analog":
            if self.config.grasp_select_input:
                retargeter.select_grasp(frame.buttons.get(self.config.grasp_select_input, False))
            closure = frame.analog.get(self.config.hand_analog_input)
            if closure is None:
                return None
            q = retargeter.retarget_closure(closure, lambda: _full_configuration(hand, measured_hand()))
        elif retargeter.method == "joint_mapping" and side in frame.hand_angles_rad:
            q = retargeter.retarget_angles(frame.hand_angles_rad[side])
        elif side in frame.hand_keypoints_m:
            q = retargeter.retarget(frame.hand_keypoints_m[side], lambda: _full_configuration(hand, measured_hand()))
        else:
            return None
        return q[hand.indices]

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


def _hand_retargeter(hand: RigPart, config: StrategyConfig) -> HandRetargeter:
    """The hand's retargeter for the configured method, calibration, joint map and grasps."""
    calibration = HandCalibration.load(calibration_file(config.hand_calibration, hand_name(hand.model),
                                                        hand.spec.side)) if config.hand_calibration else None
    retargeting = RetargetingConfig.load(config.retargeting_config or None)
    if config.joint_map:  # the control config's map (set per rig, e.g. for a glove) wins over the retargeting's
        retargeting = dataclasses.replace(retargeting, joint_map=config.joint_map)
    joints, lower, upper = hand.model.joint_names, hand.model.lower, hand.model.upper
    if config.hand_method == "analog":
        return HandRetargeter(hand.model, "analog", config.side, retargeting, calibration,
                              grasps=grasp_paths(config.hand_grasps, hand.spec.model, joints, lower, upper,
                                                 mirrored_joints(hand.spec.model, hand.spec.side)))
    anchors = None
    if config.hand_method in ("teledex", "dexpilot"):
        templates = None  # the hand model's
        if config.grasp_templates == "calibration":
            templates = calibration.templates() if calibration is not None else {}
        anchors = grasp_anchors(config.hand_grasps, hand.spec.model, joints, lower, upper, config.side,
                                retargeting.grasp_anchors, templates, mirrored_joints(hand.spec.model, hand.spec.side))
    return HandRetargeter(hand.model, config.hand_method, config.side, retargeting, calibration, anchors=anchors)


def _full_configuration(hand: RigPart, driven: np.ndarray | None) -> np.ndarray | None:
    return None if driven is None else hand.full_configuration(driven)
