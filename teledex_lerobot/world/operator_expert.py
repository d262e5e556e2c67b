"""The scripted expert as a person: a human hand model grasping the object as a person would, sent as keypoint-stream
datagrams through the parser, TeleDex hand retargeting and the rig's control chain (state machine, relative arm IK,
output filters), exactly the route a person's hand tracker takes.

The hand shape is a person's grasp on the hand model (operator/object_grasps.py), never derived from the robot's
joints: the pinch for an object the robot pinches, the wrap for one it wraps (the measured grasp's `human` kind),
at the phase of the expert's plan: open at the start (as a person engages teleoperation: a relaxed, curled hand
retargets to curled robot fingers, which knocked the bottle over in the robot's first ticks), the grasp open on the
way to the object (shaped in the first half of the reach, as people preshape), closing as the expert closes, closed
while carrying, opened to let go. Each episode's person differs (drawn from the layout seed): hand size, how far
they open and close, a habitual offset of every joint, and a tracker's jitter on every keypoint. The hand and its
grasps' shapes are the `person`'s (operator/persons.py; the hand model's average adult by default). Whether the robot
then holds the object is the retargeter's business (its grasp anchors).

The wrist pose is the pose of the arm's mount frame under the expert's hand (the relative arm moves the mount
frame as the operator's wrist moves since the first frame), plus the person's correction by sight: they see where
the robot's hand is (once it carries the object, where the object is) and move theirs by a share of its error each
tick. The chain's lag, the IK's give near a singularity and the object settling in the hand leave it millimetres to
centimetres off the plan (a bottle 4 cm off its hole, held as its grasp started); a person watching closes that loop.
"""

import numpy as np

from ..control.config import ControlConfig
from ..control.hand_grasps import GRASP_SHAPES
from ..control.rig_controller import RigController
from ..geometry.rotations import matrix_to_quat
from ..inputs.keypoint_stream import encode_keypoints, parse_keypoints
from ..operator.hand_model import clip_to_human_limits, keypoints_from_angles
from ..operator.persons import AVERAGE_ADULT, Person
from ..operator.poses import OPEN_HAND
from ..rig import Rig
from .expert import ScriptedExpert
from .perturbation import HandoverSpread

CONTROL_CONFIG = "world_expert_keypoints"
# The person's grasp closure (0 open .. 1 closed, operator/object_grasps.py) that each phase of the plan moves to.
PHASE_CLOSURE = {"approach": 0.0, "descend": 0.0, "close": 1.0, "lift": 1.0, "carry": 1.0, "place": 1.0,
                 "insert": 1.0, "back_off": 1.0, "realign": 1.0, "release": 0.0, "retreat": 0.0, "open": 0.0,
                 "done": 0.0}
# How people differ, per episode: hand size, where they open and close along the grasp, their habitual posture.
HAND_SCALE_SPREAD = 0.08
OPEN_CLOSURE_SPREAD = 0.1
CLOSED_CLOSURE_RANGE = (0.9, 1.1)
POSTURE_STD_RAD = 0.05
TRACKER_JITTER_M = 0.001
PRESHAPE_SHARE = 0.5  # of the reach in which the hand takes the grasp's shape, before it nears the object
CORRECTION_GAIN = 0.08  # of the hand's position error per tick (2 /s at 25 Hz, within a person's visuomotor band)
MAX_CORRECTION_M = 0.03
PERSON_STREAM = 22  # the person's random stream, seeded with the layout's seed (apart from the layout's own draws)


class OperatorExpert:
    def __init__(self, rig: Rig, scripted: ScriptedExpert, control: str | ControlConfig = CONTROL_CONFIG,
                 person: Person = AVERAGE_ADULT):
        """`control`: the control config (a name, or a ControlConfig: e.g. with the person's hand calibration)."""
        self.rig, self.scripted, self.person = rig, scripted, person
        self.control = ControlConfig.load(control)
        hand = rig.parts["hand"]
        self.side = hand.spec.side
        self.grasp = person.grasps()[GRASP_SHAPES[hand.spec.model][scripted.grasp.name].human]
        self.controller: RigController | None = None

    @property
    def phase(self) -> str:
        return self.scripted.phase

    @property
    def precise_parts(self) -> frozenset[str]:
        return self.scripted.precise_parts

    @property
    def plan_duration_s(self) -> float:
        return self.scripted.plan_duration_s

    def reset(self, world, place_miss_m: np.ndarray | None = None, handover: HandoverSpread | None = None) -> None:
        self.scripted.reset(world, place_miss_m, handover)
        self.controller = RigController(self.rig, self.control)
        self.controller.seed({role: world.joint_positions(role) for role in self.rig.parts})
        self.controller.home = self.controller.last_sent  # start where the robot is, not at the preset's home
        self.controller.state_machine.press("L1")
        self.controller.state_machine.press("L2")
        self._person(np.random.default_rng([world.episode_seed, PERSON_STREAM]))
        self._phase, self._from = "", self._posture(OPEN_HAND)
        self._correction: np.ndarray = np.zeros(3)
        self._to = self._from

    def _person(self, rng: np.random.Generator) -> None:
        """This episode's person."""
        self.scale = 1.0 + rng.uniform(-HAND_SCALE_SPREAD, HAND_SCALE_SPREAD)
        self.open_closure = rng.uniform(-OPEN_CLOSURE_SPREAD, OPEN_CLOSURE_SPREAD)
        self.closed_closure = rng.uniform(*CLOSED_CLOSURE_RANGE)
        self.posture_offset = rng.normal(0.0, POSTURE_STD_RAD, OPEN_HAND.shape)
        self.rng = rng

    def _posture(self, angles: np.ndarray) -> np.ndarray:
        return clip_to_human_limits(angles + self.posture_offset)

    def operator_angles(self) -> np.ndarray:
        """This tick's hand pose: from the last phase's shape toward this phase's, as the expert's hand moves."""
        phase = self.scripted.phase
        if phase != self._phase:
            self._phase, self._from = phase, self._to
            closure = self.closed_closure if PHASE_CLOSURE[phase] else self.open_closure
            self._to = self._posture(self.grasp.at(closure))
        progress = self.scripted.hand_progress
        if phase == "approach":
            progress = min(1.0, progress / PRESHAPE_SHARE)
        return self._from + progress * (self._to - self._from)

    def frame(self, world, received_ns: int):
        """The operator's datagram for this tick, parsed as the keypoint receiver parses it."""
        pose, _ = self.scripted.hand_pose_targets(world)
        error = self.scripted.held_object_error(world, pose)
        if error is None:
            error = pose[:3, 3] - self.scripted.hand_pose(world)[:3, 3]
        self._correction = np.clip(self._correction + CORRECTION_GAIN * error, -MAX_CORRECTION_M, MAX_CORRECTION_M)
        pose = pose.copy()
        pose[:3, 3] += self._correction
        keypoints = keypoints_from_angles(self.operator_angles(), self.side, self.scale, self.person.geometry)
        keypoints = keypoints + self.rng.normal(0.0, TRACKER_JITTER_M, keypoints.shape)
        # The relative arm moves the arm's mount frame as the operator's wrist moves; streaming the mount frame's
        # motion (not the hand's, which sits hand_mount away from it and swings around it) lands the hand exactly.
        mount = pose @ np.linalg.inv(self.rig.hand_mount)
        wrist = np.concatenate([mount[:3, 3], matrix_to_quat(mount[:3, :3])])
        datagram = encode_keypoints(self.side, keypoints, wrist, received_ns)
        return parse_keypoints(datagram, received_ns)

    def act(self, world) -> dict[str, np.ndarray]:
        # The control chain runs on the world's clock: its filters see simulated time, whatever the machine's speed.
        world_ns = int(world.time_s * 1e9)
        if self.controller is None:
            raise RuntimeError("OperatorExpert.act() before reset(world): reset it at each episode's start")
        return self.controller.step(self.frame(world, world_ns), world_ns,
                                    lambda: {role: world.joint_positions(role) for role in self.rig.parts})
