"""The scripted expert as a human operator: its plan becomes MediaPipe hand keypoints and a wrist pose, sent as
keypoint-stream datagrams through the parser, TeleDex hand retargeting and the rig's control chain (state machine,
relative arm IK, output filters), exactly the route a person's hand tracker takes.

The operator's hand shape is the human pose that the control chain's own retargeter (TeleDex, its config) maps to
the expert's robot hand shape: least squares over the canonical angles through a second instance of that retargeter,
started from the pose whose joint-map image is the shape. It is solved once per shape the expert moves between
(preshape, closed, released) and interpolated as the expert interpolates; the poses are drawn as keypoints by the
operator hand model. The wrist pose is the pose of the arm's mount frame under the expert's hand (the relative arm
moves the mount frame as the operator's wrist moves since the first frame).
"""

import numpy as np
from scipy.optimize import least_squares

from ..control.config import ControlConfig
from ..control.rig_controller import RigController
from ..geometry.rotations import matrix_to_quat
from ..inputs.keypoint_stream import encode_keypoints, parse_keypoints
from ..operator.hand_model import HUMAN_ANGLE_LIMITS_RAD, keypoints_from_angles
from ..operator.poses import RELAXED_HAND
from ..retargeting import HandCalibration, HandRetargeter, RetargetingConfig
from ..retargeting.joint_mapping import joint_map_path, load_joint_map
from ..rig import Rig
from .expert import ScriptedExpert

CONTROL_CONFIG = "world_expert_keypoints"
# Weight of staying near the joint-map pose while fitting through the retargeter (the human pose is not unique).
STAY_NEAR_WEIGHT = 0.02
FIT_EVALUATIONS = 40


class OperatorExpert:
    def __init__(self, rig: Rig, scripted: ScriptedExpert, control: str = CONTROL_CONFIG):
        self.rig, self.scripted = rig, scripted
        self.control = ControlConfig.load(control)
        hand = rig.parts["hand"]
        self.side = hand.spec.side
        self.joint_map = load_joint_map(joint_map_path(hand.spec.model, self.side), hand.joints, hand.lower,
                                        hand.upper)
        strategy = self.control.strategy
        calibration = HandCalibration.load(strategy.hand_calibration) if strategy.hand_calibration else None
        self.retargeter = HandRetargeter(hand.model, strategy.hand_method, self.side,
                                         RetargetingConfig.load(strategy.retargeting_config or None), calibration)
        self.hand_indices = hand.indices
        self.controller: RigController | None = None
        self._angles = RELAXED_HAND.copy()
        self._fits: dict[tuple, np.ndarray] = {}

    @property
    def phase(self) -> str:
        return self.scripted.phase

    @property
    def precise_phase(self) -> bool:
        return self.scripted.precise_phase

    @property
    def plan_duration_s(self) -> float:
        return self.scripted.plan_duration_s

    def reset(self, world) -> None:
        self.scripted.reset(world)
        self.controller = RigController(self.rig, self.control)
        self.controller.seed({role: world.joint_positions(role) for role in self.rig.parts})
        self.controller.home = self.controller.last_sent  # start where the robot is, not at the preset's home
        self.controller.state_machine.press("L1")
        self.controller.state_machine.press("L2")

    def joint_map_angles(self, robot_hand_q: np.ndarray) -> np.ndarray:
        """Canonical human angles whose joint-map image is robot_hand_q (closest, within human limits)."""
        low, high = HUMAN_ANGLE_LIMITS_RAD[:, 0], HUMAN_ANGLE_LIMITS_RAD[:, 1]
        start = np.clip(self._angles, low, high)
        fit = least_squares(lambda a: np.concatenate([self.joint_map(a) - robot_hand_q, 0.05 * (a - start)]),
                            start, bounds=(low, high), max_nfev=30)
        self._angles = fit.x
        return fit.x

    def _retargeted(self, angles: np.ndarray) -> np.ndarray:
        self.retargeter.reset()  # each evaluation from scratch: no smoothing toward the previous one
        return self.retargeter.retarget(keypoints_from_angles(angles, self.side))[self.hand_indices]

    def human_angles(self, robot_hand_q: np.ndarray) -> np.ndarray:
        """Canonical human angles that the retargeter maps to robot_hand_q (cached per shape)."""
        key = tuple(np.round(robot_hand_q, 3))
        if key not in self._fits:
            low, high = HUMAN_ANGLE_LIMITS_RAD[:, 0], HUMAN_ANGLE_LIMITS_RAD[:, 1]
            start = np.clip(self.joint_map_angles(robot_hand_q), low, high)
            fit = least_squares(lambda a: np.concatenate([self._retargeted(a) - robot_hand_q,
                                                          STAY_NEAR_WEIGHT * (a - start)]),
                                start, bounds=(low, high), max_nfev=FIT_EVALUATIONS, diff_step=1e-2)
            self._fits[key] = fit.x
        return self._fits[key]

    def operator_angles(self) -> np.ndarray:
        """This tick's human hand pose: the fits of the expert's current start and goal shapes, interpolated as the
        expert interpolates between them."""
        start, goal = self.scripted.hand_segment
        progress = self.scripted.hand_progress
        return (1 - progress) * self.human_angles(start) + progress * self.human_angles(goal)

    def frame(self, world, received_ns: int):
        """The operator's datagram for this tick, parsed as the keypoint receiver parses it."""
        pose, _ = self.scripted.hand_pose_targets(world)
        keypoints = keypoints_from_angles(self.operator_angles(), self.side)
        # The relative arm moves the arm's mount frame as the operator's wrist moves; streaming the mount frame's
        # motion (not the hand's, which sits hand_mount away from it and swings around it) lands the hand exactly.
        mount = pose @ np.linalg.inv(self.rig.hand_mount)
        wrist = np.concatenate([mount[:3, 3], matrix_to_quat(mount[:3, :3])])
        datagram = encode_keypoints(self.side, keypoints, wrist, received_ns)
        return parse_keypoints(datagram, received_ns)

    def act(self, world) -> dict[str, np.ndarray]:
        # The control chain runs on the world's clock: its filters see simulated time, whatever the machine's speed.
        world_ns = int(world.time_s * 1e9)
        return self.controller.step(self.frame(world, world_ns), world_ns,
                                    lambda: {role: world.joint_positions(role) for role in self.rig.parts})
