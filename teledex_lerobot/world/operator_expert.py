"""The scripted expert as a human operator: its plan becomes MediaPipe hand keypoints and a wrist pose, sent as
keypoint-stream datagrams through the parser, TeleDex hand retargeting and the rig's control chain (state machine,
relative arm IK, output filters), exactly the route a person's hand tracker takes.

The operator's hand shape is the human pose whose joint-map image is the expert's robot hand target (least squares
over the canonical angles, warm-started), drawn as keypoints by the operator hand model; the wrist pose is the
expert's hand pose in the world (the relative arm follows its motion since the first frame).
"""

import numpy as np
from scipy.optimize import least_squares

from ..control.config import ControlConfig
from ..control.joint_mapping import joint_map_path, load_joint_map
from ..control.rig_controller import RigController
from ..geometry.rotations import matrix_to_quat
from ..inputs.keypoint_stream import encode_keypoints, parse_keypoints
from ..operator.hand_model import HUMAN_ANGLE_LIMITS_RAD, keypoints_from_angles
from ..operator.poses import RELAXED_HAND
from ..rig import Rig
from .expert import ScriptedExpert

CONTROL_CONFIG = "world_expert_keypoints"


class OperatorExpert:
    def __init__(self, rig: Rig, scripted: ScriptedExpert, control: str = CONTROL_CONFIG):
        self.rig, self.scripted = rig, scripted
        self.control = ControlConfig.load(control)
        hand = rig.parts["hand"]
        self.side = hand.spec.side
        self.joint_map = load_joint_map(joint_map_path(hand.spec.model, self.side), hand.joints, hand.lower,
                                        hand.upper)
        self.controller: RigController | None = None
        self._angles = RELAXED_HAND.copy()

    @property
    def phase(self) -> str:
        return self.scripted.phase

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

    def human_angles(self, robot_hand_q: np.ndarray) -> np.ndarray:
        """Canonical human angles whose joint-map image is robot_hand_q (closest, within human limits)."""
        low, high = HUMAN_ANGLE_LIMITS_RAD[:, 0], HUMAN_ANGLE_LIMITS_RAD[:, 1]
        start = np.clip(self._angles, low, high)
        fit = least_squares(lambda a: np.concatenate([self.joint_map(a) - robot_hand_q, 0.05 * (a - start)]),
                            start, bounds=(low, high), max_nfev=30)
        self._angles = fit.x
        return fit.x

    def frame(self, world, received_ns: int):
        """The operator's datagram for this tick, parsed as the keypoint receiver parses it."""
        pose, hand_q = self.scripted.hand_pose_targets(world)
        keypoints = keypoints_from_angles(self.human_angles(hand_q), self.side)
        wrist = np.concatenate([pose[:3, 3], matrix_to_quat(pose[:3, :3])])
        datagram = encode_keypoints(self.side, keypoints, wrist, received_ns)
        return parse_keypoints(datagram, received_ns)

    def act(self, world) -> dict[str, np.ndarray]:
        # The control chain runs on the world's clock: its filters see simulated time, whatever the machine's speed.
        world_ns = int(world.time_s * 1e9)
        return self.controller.step(self.frame(world, world_ns), world_ns,
                                    lambda: {role: world.joint_positions(role) for role in self.rig.parts})
