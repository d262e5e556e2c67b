"""A scripted expert for two rigs, `left` and `right` (world/tasks/handover.py): one ScriptedExpert per rig, each
following its own plan on the world's clock, so the two meet at the planned instants.

Handover: the left hand picks the half cube up with its level pinch and carries it to the handover point between
the arms, the hand turned so that the cube's other pair of faces looks at the right arm; the right hand pinches
those faces (its grasp computed every tick from where the cube is: the left hand holds it still), the left lets go
and rises, and the right places the half on the other one, closed-loop on the hold it measures once it carries (as
the one-rig expert places). The hands' geoms do not collide with each other (world/mjcf.py), so their palms may
overlap above the cube while both hold it.

It reads the world's privileged state, as the one-rig expert does, and returns joint targets per part key
("left/arm", ...).
"""

import numpy as np

from ..errors import ConfigError
from ..rig import Rig
from .expert import LIFT_M, PLACE_DROP_M, ScriptedExpert, Segment, UnreachableGrasp, _nearest_turn
from .grasps import heading_frame
from .tasks.cube import HALF_HEIGHT_M
from .world import World

HANDOVER_POINT_M = (0.25, 0.0, 0.18)  # where the left hand brings the cube half (world): both arms reach it
# The left hand's heading at the handover, tried in turn: offsets from the direction from its base to the point
# (turned toward the right arm, so that the right hand can take the other faces from its own side).
PASS_HEADING_OFFSETS_RAD = (-0.25, -0.15, -0.35, -0.05, 0.0)
RECEIVE_APPROACH_M = 0.05  # the right hand comes down onto the held cube from this far above its grasp
CARRY_HEIGHT_M = 0.03  # the half is carried to this far over where it rests on the other, then lowered
RECEIVE_S = 2.0  # from the cube's arrival at the handover point to the right hand's pinch closed (descend, close)


class HandoverExpert:
    """Plans both rigs' motions for the handover at reset(world); act(world) gives every part's joint targets."""

    def __init__(self, rigs: dict[str, Rig], task_name: str = "handover"):
        if set(rigs) != {"left", "right"}:
            raise ConfigError(f"The handover expert drives two rigs named left and right; got {sorted(rigs)}")
        self.task_name = task_name
        self.experts = {name: ScriptedExpert(rig, task_name, name, grasp_task="cube_assembly")
                        for name, rig in rigs.items()}

    @property
    def phase(self) -> str:
        return " / ".join(f"{name} {expert.phase}" for name, expert in self.experts.items())

    @property
    def precise_phase(self) -> bool:
        return any(expert.precise_phase for expert in self.experts.values())

    @property
    def plan_duration_s(self) -> float:
        return max(expert.plan_duration_s for expert in self.experts.values())

    def reset(self, world: World, place_miss_m: np.ndarray | None = None) -> None:
        if place_miss_m is not None and np.any(place_miss_m):
            raise ConfigError("A placement miss needs a task whose expert recovers from a jam (bottle_peg_in_hole); "
                              f"the task is {self.task_name}: set teleop.perturbation.place_miss_m=0")
        left, right = self.experts["left"], self.experts["right"]
        left.begin(world)
        right.begin(world)
        pass_heading, q_pass, q_above = self._pass_headings(world)
        left_plan = self._pick_and_pass(world, pass_heading, q_pass)
        handed_s = sum(segment.duration_s for segment in left_plan)
        # the left holds still until the right has closed on the cube, then lets go and rises
        left_plan += [Segment("hold", RECEIVE_S, None, left.closed, precise=True), *left._release(),
                      Segment("open", 0.6, None, left.preshape, precise=True),
                      Segment("done", 1e9, None, left.preshape, precise=True)]
        left.follow(left_plan)
        right.follow(self._receive_and_place(world, pass_heading + np.pi / 2, q_above, handed_s))

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
                pose = heading_frame(cube.position_m, heading) @ right.grasp.hand_in_heading()
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

        return [
            Segment("wait", handed_s - 1.8, None, right.preshape),
            # over where the cube will be, along the arm's joint path; then onto where it is
            Segment("approach", 1.8, receive(RECEIVE_APPROACH_M), right.preshape, q_above, joint_path=True),
            Segment("descend", RECEIVE_S / 2, receive(0.0), right.preshape, precise=True),
            Segment("close", RECEIVE_S / 2, None, right.closed, precise=True),
            Segment("take", release_s, None, right.closed, precise=True),  # while the left lets go and rises
            Segment("lift", 1.0, lifted, right.closed),
            Segment("carry", 2.4, over_goal(CARRY_HEIGHT_M), right.closed, q_over),
            Segment("place", 1.2, over_goal(0.0), right.closed, precise=True),
            *right._release(),
            Segment("open", 0.6, None, right.preshape, precise=True),
            Segment("done", 1e9, None, right.preshape, precise=True),
        ]

    def act(self, world: World) -> dict[str, np.ndarray]:
        targets = {}
        for expert in self.experts.values():
            own = expert.act(world)
            targets[expert.arm_key], targets[expert.hand_key] = own["arm"], own["hand"]
        return targets


def _raised(pose: np.ndarray, height_m: float) -> np.ndarray:
    raised = pose.copy()
    raised[2, 3] += height_m
    return raised
