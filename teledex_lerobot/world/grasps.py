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
"""

from dataclasses import dataclass, field

import numpy as np

from ..control.hand_grasps import GRASP_SHAPES, GraspShape


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
            raise ValueError(f"Grasp {self.name!r}: ik_start_by_arm[{arm_model!r}] names joints {unknown} that the "
                             f"arm does not have; use its joints {list(joint_names)} (teledex_lerobot/world/grasps.py)")
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


def _shape(hand_model: str, name: str) -> dict[str, dict[str, float]]:
    """A grasp's hand shapes (control/hand_grasps.py, where a controller's grip closes the hand along them too)."""
    shape: GraspShape = GRASP_SHAPES[hand_model][name]
    return {"preshape": shape.preshape, "closed": shape.closed}


# Level pinch of a 4 cm half-cube (4 x 4 x 2 cm). The object sits 6 mm beyond the thumb tip (FK at the preshape:
# (10.8, 69.3, 100.9) mm), which clears the table by 2 mm: y = 69.3 + 8.5 (bone radius) + 2 - 10 (half height),
# z = 100.9 + 8.5 + 6 + 20 (half width). The fingers push the half those 6 mm onto the thumb; centred so, the grasp
# holds with the hand landing up to 5 mm off along or across the heading, or turned 10 deg (grasp_grid.py).
O6_CUBE_LEVEL_PINCH = Grasp(
    name="level_pinch",
    hand_axes=((0.0, -1.0, 0.0), (0.0, 0.0, -1.0), (1.0, 0.0, 0.0)),
    object_in_hand_m=(0.0, 0.0698, 0.1354),
    **_shape("linkerhand_o6", "level_pinch"),
    approach_m=(0.0, 0.0, 0.05),
    symmetry=4,
    preferred_heading_rad=0.1,  # Piper + O6: 0 to +0.25 rad
)
# Side wrap of the 6 cm bottle near its top: its top is level with the hand's origin (hand x = 0, pinky down),
# its axis 4.3 cm out of the palm (3 cm radius + the palm's 0.9 mm face + 4 mm clearance) and 6.5 cm along the
# fingers (under the proximal phalanges, so the fingers wrap its far side).
O6_BOTTLE_SIDE_WRAP = Grasp(
    name="side_wrap",
    hand_axes=((0.0, 0.0, -1.0), (1.0, 0.0, 0.0), (0.0, -1.0, 0.0)),
    object_in_hand_m=(0.08, 0.043, 0.065),
    **_shape("linkerhand_o6", "side_wrap"),
    approach_m=(0.0, 0.0, 0.1),
    symmetry=0,
    release_by_easing=False,
    preferred_heading_rad=1.3,  # Piper + O6: +1.0 to +1.6 rad (palm facing left, fingers pointing away)
)

# The A7 (right) with the hand level over the table: the elbow out, the wrist turned back (an IK solution of the
# pinch's pre-grasp at (0.37, 0.05) m with 0.55 rad of joint margin, rounded).
A7_LEVEL_PINCH_START = {"Right_Shoulder_Pitch_Joint": 0.3, "Right_Shoulder_Roll_Joint": -0.2,
                        "Right_Shoulder_Yaw_Joint": -1.0, "Right_Elbow_Pitch_Joint": 1.8, "Right_Wrist_Yaw_Joint": 1.9,
                        "Right_Wrist_Pitch_Joint": -0.4, "Right_Wrist_Roll_Joint": -0.2}

# Level pinches of the L20 and L10: the O6's, with each hand's thumb post. The object sits where it does for the O6
# relative to the thumb tip: y = tip y + 8.5 (bone radius) + 2 (clear of the table) - 10 (half height), z = tip z +
# 8.5 + 6 + 20. Thumb tips at the preshape (FK): L20 (23.1, 67.9, 89.6) mm, L10 (26.8, 72.4, 89.2) mm.
# L20: the O6's thumb would be roll 1.36, yaw 0.15, pitch 0.35, ip 0.65; this one is flexed to pitch 0.5, ip 0.85.
# The fingers' pip follows 1.3 x dip: dip 0.205 and 0.445 put the pip where the O6's is at mcp 0.3 and 0.65.
L20_CUBE_LEVEL_PINCH = Grasp(
    name="level_pinch",
    hand_axes=O6_CUBE_LEVEL_PINCH.hand_axes,
    object_in_hand_m=(0.0, 0.0684, 0.1241),
    **_shape("linkerhand_l20", "level_pinch"),
    approach_m=(0.0, 0.0, 0.05),
    symmetry=4,
    preferred_heading_rad=0.1,
    ik_start_by_arm={"linker_a7": A7_LEVEL_PINCH_START},
)
# L10: its thumb roll stops at -1.01 rad, short of the O6's opposition, so the post comes from more flexion
# (cmc pitch 0.65, which the mimics carry to mcp and ip) and yaw 0.22 away from the index finger.
L10_CUBE_LEVEL_PINCH = Grasp(
    name="level_pinch",
    hand_axes=O6_CUBE_LEVEL_PINCH.hand_axes,
    object_in_hand_m=(0.0, 0.0729, 0.1237),
    **_shape("linkerhand_l10", "level_pinch"),
    approach_m=(0.0, 0.0, 0.05),
    symmetry=4,
    preferred_heading_rad=0.1,
    ik_start_by_arm={"linker_a7": A7_LEVEL_PINCH_START},
)
# Side wraps: the O6's hand pose, the thumb in the palm plane, the fingers curled to their limits. L20: thumb 0.6 rad
# from the fingers like the O6's (yaw 0.15), mcp 1.4 (its limit) and dip 1.02 (pip 1.33). L10: thumb alongside
# the index finger (yaw 0), mcp 1.5 (pip and dip follow: 1.35, 1.01). Both come from 13 cm above the grasp, not
# 10: the A7's joint-space approach to a bottle at the left of its workspace (y > 0.1 m) swept the palm through it
# from 10 cm (A7 + L10 46/50; from 13 cm 50/50, the Piper's 50/50 unchanged).
L20_BOTTLE_SIDE_WRAP = Grasp(
    name="side_wrap",
    hand_axes=O6_BOTTLE_SIDE_WRAP.hand_axes,
    object_in_hand_m=O6_BOTTLE_SIDE_WRAP.object_in_hand_m,
    **_shape("linkerhand_l20", "side_wrap"),
    approach_m=(0.0, 0.0, 0.13),
    symmetry=0,
    release_by_easing=False,
    preferred_heading_rad=1.3,
)
L10_BOTTLE_SIDE_WRAP = Grasp(
    name="side_wrap",
    hand_axes=O6_BOTTLE_SIDE_WRAP.hand_axes,
    object_in_hand_m=O6_BOTTLE_SIDE_WRAP.object_in_hand_m,
    **_shape("linkerhand_l10", "side_wrap"),
    approach_m=(0.0, 0.0, 0.13),
    symmetry=0,
    release_by_easing=False,
    preferred_heading_rad=1.3,
)

GRASPS: dict[str, dict[str, Grasp]] = {
    "linkerhand_o6": {"cube_assembly": O6_CUBE_LEVEL_PINCH, "bottle_peg_in_hole": O6_BOTTLE_SIDE_WRAP},
    "linkerhand_l20": {"cube_assembly": L20_CUBE_LEVEL_PINCH, "bottle_peg_in_hole": L20_BOTTLE_SIDE_WRAP},
    "linkerhand_l10": {"cube_assembly": L10_CUBE_LEVEL_PINCH, "bottle_peg_in_hole": L10_BOTTLE_SIDE_WRAP},
}


def grasp_for(hand_model: str, task: str) -> Grasp:
    if hand_model not in GRASPS:
        raise ValueError(f"No measured grasps for hand {hand_model!r} (the scripted expert knows "
                         f"{sorted(GRASPS)}); measure one with benchmarks/grasp_grid.py and add it to "
                         "teledex_lerobot/world/grasps.py.")
    return GRASPS[hand_model][task]
