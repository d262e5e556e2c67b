"""How a hand holds each task's object: the grasps the scripted expert uses and benchmarks/grasp_grid.py measures.

A grasp is written in the object's *heading frame*: origin at the object's origin, x the horizontal direction the
hand faces the object from (the heading), z up. It fixes the hand's axes in that frame, where the object's origin
sits in the hand frame once grasped, the hand shape before and after closing, and where the hand comes from.
Hand frames follow our hand convention (+z wrist -> fingers, +y out of the palm, +x toward the pinky on a right
hand).

Grasps of the LinkerHand O6 (measured on the hand alone, benchmarks/grasp_grid.py; numbers in the module docs):
- cube half, "level pinch": palm down and level, fingers along the heading. The opposed thumb (yaw at its limit,
  pitch 0.35) is a fixed post behind the near face; the fingers curl down past the far face and push the half
  against the thumb. The pinch sits 7 cm below the palm, where the thumb's tip meets the curled fingertips, at the
  same height when the hand is level, so the 2 cm half is pinched at mid-height, 4 cm across (pitched 25 deg down
  the pinch holds too).
- bottle, "side wrap": palm against the bottle from the side, pinky down, fingers wrapping the far side near the
  bottle's top, thumb in the palm plane above the bottle; the hand slides down along the bottle before closing.
  The finger curl lies in a horizontal plane, so every finger force presses the bottle into the palm and friction
  carries its weight.

Grasps of the LinkerHand L10 and L20: the same two strategies. Their fingers are the O6's (fingertips within 3 mm
of the O6's at the pinch's curls); their thumbs are not, so each pinch has its own thumb pose and, from it, its
own object position. Both thumbs are a post that reaches a little further into the pinch than the O6's (more
flexion): with the O6's own thumb pose (which the L20 can copy exactly) the half came up 9.0 cm of 10 on the grasp
rig and the hand landing 5 mm off lost it; flexed further, it comes up 9.2-9.7 cm in every placement tried.
On the A7 our IK, started from its home, ends the level pinch at the shoulder roll limit; started with the elbow
out (shoulder yaw about -1 rad) it reaches the pinch's poses 0.09-0.30 rad inside every limit (seeds 0-49): the
pinches carry that configuration as a start for the IK (`ik_start_by_arm`).

Each hand's grasps are written in its descriptor (configs/hands/<hand>.yaml), with the numbers' derivations: the
hand shapes under `grasps` (control/hand_grasps.py), the rest of each Grasp below under `world_grasps.<task>`.
"""

from dataclasses import dataclass, field

import numpy as np

from ..errors import ConfigError
from ..kinematics.hands import HANDS, HandDescriptor, WorldGraspFile
from .tasks import TASKS


@dataclass(frozen=True)
class Grasp:
    name: str
    hand_axes: tuple  # 3x3 rows: the hand's x, y, z axes written in the heading frame
    object_in_hand_m: tuple[float, float, float]  # the object's origin in the hand frame when grasped
    preshape: dict[str, float]  # joint name (or name ending) -> rad, before closing
    closed: dict[str, float]  # the closing target (beyond contact: the servos' force limits set the grip)
    approach_m: tuple[float, float, float]  # the pre-grasp pose's offset from the grasp (heading frame)
    symmetry: int  # the object's rotational symmetry about z: 4 for a square half-cube, 0 for a round bottle
    # Let go by easing the servos to where the fingers are squeezed (a pinch, whose opening curl would drag the
    # object along), or by opening to the preshape (a wrap whose curl moves the fingers straight off the object).
    release_by_easing: bool = True
    # The heading, relative to the direction from the arm's base to the object, that the arm reaches best (the
    # middle of the band our IK reaches with margin; a mounted hand reaches some headings only).
    preferred_heading_rad: float = 0.0
    # Per arm model (the preset's arm.model): a configuration (joint name -> rad, the others at home) from which the
    # expert's IK also looks for the pre-grasp pose, for an arm whose home leads our IK to a joint limit there.
    ik_start_by_arm: dict[str, dict[str, float]] = field(default_factory=dict)

    def ik_starts(self, arm_model: str, joint_names: list[str], home_full: np.ndarray) -> tuple[np.ndarray, ...]:
        """The extra IK starts for an arm (full configurations in joint_names order): none, or the one given."""
        start = self.ik_start_by_arm.get(arm_model)
        if start is None:
            return ()
        unknown = sorted(set(start) - set(joint_names))
        if unknown:
            raise ConfigError(f"Grasp {self.name!r}: ik_start_by_arm.{arm_model} names joints {unknown} that the "
                              f"arm does not have; use its joints {list(joint_names)} (in the hand's descriptor, "
                              "configs/hands/<hand>.yaml `world_grasps`)")
        q = np.array(home_full, dtype=float)
        for joint, value in start.items():
            q[joint_names.index(joint)] = value
        return (q,)

    def hand_in_heading(self) -> np.ndarray:
        """4x4 pose of the hand in the heading frame when grasped."""
        rotation = np.asarray(self.hand_axes, dtype=float).T  # columns: hand axes
        pose = np.eye(4)
        pose[:3, :3] = rotation
        pose[:3, 3] = -rotation @ np.asarray(self.object_in_hand_m)
        return pose


def heading_frame(position_m, heading_rad: float) -> np.ndarray:
    """4x4 world pose of a heading frame at position_m."""
    c, s = np.cos(heading_rad), np.sin(heading_rad)
    frame = np.eye(4)
    frame[:3, :3] = [[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]
    frame[:3, 3] = position_m
    return frame


def _grasp(hand: HandDescriptor, task: str, placement: WorldGraspFile) -> Grasp:
    """How `hand` holds `task`'s object: the placement in its descriptor (`world_grasps.<task>`) with the hand shapes
    of the grasp it names (`grasps.<name>`, which a controller's grip closes the hand along too)."""
    if task not in TASKS:
        raise ConfigError(f"{hand.where(f'world_grasps.{task}')}: no world task {task!r}; the tasks are "
                          f"{', '.join(sorted(TASKS))}")
    shape = hand.grasps[placement.grasp]
    return Grasp(name=placement.grasp, hand_axes=placement.hand_axes, object_in_hand_m=placement.object_in_hand_m,
                 preshape=shape.preshape, closed=shape.closed, approach_m=placement.approach_m,
                 symmetry=placement.symmetry, release_by_easing=placement.release_by_easing,
                 preferred_heading_rad=placement.preferred_heading_rad, ik_start_by_arm=placement.ik_start_by_arm)


# hand model -> world task -> how the hand holds the task's object, from each hand's descriptor
GRASPS: dict[str, dict[str, Grasp]] = {
    name: {task: _grasp(hand, task, placement) for task, placement in hand.world_grasps.items()}
    for name, hand in HANDS.items() if hand.world_grasps}


def grasp_for(hand_model: str, task: str) -> Grasp:
    if task not in GRASPS.get(hand_model, {}):
        measured = "; ".join(f"{hand}: {', '.join(tasks)}" for hand, tasks in GRASPS.items())
        raise ConfigError(f"Hand {hand_model!r} has no measured grasp for task {task!r} (measured: {measured}); "
                          "measure one with benchmarks/grasp_grid.py and add it to the hand's descriptor, "
                          f"configs/hands/<hand>.yaml `world_grasps.{task}` (docs/extending.md).")
    return GRASPS[hand_model][task]
