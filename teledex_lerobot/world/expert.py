"""A scripted expert for the world's tasks: approach (our IK) while pre-shaping the hand, descend, close, lift,
place or insert, release. It moves from its first tick: an episode that starts still teaches a policy to wait.
When the bottle meets the base's rim instead of going in, it backs off, measures the hold again and re-inserts
(JAM_M; at most MAX_RETRIES times), so that demonstrations show a policy how to get out of a jam.

It reads the world's privileged state (object poses, the hand's pose) and returns what an operator's teleoperator
returns: joint targets per rig part. Phases run on the world's simulated clock, so a slow machine changes nothing.
`hand_pose_targets` exposes the same plan as a wrist pose and hand joint angles, from which the keypoint route
(world/operator_expert.py) synthesises an operator's hand keypoints.

The grasps are the measured ones of world/grasps.py. The expert picks the heading the hand faces the object from:
the one closest to the direction from the arm's base to the object (for a square half-cube, among its four face
normals) whose grasp and pre-grasp poses our IK reaches with every joint at least MIN_JOINT_MARGIN_RAD inside its
limits. Placing is closed-loop: once lifted, the object's pose in the hand is measured and the hand is moved so that
the object, not the hand, reaches the goal.
"""

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.spatial.transform import Rotation, Slerp

from ..control.hand_grasps import hand_shape, mirrored_joints
from ..errors import ConfigError
from ..kinematics import solve_ik
from ..rig import Rig
from .grasps import Grasp, grasp_for, heading_frame
from .perturbation import HandoverSpread
from .tasks.bottle import BASE_FLOOR_M, BASE_HEIGHT_M, BOTTLE_HALF_HEIGHT_M, bottle_bottom
from .tasks.cube import HALF_HEIGHT_M
from .world import World, part_key

MIN_JOINT_MARGIN_RAD = 0.05
# Headings tried for a round object, as offsets from the grasp's preferred heading, nearest first.
ROUND_HEADING_OFFSETS_RAD = (0.0, 0.15, -0.15, 0.3, -0.3, 0.45, -0.45)
LIFT_M = 0.07  # the cube half's lift; the bottle rises until its bottom clears the base's rim
BOTTLE_CLEARANCE_M = 0.03  # over the base's rim while carried
PLACE_DROP_M = 0.001  # the cube half is let go this far above resting on the other half
INSERT_DEPTH_M = 0.004  # the bottle is let go this far above the base's floor
RELEASE_EASE_RAD = 0.08
# A jam: the held object stopped this far short (above) of where the hand is taking it while still over the rim.
JAM_M = 0.008
RIM_BAND_M = 0.002  # a bottom this little below the rim still rests on it
BACK_OFF_M = 0.025  # how far the hand rises out of a jam
REALIGN_HEIGHT_M = 0.012  # the bottle's bottom over the rim while it is re-centred
MAX_RETRIES = 3


def _pose(rotation: np.ndarray, position) -> np.ndarray:
    pose = np.eye(4)
    pose[:3, :3] = rotation
    pose[:3, 3] = position
    return pose


def _yaw_rotation(yaw: float) -> np.ndarray:
    return Rotation.from_euler("z", yaw).as_matrix()


def _nearest_turn(yaw: float, reference: float, turn: float) -> float:
    """The yaw equivalent to `yaw` modulo `turn` that is closest to `reference`."""
    return reference + (yaw - reference + turn / 2) % turn - turn / 2


@dataclass
class Segment:
    """Move the hand from its pose at the segment's start to `target` (a callable: world -> 4x4, re-evaluated every
    tick for closed-loop phases) and the fingers to `hand_q`, over duration_s. A hand_q of None releases: the hand's
    targets go to where the fingers are (squeezed against the object), eased RELEASE_EASE_RAD toward open for the
    joints that closed. Every force drops at once and the fingers barely move; opening the curl instead drags the
    object along, and the squeezed thumb springs back and pushes it. With `arm_q` the IK of every tick starts from
    the joint-space interpolation toward it, so the arm stays on the branch the plan checked for joint margins;
    with `joint_path` the hand follows that joint-space path itself (long moves through free space)."""

    name: str
    duration_s: float
    target: Callable[[World], np.ndarray] | None  # world -> 4x4 world pose of the hand base; None: stay
    hand_q: np.ndarray | None  # None: release from where the hand is measured at the segment's start
    arm_q: np.ndarray | None = None  # the arm's full configuration at the target, solved when planning
    joint_path: bool = False  # move along the arm's joint-space path to arm_q, not a straight line
    # Millimetres decide here (closing on the object, placing, letting go): recovery perturbations fade out.
    precise: bool = False
    # A precise segment's share of the way (0-1) moved before millimetres decide: until then a push off the path
    # still teaches a correction (a placing's descent, perturbed until its last centimetre).
    precise_after: float = 0.0
    # Start at rest (smoothstep); False starts at speed: the episode's first segment, so that a policy trained on it
    # never sees the robot waiting at home (from rest, the first ticks barely move it and a re-planning policy stalls).
    from_rest: bool = True
    # Watch for the held object jamming on the base's rim here, and recover (lift, re-measure, insert again).
    recovers: bool = False
    # Measure the held object's pose in the hand afresh as this segment starts (it may have shifted in a jam).
    remeasure: bool = False


def refuse_place_miss(task_name: str, place_miss_m: np.ndarray | None) -> None:
    """A placement miss where no expert recovers from a jam would only fail episodes: said, not ignored."""
    if place_miss_m is not None and np.any(place_miss_m) and task_name != "bottle_peg_in_hole":
        raise ConfigError("A placement miss needs a task whose expert recovers from a jam (bottle_peg_in_hole); the "
                          f"task is {task_name}: set teleop.perturbation.place_miss_m=0")


def refuse_handover_spread(task_name: str, handover: HandoverSpread | None) -> None:
    """A handover spread where no hand takes the object from another would do nothing: said, not ignored."""
    if handover:
        raise ConfigError("The take, carry and pass spreads need a task where one hand takes the object from the "
                          f"other (handover); the task is {task_name}: set teleop.perturbation.take_spread_m=0, "
                          "carry_spread_m=0 and pass_delay_spread_s=0")


class UnreachableGrasp(RuntimeError):
    """No heading gives a grasp our IK reaches inside the joint limits."""


class ScriptedExpert:
    """Solves the world's task for a rig with an arm and a hand. Call reset(world) at each episode start, then
    act(world) once per control tick. In a world of several rigs it drives rig `rig_name` (world.part_key), with
    the grasps of `grasp_task` (default: the task's own), along a plan its caller gives (begin, follow:
    world/bimanual_expert.py)."""

    def __init__(self, rig: Rig, task_name: str, rig_name: str = "", grasp_task: str = ""):
        if "arm" not in rig.parts or "hand" not in rig.parts:
            raise ConfigError(f"The scripted expert needs a rig with an arm and a hand (the rig is {rig.name}); choose "
                              "a preset with both, e.g. piper_linkerhand_o6_single")
        self.rig = rig
        self.task_name = task_name
        self.arm, self.hand = rig.parts["arm"], rig.parts["hand"]
        self.arm_key, self.hand_key = part_key(rig_name, "arm"), part_key(rig_name, "hand")
        if self.arm.mount_frame is None:
            raise ConfigError(f"The scripted expert needs the hand mounted on the arm, but the arm "
                              f"{self.arm.spec.model!r} has no known mount frame (a URDF arm has none); choose a "
                              "built-in arm, e.g. the preset piper_linkerhand_o6_single")
        self.mount_frame: str = self.arm.mount_frame
        self.grasp: Grasp = grasp_for(self.hand.spec.model, grasp_task or task_name)
        self.preshape = self._shape(self.grasp.preshape)
        self.closed = self._shape(self.grasp.closed)
        self._ik_starts = self.grasp.ik_starts(self.arm.spec.model, self.arm.model.joint_names, self.arm.home_full)
        self.segments: list[Segment] = []
        self.phase = ""
        self.retries = 0
        self._place_miss: np.ndarray = np.zeros(3)  # reset() sets it per episode

    def _shape(self, shape: dict[str, float]) -> np.ndarray:
        return hand_shape(self.hand.joints, shape, self.hand.lower, self.hand.upper,
                          mirrored_joints(self.hand.spec.model, self.hand.spec.side))

    # ---- planning -----------------------------------------------------------------------------------------------

    def reset(self, world, place_miss_m: np.ndarray | None = None, handover: HandoverSpread | None = None) -> None:
        """Plan the episode. place_miss_m: the first placement aims this far off its goal (world, m; a misjudged hold
        that a recording's perturbed episodes use to show the recovery), the retries aim right. handover: refused
        (one hand takes nothing from another here: HandoverExpert)."""
        refuse_place_miss(self.task_name, place_miss_m)
        self._place_miss = np.zeros(3) if place_miss_m is None else np.asarray(place_miss_m, dtype=float)
        refuse_handover_spread(self.task_name, handover)
        self.begin(world)
        self.follow(self._plan_cube(world) if self.task_name == "cube_assembly" else self._plan_bottle(world))

    def begin(self, world) -> None:
        """Start an episode from where the robot is, with no plan yet."""
        self.retries = 0
        self._last_pose: np.ndarray | None = None
        self.arm_base = world.body_pose(f"{self.arm_key}/{self.arm.model.description.root_link}")
        self._q_arm_full = self.arm.full_configuration(world.joint_positions(self.arm_key))
        self._segment_index = 0
        self._segment_start_s = world.time_s
        self._segment_start_pose = self.hand_pose(world)
        self._segment_start_q = world.joint_positions(self.hand_key)
        self._segment_goal_q = self._segment_start_q
        self.hand_progress = 0.0
        self._segment_start_arm = self._q_arm_full.copy()
        self._warm_start: np.ndarray | None = None
        self._object_in_hand: np.ndarray | None = None
        self._held_name = ""

    def follow(self, segments: list[Segment]) -> None:
        """Run this plan from the episode's start (begin)."""
        self.segments = segments
        # the first segment moves from the first tick: an episode that starts still teaches a policy to wait
        self._segment_goal_q = self.segments[0].hand_q
        self.phase = self.segments[0].name

    @property
    def precise_phase(self) -> bool:
        """Whether the current phase is one where millimetres decide (see Segment.precise and precise_after)."""
        segment = self.segments[self._segment_index]
        return segment.precise and self.hand_progress >= segment.precise_after

    @property
    def precise_parts(self) -> frozenset[str]:
        """The parts (world part keys) the recovery perturbation must leave alone now: this rig's in a precise
        phase."""
        return frozenset((self.arm_key, self.hand_key)) if self.precise_phase else frozenset()

    @property
    def plan_duration_s(self) -> float:
        """Seconds from reset to the end of the last movement."""
        return sum(segment.duration_s for segment in self.segments[:-1])

    def hand_pose(self, world) -> np.ndarray:
        return world.body_pose(f"{self.hand_key}/{self.hand.model.description.root_link}")

    def solve_hand_ik(self, hand_pose_world: np.ndarray, q_init: np.ndarray):
        """Our IK for the arm's mount frame under a hand pose (world), from q_init; arm_base is the arm's root pose
        in the world (set by reset)."""
        mount_world = hand_pose_world @ np.linalg.inv(self.rig.hand_mount)
        mount_in_base = np.linalg.inv(self.arm_base) @ mount_world
        return solve_ik(self.arm.model, self.mount_frame, mount_in_base, q_init, max_iters=200,
                        orientation_weight=0.3)

    def solve_within_margin(self, hand_pose_world: np.ndarray, starts: tuple[np.ndarray, ...]) -> np.ndarray | None:
        """Full arm configuration that puts the hand there with every driven joint at least MIN_JOINT_MARGIN_RAD
        inside its limits (our IK from each start in turn), or None."""
        for start in starts:
            result = self.solve_hand_ik(hand_pose_world, start)
            q = result.q[self.arm.indices]
            if result.converged and np.all(q - self.arm.lower >= MIN_JOINT_MARGIN_RAD) and np.all(
                    self.arm.upper - q >= MIN_JOINT_MARGIN_RAD):
                return result.q
        return None

    def _hand_pose_at(self, q_arm_full: np.ndarray) -> np.ndarray:
        return self.arm_base @ self.arm.model.frame_pose(q_arm_full, self.mount_frame) @ self.rig.hand_mount

    def _headings(self, position_m: np.ndarray, object_yaw: float) -> list[float]:
        base = self.arm_base[:3, 3]
        preferred = float(np.arctan2(position_m[1] - base[1], position_m[0] - base[0])) + \
            self.grasp.preferred_heading_rad
        if self.grasp.symmetry:
            turn = 2 * np.pi / self.grasp.symmetry
            faces = [_nearest_turn(object_yaw + k * turn, preferred, 2 * np.pi) for k in range(self.grasp.symmetry)]
            return sorted(faces, key=lambda heading: abs(heading - preferred))
        return [preferred + offset for offset in ROUND_HEADING_OFFSETS_RAD]

    def _grasp_frame(self, position_m: np.ndarray, object_yaw: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The heading frame of the first heading whose pre-grasp and grasp poses are reachable, and the arm's
        configurations there."""
        for heading in self._headings(position_m, object_yaw):
            frame = heading_frame(position_m, heading)
            grasp = frame @ self.grasp.hand_in_heading()
            q_pre = self.solve_within_margin(self._pre_grasp(frame, grasp),
                                             (self._q_arm_full, self.arm.home_full, *self._ik_starts))
            if q_pre is None:
                continue
            # the descent stays on the pre-grasp's IK branch (another branch would swing the wrist through the object)
            q_grasp = self.solve_within_margin(grasp, (q_pre,))
            if q_grasp is not None:
                return frame, q_pre, q_grasp
        raise UnreachableGrasp(f"No heading reaches the {self.task_name} object at {np.round(position_m, 3)} "
                               "within the arm's joint limits")

    def _pre_grasp(self, frame: np.ndarray, grasp: np.ndarray) -> np.ndarray:
        pre = grasp.copy()
        pre[:3, 3] += frame[:3, :3] @ np.asarray(self.grasp.approach_m)
        return pre

    def _plan_cube(self, world) -> list[Segment]:
        top, bottom = world.object_pose("cube_top"), world.object_pose("cube_bottom")
        frame, q_pre, q_grasp = self._grasp_frame(top.position_m, top.yaw_rad)
        grasp = frame @ self.grasp.hand_in_heading()
        pre_grasp = self._hand_pose_at(q_pre)
        lifted = grasp.copy()
        lifted[2, 3] += LIFT_M
        resting = bottom.position_m + [0.0, 0.0, 2 * HALF_HEIGHT_M + PLACE_DROP_M]
        over_goal = self._over_goal(resting, bottom.yaw_rad, np.pi / 2, "cube_top")
        return [
            Segment("approach", 2.0, lambda w: pre_grasp, self.preshape, q_pre, joint_path=True, from_rest=False),
            Segment("descend", 1.2, lambda w: grasp, self.preshape, q_grasp),
            Segment("close", 1.0, None, self.closed, precise=True),
            Segment("lift", 1.2, lambda w: lifted, self.closed),
            Segment("carry", 2.0, over_goal(0.03), self.closed),
            Segment("place", 1.2, over_goal(0.0), self.closed, precise=True),
            *self._release(),
            Segment("open", 0.6, None, self.preshape, precise=True),
            Segment("done", 1e9, None, self.preshape, precise=True),
        ]

    def _plan_bottle(self, world) -> list[Segment]:
        bottle = world.object_pose("bottle")
        base = world.body_position("base")
        frame, q_pre, q_grasp = self._grasp_frame(bottle.position_m, bottle.yaw_rad)
        grasp = frame @ self.grasp.hand_in_heading()
        pre_grasp = self._hand_pose_at(q_pre)
        lift = BASE_HEIGHT_M + BOTTLE_CLEARANCE_M
        lifted = grasp.copy()
        lifted[2, 3] += lift
        resting = base + [0.0, 0.0, BASE_FLOOR_M + BOTTLE_HALF_HEIGHT_M + INSERT_DEPTH_M]
        over_goal = self._over_opening = self._over_goal(resting, 0.0, 0.0, "bottle")
        return [
            Segment("approach", 2.0, lambda w: pre_grasp, self.preshape, q_pre, joint_path=True, from_rest=False),
            Segment("descend", 1.4, lambda w: grasp, self.preshape, q_grasp),
            Segment("close", 1.0, None, self.closed, precise=True),
            Segment("lift", 1.2, lambda w: lifted, self.closed),
            Segment("carry", 2.4, over_goal(lift), self.closed),
            *self._insert(over_goal),
        ]

    def _insert(self, over_goal) -> list[Segment]:
        """Lower the bottle into the base, let go, retreat (watching for a jam on the rim while it goes down)."""
        return [Segment("insert", 1.6, over_goal(0.0), self.closed, precise=True, recovers=True),
                *self._release(),
                Segment("open", 0.6, None, self.preshape, precise=True),
                Segment("done", 1e9, None, self.preshape, precise=True)]

    def _recover(self, world, now_s: float, jammed: np.ndarray) -> None:
        """The bottle sits on the rim, the hand's target at `jammed`: from there, back off up, re-centre over the
        opening on a fresh measurement of the hold, and insert again."""
        self.retries += 1
        self._place_miss = np.zeros(3)
        backed_off = jammed.copy()
        backed_off[2, 3] += BACK_OFF_M
        over_goal = self._over_opening
        realign_height = BASE_HEIGHT_M - BASE_FLOOR_M - INSERT_DEPTH_M + REALIGN_HEIGHT_M
        index = self._segment_index
        self.segments[index].duration_s = now_s - self._segment_start_s  # cut where the jam was seen
        self.segments[index + 1:] = [Segment("back_off", 0.6, lambda w: backed_off, self.closed, precise=True),
                                     Segment("realign", 1.0, over_goal(realign_height), self.closed, precise=True,
                                             remeasure=True),
                                     *self._insert(over_goal)]
        self._enter(index + 1, now_s, jammed, world)

    def _jammed(self, world, hand_pose: np.ndarray) -> bool:
        """The held bottle stopped JAM_M short of where the hand takes it, its bottom still at the rim or above."""
        error = self.held_object_error(world, hand_pose)
        return error is not None and error[2] < -JAM_M and bottle_bottom(world)[2] > BASE_HEIGHT_M - RIM_BAND_M

    def _over_goal(self, resting_m: np.ndarray, goal_yaw: float, turn: float, name: str, hand_turn_rad: float = 0.0):
        """Targets that bring the held object (as measured in the hand after the lift) upright at resting_m raised
        by height_m, turned to the goal yaw (modulo `turn`, 0: keep the yaw it is held at) nearest its own turned
        by hand_turn_rad (the hand's turn the plan wants on the way)."""
        def at_height(height_m):
            def target(world):
                object_in_hand, held_yaw = self._measured_hold(world, name)
                yaw = _nearest_turn(goal_yaw, held_yaw + hand_turn_rad, turn) if turn else held_yaw
                goal = _pose(_yaw_rotation(yaw), resting_m + self._place_miss + [0.0, 0.0, height_m])
                return goal @ np.linalg.inv(object_in_hand)
            return target
        return at_height

    def _measured_hold(self, world, name: str) -> tuple[np.ndarray, float]:
        """The object's pose in the hand and its yaw in the world, measured once, when the carry starts (and again
        where a segment says so)."""
        if self._object_in_hand is None:
            pose = world.body_pose(name)
            self._object_in_hand = np.linalg.inv(self.hand_pose(world)) @ pose
            self._held_yaw = float(np.arctan2(pose[1, 0], pose[0, 0]))
            self._held_name = name
        return self._object_in_hand, self._held_yaw

    def held_object_error(self, world, hand_pose: np.ndarray) -> np.ndarray | None:
        """Once the carry has started: where `hand_pose` puts the held object (as it was held when the carry
        started) minus where the object is; None before (what a person placing it watches)."""
        if self._object_in_hand is None:
            return None
        return (hand_pose @ self._object_in_hand)[:3, 3] - world.body_pose(self._held_name)[:3, 3]

    def _release(self) -> list[Segment]:
        if self.grasp.release_by_easing:
            return [Segment("release", 0.4, None, None, precise=True),
                    Segment("retreat", 1.2, self._retreat, None, precise=True)]
        return [Segment("release", 0.6, None, self.preshape, precise=True),
                Segment("retreat", 1.2, self._retreat, self.preshape, precise=True)]

    def _retreat(self, world) -> np.ndarray:
        pose = self._segment_start_pose.copy()
        pose[2, 3] += 0.08
        return pose

    # ---- acting -------------------------------------------------------------------------------------------------

    def hand_pose_targets(self, world) -> tuple[np.ndarray, np.ndarray]:
        """(hand base pose in world (4x4), hand joint targets) for this tick."""
        now = world.time_s
        segment = self.segments[self._segment_index]
        if segment.recovers and self._last_pose is not None and self.retries < MAX_RETRIES and \
                self._jammed(world, self._last_pose):
            self._recover(world, now, self._last_pose)
        segment = self.segments[self._segment_index]
        while now - self._segment_start_s >= segment.duration_s and self._segment_index < len(self.segments) - 1:
            # the next segment starts from where this one aimed (not from where the hand lagged to)
            self._enter(self._segment_index + 1, self._segment_start_s + segment.duration_s,
                        self._segment_goal(world, segment), world)
            segment = self.segments[self._segment_index]
        self.phase = segment.name
        progress = np.clip((now - self._segment_start_s) / segment.duration_s, 0.0, 1.0)
        if segment.from_rest:
            smooth = progress * progress * (3 - 2 * progress)  # zero velocity at both ends
        else:  # at speed from the first tick, at rest at the end
            smooth = 1 - (1 - progress) ** 2
        self.hand_progress = smooth
        hand_q = self._segment_start_q + smooth * (self._segment_goal_q - self._segment_start_q)
        self._warm_start = None
        if segment.arm_q is not None:
            warm_start = self._segment_start_arm + smooth * (segment.arm_q - self._segment_start_arm)
            self._warm_start = warm_start
            if segment.joint_path:
                return self._hand_pose_at(warm_start), hand_q
        goal = self._segment_goal(world, segment)
        start = self._segment_start_pose
        rotations = Rotation.from_matrix(np.stack([start[:3, :3], goal[:3, :3]]))
        pose = _pose(Slerp([0, 1], rotations)(smooth).as_matrix(),
                     start[:3, 3] + smooth * (goal[:3, 3] - start[:3, 3]))
        self._last_pose = pose
        return pose, hand_q

    def _enter(self, index: int, start_s: float, start_pose: np.ndarray, world) -> None:
        """Start segment `index` at start_s, the hand from start_pose and the fingers from the last segment's goal."""
        self._segment_start_pose = start_pose
        self._segment_start_q = self._segment_goal_q
        self._segment_start_s = start_s
        self._segment_index = index
        segment = self.segments[index]
        self._segment_start_arm = self._q_arm_full.copy()
        if segment.remeasure:
            self._object_in_hand = None
        if segment.hand_q is None:
            self._segment_start_q = world.joint_positions(self.hand_key)
            self._segment_goal_q = self._segment_start_q + RELEASE_EASE_RAD * np.sign(self.preshape - self.closed)
        else:
            self._segment_goal_q = segment.hand_q

    @property
    def hand_segment(self) -> tuple[np.ndarray, np.ndarray]:
        """The hand shapes this tick's hand target moves between (hand_progress of the way)."""
        return self._segment_start_q, self._segment_goal_q

    def _segment_goal(self, world, segment: Segment) -> np.ndarray:
        return self._segment_start_pose if segment.target is None else segment.target(world)

    def arm_target(self, hand_pose_world: np.ndarray) -> np.ndarray:
        """Arm joints that put the hand base at the pose (our damped least-squares IK, warm-started)."""
        start = self._q_arm_full if self._warm_start is None else self._warm_start
        result = self.solve_hand_ik(hand_pose_world, start)
        self._q_arm_full = result.q
        return result.q[self.arm.indices]

    def act(self, world) -> dict[str, np.ndarray]:
        pose, hand_q = self.hand_pose_targets(world)
        return {"arm": self.arm_target(pose), "hand": hand_q}
