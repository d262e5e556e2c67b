"""A scripted expert for the world's tasks: pre-shape, approach (our IK), close, lift, place or insert, release.

It reads the world's privileged state (object poses, the hand's pose) and returns what an operator's teleoperator
returns: joint targets per rig part. Phases run on the world's simulated clock, so a slow machine changes nothing.
`hand_pose_targets` exposes the same plan as a wrist pose and hand joint angles, from which the keypoint route
(world/operator_expert.py) synthesises an operator's hand keypoints.

Grasps (for a hand whose URDF follows our hand convention: +z wrist -> fingers, +y out of the palm):
- cube half: palm down above the half, fingers pointing away from the robot; the opposed thumb rests against the
  near face and the fingers curl down onto the far edge, pushing the half against the thumb;
- bottle: palm facing the bottle from the robot's side, fingers horizontal around it, thumb opposed (a power grasp
  from the side, as in the report).
Placing is closed-loop: once lifted, the object's pose in the hand is measured and the hand is moved so that the
object, not the hand, reaches the goal.
"""

from dataclasses import dataclass

import numpy as np
from scipy.spatial.transform import Rotation, Slerp

from ..kinematics import solve_ik
from ..rig import Rig
from .tasks.bottle import BASE_FLOOR_M, BOTTLE_HALF_HEIGHT_M
from .tasks.cube import HALF_HEIGHT_M



@dataclass(frozen=True)
class Grasp:
    """Where the object's centre sits in the hand frame when grasped, and the hand shape before/after closing."""

    object_in_hand_m: tuple[float, float, float]
    preshape: dict[str, float]
    closed: dict[str, float]


# Fingers pitched this much below horizontal: the Piper's wrist cannot point the hand level near the table.
GRASP_PITCH_RAD = np.radians(50)
# A pinch along the fingers: the opposed thumb's tip on the near face, the fingertips curling onto the far face.
# Cube: straight fingertips just beyond the far face near the table, the thumb behind the near face; closing
# rakes the half against the thumb.
CUBE_GRASP = Grasp(
    object_in_hand_m=(-0.015, 0.037, 0.155),
    preshape={"thumb_cmc_yaw": 1.36, "thumb_cmc_pitch": 0.0, "mcp_pitch": 0.0},
    closed={"thumb_cmc_yaw": 1.36, "thumb_cmc_pitch": 0.05, "mcp_pitch": 0.6},
)
# Bottle (palm sideways): the thumb tip on the bottle's axis, the pinch along the fingers.
BOTTLE_GRASP = Grasp(
    object_in_hand_m=(-0.015, 0.069, 0.158),
    preshape=CUBE_GRASP.preshape,
    closed=CUBE_GRASP.closed,
)


def hand_shape(joints: list[str], shape: dict[str, float], lower, upper) -> np.ndarray:
    """Joint targets for a named shape: an exact joint name wins, else the joint's name ending (e.g. mcp_pitch)."""
    q = np.zeros(len(joints))
    for index, joint in enumerate(joints):
        if joint in shape:
            q[index] = shape[joint]
        else:
            for suffix, value in shape.items():
                if joint.endswith(suffix):
                    q[index] = value
    return np.clip(q, lower, upper)


def _pose(rotation: np.ndarray, position) -> np.ndarray:
    pose = np.eye(4)
    pose[:3, :3] = rotation
    pose[:3, 3] = position
    return pose


def _yaw_rotation(yaw: float) -> np.ndarray:
    return Rotation.from_euler("z", yaw).as_matrix()


def _nearest_quarter_turn(yaw: float, reference: float) -> float:
    """The yaw equivalent to `yaw` modulo 90 deg closest to `reference` (a square face can be grasped four ways)."""
    return reference + (yaw - reference + np.pi / 4) % (np.pi / 2) - np.pi / 4


@dataclass
class Segment:
    """Move the hand from its pose at the segment's start to `target` (a callable: world -> 4x4, re-evaluated every
    tick for closed-loop phases) and the fingers to `hand_q`, over duration_s."""

    name: str
    duration_s: float
    target: object  # callable(world) -> 4x4 world pose of the hand base, or None to stay
    hand_q: np.ndarray


class ScriptedExpert:
    """Solves the world's task for a rig with an arm and a hand. Call reset(world) at each episode start, then
    act(world) once per control tick."""

    def __init__(self, rig: Rig, task_name: str):
        if "arm" not in rig.parts or "hand" not in rig.parts:
            raise ValueError("The scripted expert needs a rig with an arm and a hand.")
        self.rig = rig
        self.task_name = task_name
        self.arm, self.hand = rig.parts["arm"], rig.parts["hand"]
        self.grasp = CUBE_GRASP if task_name == "cube_assembly" else BOTTLE_GRASP
        self.preshape = self._shape(self.grasp.preshape)
        self.closed = self._shape(self.grasp.closed)
        self.segments: list[Segment] = []
        self.phase = ""

    def _shape(self, shape: dict[str, float]) -> np.ndarray:
        return hand_shape(self.hand.joints, shape, self.hand.lower, self.hand.upper)

    # ---- planning -----------------------------------------------------------------------------------------------

    def reset(self, world) -> None:
        self._start_s = world.time_s
        self._arm_base = world.body_pose(f"arm/{self.arm.model.description.root_link}")
        self._q_arm_full = self.arm.full_configuration(world.joint_positions("arm"))
        self._segment_index = 0
        self._segment_start_s = world.time_s
        self._segment_start_pose = self.hand_pose(world)
        self._segment_start_q = world.joint_positions("hand")
        self._object_in_hand: np.ndarray | None = None
        self.segments = self._plan_cube(world) if self.task_name == "cube_assembly" else self._plan_bottle(world)
        self.phase = self.segments[0].name

    @property
    def plan_duration_s(self) -> float:
        """Seconds from reset to the end of the last movement."""
        return sum(segment.duration_s for segment in self.segments[:-1])

    def hand_pose(self, world) -> np.ndarray:
        return world.body_pose(f"hand/{self.hand.model.description.root_link}")

    def _grasp_pose(self, object_pose: np.ndarray, hand_rotation: np.ndarray) -> np.ndarray:
        """Hand pose that puts the object's centre at the grasp point, hand axes as given (world)."""
        position = object_pose[:3, 3] - hand_rotation @ np.asarray(self.grasp.object_in_hand_m)
        return _pose(hand_rotation, position)

    def _measured_object_in_hand(self, world, name: str) -> np.ndarray:
        if self._object_in_hand is None:
            self._object_in_hand = np.linalg.inv(self.hand_pose(world)) @ world.body_pose(name)
        return self._object_in_hand

    def _grasp_rotation(self, direction_yaw: float, palm_down: bool) -> np.ndarray:
        """Hand axes in the world: fingers (z) along the yaw, pitched GRASP_PITCH_RAD down; the palm normal (y)
        down (palm_down) or sideways (to the left of the fingers)."""
        forward = _yaw_rotation(direction_yaw) @ np.array([1.0, 0.0, 0.0])
        left = _yaw_rotation(direction_yaw) @ np.array([0.0, 1.0, 0.0])
        down = np.array([0.0, 0.0, -1.0])
        fingers = np.cos(GRASP_PITCH_RAD) * forward + np.sin(GRASP_PITCH_RAD) * down
        palm = np.cos(GRASP_PITCH_RAD) * down - np.sin(GRASP_PITCH_RAD) * forward if palm_down else left
        return np.stack([np.cross(palm, fingers), palm, fingers], axis=1)

    def _plan_cube(self, world) -> list[Segment]:
        top, bottom = world.object_pose("cube_top"), world.object_pose("cube_bottom")
        away = np.arctan2(top.position_m[1], top.position_m[0])  # fingers point away from the robot
        yaw = _nearest_quarter_turn(top.yaw_rad, away)
        grasp = self._grasp_pose(_pose(_yaw_rotation(yaw), top.position_m), self._grasp_rotation(yaw, True))
        above = grasp.copy()
        above[2, 3] += 0.07
        lifted = grasp.copy()
        lifted[2, 3] += 0.09
        place_yaw = _nearest_quarter_turn(bottom.yaw_rad, yaw)
        goal = _pose(_yaw_rotation(place_yaw), bottom.position_m + [0, 0, 2 * HALF_HEIGHT_M + 0.003])
        over_goal = self._over_goal(goal, "cube_top")
        return [
            Segment("preshape", 0.6, None, self.preshape),
            Segment("approach", 2.0, lambda w: above, self.preshape),
            Segment("descend", 1.2, lambda w: grasp, self.preshape),
            Segment("close", 1.0, None, self.closed),
            Segment("lift", 1.2, lambda w: lifted, self.closed),
            Segment("carry", 2.0, over_goal(0.03), self.closed),
            Segment("place", 1.2, over_goal(0.0), self.closed),
            Segment("release", 0.8, None, self.preshape),
            Segment("retreat", 1.2, self._retreat, self.preshape),
            Segment("done", 1e9, None, self.preshape),
        ]

    def _plan_bottle(self, world) -> list[Segment]:
        bottle = world.object_pose("bottle")
        base = world.body_position("base")
        away = np.arctan2(bottle.position_m[1], bottle.position_m[0])
        rotation = self._grasp_rotation(away, False)
        grasp = self._grasp_pose(_pose(np.eye(3), bottle.position_m + [0, 0, 0.01]), rotation)
        above = grasp.copy()
        above[2, 3] += 0.07
        lifted = grasp.copy()
        lifted[2, 3] += 0.1
        goal = _pose(np.eye(3), base + [0, 0, BOTTLE_HALF_HEIGHT_M + BASE_FLOOR_M + 0.004])
        over_goal = self._over_goal(goal, "bottle")
        return [
            Segment("preshape", 0.6, None, self.preshape),
            Segment("approach", 2.0, lambda w: above, self.preshape),
            Segment("descend", 1.2, lambda w: grasp, self.preshape),
            Segment("close", 1.2, None, self.closed),
            Segment("lift", 1.2, lambda w: lifted, self.closed),
            Segment("carry", 2.4, over_goal(0.06), self.closed),
            Segment("insert", 1.6, over_goal(0.0), self.closed),
            Segment("release", 0.8, None, self.preshape),
            Segment("retreat", 1.2, self._retreat, self.preshape),
            Segment("done", 1e9, None, self.preshape),
        ]

    def _over_goal(self, goal: np.ndarray, name: str):
        """Targets that bring the held object (as measured in the hand after the lift) to `goal` raised by h."""
        def at_height(height_m):
            def target(world):
                pose = goal.copy()
                pose[2, 3] += height_m
                return pose @ np.linalg.inv(self._measured_object_in_hand(world, name))
            return target
        return at_height

    def _retreat(self, world) -> np.ndarray:
        pose = self.hand_pose(world)
        pose[2, 3] += 0.08
        return pose

    # ---- acting -------------------------------------------------------------------------------------------------

    def hand_pose_targets(self, world) -> tuple[np.ndarray, np.ndarray]:
        """(hand base pose in world (4x4), hand joint targets) for this tick."""
        now = world.time_s
        segment = self.segments[self._segment_index]
        while now - self._segment_start_s >= segment.duration_s and self._segment_index < len(self.segments) - 1:
            # the next segment starts from where this one aimed (not from where the hand lagged to)
            self._segment_start_pose = self._segment_goal(world, segment)
            self._segment_start_q = segment.hand_q
            self._segment_start_s += segment.duration_s
            self._segment_index += 1
            segment = self.segments[self._segment_index]
        self.phase = segment.name
        progress = np.clip((now - self._segment_start_s) / segment.duration_s, 0.0, 1.0)
        smooth = progress * progress * (3 - 2 * progress)  # zero velocity at both ends
        goal = self._segment_goal(world, segment)
        start = self._segment_start_pose
        rotations = Rotation.from_matrix(np.stack([start[:3, :3], goal[:3, :3]]))
        pose = _pose(Slerp([0, 1], rotations)(smooth).as_matrix(),
                     start[:3, 3] + smooth * (goal[:3, 3] - start[:3, 3]))
        hand_q = self._segment_start_q + smooth * (segment.hand_q - self._segment_start_q)
        return pose, hand_q

    def _segment_goal(self, world, segment: Segment) -> np.ndarray:
        return self._segment_start_pose if segment.target is None else segment.target(world)

    def arm_target(self, hand_pose_world: np.ndarray) -> np.ndarray:
        """Arm joints that put the hand base at the pose (our damped least-squares IK, warm-started)."""
        mount_world = hand_pose_world @ np.linalg.inv(self.rig.hand_mount)
        mount_in_base = np.linalg.inv(self._arm_base) @ mount_world
        result = solve_ik(self.arm.model, self.arm.mount_frame, mount_in_base, self._q_arm_full, max_iters=60,
                          orientation_weight=0.3)
        self._q_arm_full = result.q
        return result.q[self.arm.indices]

    def act(self, world) -> dict[str, np.ndarray]:
        pose, hand_q = self.hand_pose_targets(world)
        return {"arm": self.arm_target(pose), "hand": hand_q}
