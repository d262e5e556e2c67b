"""Scripted experts for two rigs, `left` and `right`: one ScriptedExpert per rig, each following its own plan on the
world's clock, so the two meet at the planned instants.

Handover: the left hand picks the half cube up with its level pinch and carries it to the handover point between
the arms, the hand turned so that the cube's other pair of faces looks at the right arm; the right hand pinches
those faces (its grasp computed every tick from where the cube is: the left hand holds it still), the left lets go
and rises, and the right places the half on the other one, closed-loop on the hold it measures once it carries (as
the one-rig expert places). The hands' geoms do not collide with each other (world/mjcf.py), so their palms may
overlap above the cube while both hold it.

Bimanual lift (world/tasks/bimanual_lift.py): each hand comes to its end of the box, palm toward it and fingers
pointing away from the arms and down (FINGER_TILTS_RAD), open; both press in (their targets PRESS_M inside the end
faces: the arms' position servos squeeze), lift together, carry the box to over the target square turning it to the
target's yaw (both hand targets move as one rigid body with the box), set it down, and both let go outward and rise.

They read the world's privileged state, as the one-rig expert does, and return joint targets per part key
("left/arm", ...).
"""

from collections.abc import Callable

import numpy as np

from ..errors import ConfigError
from ..retargeting.hand_layout import reference_pose
from ..rig import Rig
from ..robot_body import hand_palm
from .expert import (
    LIFT_M,
    PLACE_DROP_M,
    ScriptedExpert,
    Segment,
    UnreachableGrasp,
    _nearest_turn,
    _pose,
    _yaw_rotation,
    refuse_handover_spread,
    refuse_place_miss,
)
from .grasps import heading_frame
from .perturbation import HandoverSpread
from .tasks.bimanual_lift import BOX_HALF_M
from .tasks.cube import HALF_HEIGHT_M
from .world import World

HANDOVER_POINT_M = (0.25, 0.0, 0.18)  # where the left hand brings the cube half (world): both arms reach it
# The left hand's heading at the handover, tried in turn: offsets from the direction from its base to the point
# (turned toward the right arm, so that the right hand can take the other faces from its own side).
PASS_HEADING_OFFSETS_RAD = (-0.25, -0.15, -0.35, -0.05, 0.0)
RECEIVE_APPROACH_M = 0.05  # the right hand comes down onto the held cube from this far above its grasp
CARRY_HEIGHT_M = 0.03  # the half is carried to this far over where it rests on the other, then lowered
# The right hand's descents, onto the held half and with it onto the bottom one, are perturbed (recovery data) until
# this far from their ends: the corrections a policy needs there, which no demonstration showed while they were exact
# from the start (a policy's hand came onto the held half 8 mm low and aside and pushed it out of the left's pinch;
# perturbing that descent too did not change the policy's score: docs/world.md).
PRECISE_WITHIN_M = 0.01
RECEIVE_S = 2.0  # from the cube's arrival at the handover point to the right hand's pinch closed (descend, close)


class TwoRigExpert:
    """One ScriptedExpert per rig (with the grasps of `grasp_task`), planned together at reset(world); act(world) gives
    every part's joint targets."""

    hands_over = False  # whether one hand takes the object from the other (a take spread moves that take)

    def __init__(self, rigs: dict[str, Rig], task_name: str, grasp_task: str):
        if set(rigs) != {"left", "right"}:
            raise ConfigError(f"The {task_name} expert drives two rigs named left and right; got {sorted(rigs)}")
        self.task_name = task_name
        self.experts = {name: ScriptedExpert(rig, task_name, name, grasp_task=grasp_task)
                        for name, rig in rigs.items()}
        self._handover = HandoverSpread()

    @property
    def phase(self) -> str:
        return " / ".join(f"{name} {expert.phase}" for name, expert in self.experts.items())

    @property
    def precise_parts(self) -> frozenset[str]:
        """Each rig's own: one hand letting go leaves the other's perturbation on."""
        return frozenset().union(*(expert.precise_parts for expert in self.experts.values()))

    @property
    def plan_duration_s(self) -> float:
        return max(expert.plan_duration_s for expert in self.experts.values())

    def reset(self, world: World, place_miss_m: np.ndarray | None = None,
              handover: HandoverSpread | None = None) -> None:
        """Plan the episode; handover: how this episode's handover varies. The take aims off the half's centre (the
        receiving hand's hold varies by it, and its placing, measured on the hold, corrects it), the carry ends off
        over the goal (the lowering corrects it), the right hand comes later (the left holds on till it has it)."""
        refuse_place_miss(self.task_name, place_miss_m)
        if not self.hands_over:
            refuse_handover_spread(self.task_name, handover)
        self._handover = handover or HandoverSpread()
        for expert in self.experts.values():
            expert.begin(world)
        self._plan(world)

    def _plan(self, world: World) -> None:
        raise NotImplementedError

    def act(self, world: World) -> dict[str, np.ndarray]:
        targets = {}
        for expert in self.experts.values():
            own = expert.act(world)
            targets[expert.arm_key], targets[expert.hand_key] = own["arm"], own["hand"]
        return targets


class HandoverExpert(TwoRigExpert):
    """The handover's plan: the left picks and passes, the right takes and places (the module's docstring)."""

    hands_over = True

    def __init__(self, rigs: dict[str, Rig], task_name: str = "handover"):
        super().__init__(rigs, task_name, grasp_task="cube_assembly")

    def _plan(self, world: World) -> None:
        left, right = self.experts["left"], self.experts["right"]
        pass_heading, q_pass, q_above = self._pass_headings(world)
        left_plan = self._pick_and_pass(world, pass_heading, q_pass)
        handed_s = sum(segment.duration_s for segment in left_plan)
        delay_s = self._handover.pass_delay_s
        # the left holds still until the right has closed on the cube, then lets go and rises
        left_plan += [Segment("hold", delay_s + RECEIVE_S, None, left.closed, precise=True), *left._release(),
                      Segment("open", 0.6, None, left.preshape, precise=True),
                      Segment("done", 1e9, None, left.preshape, precise=True)]
        left.follow(left_plan)
        right.follow(self._receive_and_place(world, pass_heading + np.pi / 2, q_above, handed_s + delay_s))

    def _pass_headings(self, world: World) -> tuple[float, np.ndarray, np.ndarray]:
        """The left hand's heading at the handover point and both arms' configurations there (the left holding,
        the right's pinch on the other faces), the first of PASS_HEADING_OFFSETS_RAD both reach with margin."""
        left, right = self.experts["left"], self.experts["right"]
        point = np.asarray(HANDOVER_POINT_M)
        base = left.arm_base[:3, 3]
        toward = float(np.arctan2(point[1] - base[1], point[0] - base[0]))
        for offset in PASS_HEADING_OFFSETS_RAD:
            heading = toward + offset
            q_pass = left.solve_within_margin(heading_frame(point, heading) @ left.grasp.hand_in_heading(),
                                              (left.arm.home_full, *left._ik_starts))
            if q_pass is None:
                continue
            receive = heading_frame(point, heading + np.pi / 2) @ right.grasp.hand_in_heading()
            above = receive.copy()
            above[2, 3] += RECEIVE_APPROACH_M
            q_above = right.solve_within_margin(above, (right.arm.home_full, *right._ik_starts))
            if q_above is not None and right.solve_within_margin(receive, (q_above,)) is not None:
                return heading, q_pass, q_above
        raise UnreachableGrasp(f"No heading at the handover point {HANDOVER_POINT_M} lets both hands hold the cube "
                               "within the arms' joint limits")

    def _pick_and_pass(self, world: World, pass_heading: float, q_pass: np.ndarray) -> list[Segment]:
        """The left hand: the one-rig pick (approach, descend, close, lift), then to the handover point."""
        left = self.experts["left"]
        top = world.object_pose("cube_top")
        frame, q_pre, q_grasp = left._grasp_frame(top.position_m, top.yaw_rad)
        grasp = frame @ left.grasp.hand_in_heading()
        pre_grasp = left._hand_pose_at(q_pre)
        lifted = grasp.copy()
        lifted[2, 3] += LIFT_M
        passing = heading_frame(np.asarray(HANDOVER_POINT_M), pass_heading) @ left.grasp.hand_in_heading()
        return [
            Segment("approach", 2.0, lambda w: pre_grasp, left.preshape, q_pre, joint_path=True, from_rest=False),
            Segment("descend", 1.2, lambda w: grasp, left.preshape, q_grasp),
            Segment("close", 1.0, None, left.closed, precise=True),
            Segment("lift", 1.2, lambda w: lifted, left.closed),
            Segment("pass", 2.4, lambda w: passing, left.closed, q_pass),
        ]

    def _receive_and_place(self, world: World, receive_heading: float, q_above: np.ndarray,
                           handed_s: float) -> list[Segment]:
        """The right hand: wait, come over the held cube, pinch its other faces, hold while the left lets go, then
        the one-rig placing on the bottom half."""
        right = self.experts["right"]

        def receive(height_m: float):
            def target(w: World) -> np.ndarray:
                cube = w.object_pose("cube_top")  # held still by the left hand: its faces as they are now
                heading = _nearest_turn(cube.yaw_rad, receive_heading, np.pi / 2)
                frame = heading_frame(cube.position_m, heading)
                frame[:3, 3] += frame[:3, :2] @ self._handover.take_offset_m
                pose = frame @ right.grasp.hand_in_heading()
                pose[2, 3] += height_m
                return pose
            return target

        bottom = world.object_pose("cube_bottom")
        resting = bottom.position_m + [0.0, 0.0, 2 * HALF_HEIGHT_M + PLACE_DROP_M]
        # the hand's heading over the goal: the bottom half's face the arm reaches best there (the hand turns the
        # half on the way), with the arm's configuration for the hold as planned, so that the carry's IK stays on its
        # branch (left to itself, a carry to the arm's outer side flipped the wrist and swept the half off the table)
        for heading in right._headings(resting, bottom.yaw_rad):
            q_over = right.solve_within_margin(
                heading_frame(resting + [0.0, 0.0, CARRY_HEIGHT_M], heading) @ right.grasp.hand_in_heading(),
                (q_above, right.arm.home_full, *right._ik_starts))
            if q_over is not None:
                break
        else:
            raise UnreachableGrasp(f"The right arm does not reach over the bottom half at {np.round(resting, 3)} "
                                   "within its joint limits")
        over_goal = right._over_goal(resting, bottom.yaw_rad, np.pi / 2, "cube_top", heading - receive_heading)
        release_s = sum(segment.duration_s for segment in right._release())

        def lifted(w: World) -> np.ndarray:  # up from where the take left the hand
            return _raised(right._segment_start_pose, LIFT_M / 2)

        def carried(w: World) -> np.ndarray:  # over the goal, off it by the episode's carry offset
            pose = over_goal(CARRY_HEIGHT_M)(w)
            pose[:2, 3] += self._handover.carry_offset_m
            return pose

        return [
            Segment("wait", handed_s - 1.8, None, right.preshape),
            # over where the cube will be, along the arm's joint path; then onto where it is
            Segment("approach", 1.8, receive(RECEIVE_APPROACH_M), right.preshape, q_above, joint_path=True),
            Segment("descend", RECEIVE_S / 2, receive(0.0), right.preshape, precise=True,
                    precise_after=1 - PRECISE_WITHIN_M / RECEIVE_APPROACH_M),
            Segment("close", RECEIVE_S / 2, None, right.closed, precise=True),
            Segment("take", release_s, None, right.closed, precise=True),  # while the left lets go and rises
            Segment("lift", 1.0, lifted, right.closed),
            Segment("carry", 2.4, carried, right.closed, q_over),
            Segment("place", 1.2, over_goal(0.0), right.closed, precise=True,
                    precise_after=1 - PRECISE_WITHIN_M / CARRY_HEIGHT_M),
            *right._release(),
            Segment("open", 0.6, None, right.preshape, precise=True),
            Segment("done", 1e9, None, right.preshape, precise=True),
        ]

def _fixed(pose: np.ndarray) -> Callable[[World], np.ndarray]:
    """A segment's target that stays where the plan put it."""
    return lambda world: pose


def _raised(pose: np.ndarray, height_m: float) -> np.ndarray:
    raised = pose.copy()
    raised[2, 3] += height_m
    return raised


# Each palm's target this far inside the box's end face: the squeeze (1.5 cm: the box slid up to 2.3 cm in the hands
# on the way, 19/20 layouts; 2.5 cm: 20/20)
PRESS_M = 0.025
APPROACH_OUT_M = 0.06  # each hand comes down this far outside its end face, then moves in
BOX_LIFTS_M = (0.08, 0.06, 0.045)  # how high the box is carried: the highest both arms reach there
BOX_DROP_M = 0.002  # the box is let go this far above resting on the table
# The palm's centre this far back from the middle of the box's end face, toward the arms: the wrist (the arm's last
# link, thicker than the palm) then clears the face; centred, it met the box before the palm did
PALM_BACK_M = 0.02
# How far down from pointing away from the arms the fingers point, tried in turn per pose (the hand turns about its
# palm's normal between poses, the palm staying on the face): the left Piper holds its L10's palm against the box's
# end only with the fingers 15-45 degrees down (with them level or pointing down, on none of the layouts)
FINGER_TILTS_RAD = tuple(np.radians((30, 22.5, 37.5, 15, 45)))


class LiftExpert(TwoRigExpert):
    """The bimanual lift's plan: both palms press the box's ends, lift, carry, set it down (the module's docstring)."""

    def __init__(self, rigs: dict[str, Rig], task_name: str = "bimanual_lift"):
        # the hands' shapes are the bottle's side wrap's: its preshape is the open hand the palms press with
        super().__init__(rigs, task_name, grasp_task="bottle_peg_in_hole")
        self._palm_in_hand = {name: self._palm_frame(expert) for name, expert in self.experts.items()}

    @staticmethod
    def _palm_frame(expert: ScriptedExpert) -> tuple[np.ndarray, float]:
        """(4x4 palm frame in the hand's base frame: columns across, out of the palm, wrist to fingers; origin the palm
        box's centre), and the palm's half thickness."""
        model = expert.hand.model
        palm = hand_palm(model, expert.hand.spec.side)
        link = model.frame_pose(reference_pose(model), palm.link)
        return _pose(link[:3, :3] @ palm.rotation, link[:3, :3] @ palm.centre_m + link[:3, 3]), float(
            palm.half_size_m[1])

    def _plan(self, world: World) -> None:
        """Both hands' plans at the highest of BOX_LIFTS_M both arms reach."""
        for lift_m in BOX_LIFTS_M[:-1]:
            try:
                plans = {name: self._rig_plan(world, name, lift_m) for name in self.experts}
                break
            except UnreachableGrasp:
                continue
        else:
            plans = {name: self._rig_plan(world, name, BOX_LIFTS_M[-1]) for name in self.experts}
        for name, plan in plans.items():
            self.experts[name].follow(plan)

    def _rig_plan(self, world: World, name: str, lift_m: float) -> list[Segment]:
        expert = self.experts[name]
        box, target = world.body_pose("box"), world.object_pose("target")
        goal = _pose(_yaw_rotation(_nearest_turn(target.yaw_rad, world.object_pose("box").yaw_rad, np.pi)),
                     target.position_m + [0.0, 0.0, BOX_HALF_M[2] + BOX_DROP_M])
        lifted, over = _raised(box, lift_m), _raised(goal, lift_m)
        end = 1.0 if name == "left" else -1.0  # the left hand takes the +y end (the box's own y)
        palm_in_hand, half_thickness = self._palm_in_hand[name]

        def hand_at(box_pose: np.ndarray, inward_m: float, tilt: float) -> np.ndarray:
            """The hand's base pose with its palm on the box's end face, inward_m in from it."""
            inward = -end * box_pose[:3, 1]  # from the end face toward the box's middle
            forward = np.cos(tilt) * box_pose[:3, 0] - np.sin(tilt) * np.array([0.0, 0.0, 1.0])
            face = box_pose[:3, 3] + end * BOX_HALF_M[1] * box_pose[:3, 1] - PALM_BACK_M * box_pose[:3, 0]
            palm = _pose(np.stack([np.cross(inward, forward), inward, forward], axis=1),
                         face + (inward_m - half_thickness) * inward)
            return palm @ np.linalg.inv(palm_in_hand)

        starts = (expert.arm.home_full, *expert._ik_starts)
        open_hand = expert.preshape
        segments = []
        for phase, seconds, box_pose, inward_m in (
                ("approach", 2.4, box, -APPROACH_OUT_M), ("press", 1.2, box, PRESS_M),
                ("lift", 1.4, lifted, PRESS_M), ("carry", 2.4, over, PRESS_M), ("lower", 1.4, goal, PRESS_M),
                ("release", 1.0, goal, -APPROACH_OUT_M)):
            for tilt in FINGER_TILTS_RAD:
                pose = hand_at(box_pose, inward_m, tilt)
                q = expert.solve_within_margin(pose, starts)
                if q is not None:
                    break
            else:
                raise UnreachableGrasp(f"The {name} arm does not reach its end of the box for the {phase} "
                                       "within its joint limits")
            starts = (q, *starts)
            approach = phase == "approach"  # along the arm's joint path, at speed from the first tick
            segments.append(Segment(phase, seconds, _fixed(pose), open_hand, q, joint_path=approach,
                                    from_rest=not approach, precise=phase in ("press", "lower", "release")))
        retreat = Segment("retreat", 1.0, _fixed(_raised(pose, lift_m)), open_hand, precise=True)
        return [*segments, retreat, Segment("done", 1e9, None, open_hand, precise=True)]
