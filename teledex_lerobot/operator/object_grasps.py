"""A person's grasps on the synthetic hand model: the pinch and the wrap, as canonical angles within human limits.

A person teleoperating mimes the grasp in the air: nothing stops their fingers, so they close past where an object
would be until the robot holds. Each grasp is therefore a family of poses along one size, from open to closed:

- pinch: the thumb tip faces the index and middle fingertips across a gap (the object's width plus the pads), the
  thumb opposed, the ring and little fingers curled along with the middle finger as a relaxed hand does;
- wrap: the fingers curl round a cylinder lying across the palm (a bottle held from the side) and the thumb closes
  the ring on its other face: every finger's middle, distal and tip keypoints lie on the cylinder's surface.

Each pose is solved by least squares over all 20 angles, bounded by `HUMAN_ANGLE_LIMITS_RAD`, with a light pull
toward the grasp's posture (so the solution is unique and human-looking); where the surface sits in the wrist frame
(the cylinder's axis, the pinch's gap) is solved with it. The postures are a person's habits (`GraspHabits`): people
pinch and wrap the same object with differently shaped hands (operator/persons.py).
"""

import functools
from dataclasses import dataclass

import numpy as np
from scipy.optimize import least_squares

from .hand_model import AVERAGE_ADULT_HAND, HUMAN_ANGLE_LIMITS_RAD, HandGeometry, keypoints_from_angles
from .keypoints import FINGER_CHAINS, FINGER_NAMES, THUMB_IP, THUMB_TIP
from .poses import POWER_GRASP, RELAXED_HAND, hand_pose

# Where the pads of a pinch meet, the thumb opposed: the posture the solver starts from and is pulled toward.
PAD_PINCH_POSTURE = hand_pose(thumb=(0.55, 0.75, 0.25, 0.15), index=(0.45, 0.05, 0.55, 0.25),
                              middle=(0.50, 0.00, 0.60, 0.30), ring=RELAXED_HAND[12:16], pinky=RELAXED_HAND[16:20])
_FINGER_RADIUS_M = 0.009  # a finger's keypoints sit this far inside its skin (half its thickness)
_POSTURE_WEIGHT = 0.3  # per radian, against millimetres of surface error
_COUPLING_WEIGHT = 2.0  # ring and little finger follow the middle finger's curl in a pinch (shared tendons)
_SOLVE_TOLERANCE_M = 2e-3  # a pose farther than this off its surface is not that grasp: an error, not a pose
# The fingers each grasp kind is made with (the others vary from person to person).
GRASP_FINGERS = {"pinch": ("thumb", "index", "middle"), "wrap": FINGER_NAMES}


@dataclass(frozen=True)
class GraspHabits:
    """How a person shapes their hand for each grasp: the posture (canonical angles, a tuple of 20) each grasp's
    poses are pulled toward."""

    pinch_posture: tuple[float, ...] = tuple(PAD_PINCH_POSTURE)
    wrap_posture: tuple[float, ...] = tuple(POWER_GRASP)


@dataclass(frozen=True)
class HumanGrasp:
    """A grasp a person makes: canonical angles (20,) open (the hand shaped, around the object) and closed (squeezed
    past it, as when miming), and the fingers the grasp is made with (the others vary from person to person)."""

    name: str
    open: np.ndarray
    closed: np.ndarray
    fingers: tuple[str, ...]

    def __post_init__(self):
        for pose in (self.open, self.closed):
            pose.flags.writeable = False

    def at(self, closure: float) -> np.ndarray:
        return self.open + float(closure) * (self.closed - self.open)


def pinch_pose(gap_m: float, geometry: HandGeometry = AVERAGE_ADULT_HAND, scale: float = 1.0,
               posture=PAD_PINCH_POSTURE) -> np.ndarray:
    """Canonical angles with the thumb tip `gap_m` from the index and the middle fingertips (both), thumb opposed."""
    index_tip, middle_tip = FINGER_CHAINS["index"][-1], FINGER_CHAINS["middle"][-1]
    posture = np.asarray(posture, dtype=float)

    def residuals(angles):
        points = keypoints_from_angles(angles, "right", scale, geometry)
        gaps = [np.linalg.norm(points[tip] - points[THUMB_TIP]) - gap_m for tip in (index_tip, middle_tip)]
        follow = [angles[12] - angles[8], angles[14] - angles[10], angles[16] - angles[8], angles[18] - angles[10]]
        return np.r_[1000 * np.array(gaps), _COUPLING_WEIGHT * np.array(follow),
                     _POSTURE_WEIGHT * (angles - posture)]

    angles = _solve(residuals, posture)
    points = keypoints_from_angles(angles, "right", scale, geometry)
    error = max(abs(float(np.linalg.norm(points[tip] - points[THUMB_TIP])) - gap_m) for tip in (index_tip, middle_tip))
    _check(error, f"a pinch with a {gap_m * 1000:.0f} mm gap")
    return angles


def wrap_pose(diameter_m: float, geometry: HandGeometry = AVERAGE_ADULT_HAND, scale: float = 1.0,
              posture=POWER_GRASP) -> np.ndarray:
    """Canonical angles with the fingers and the thumb round a cylinder of `diameter_m` lying across the palm."""
    posture = np.asarray(posture, dtype=float)
    radius = diameter_m / 2 + _FINGER_RADIUS_M
    groups = [*(chain[1:] for chain in (FINGER_CHAINS[name] for name in FINGER_NAMES[1:])), (THUMB_IP, THUMB_TIP)]
    on_surface = np.array([index for group in groups for index in group])

    def distances(angles, axis_yz):
        points = keypoints_from_angles(angles, "right", scale, geometry)
        # the axis runs across the palm (along x): a point's distance to it is its distance in the y-z plane
        return np.linalg.norm(points[on_surface][:, 1:] - axis_yz, axis=1) - radius

    def residuals(x):
        angles, axis_yz = x[:20], x[20:]
        return np.r_[1000 * distances(angles, axis_yz), _POSTURE_WEIGHT * (angles - posture)]

    # The axis in front of the palm by the radius, across the fingers' first bones.
    start = np.r_[posture, radius + 0.01 * scale, 0.095 * scale]
    low = np.r_[HUMAN_ANGLE_LIMITS_RAD[:, 0], 0.0, 0.0]
    high = np.r_[HUMAN_ANGLE_LIMITS_RAD[:, 1], 0.2, 0.2]
    solved = least_squares(residuals, np.clip(start, low, high), bounds=(low, high), xtol=1e-10).x
    _check(np.abs(distances(solved[:20], solved[20:])).max(), f"a wrap round {diameter_m * 1000:.0f} mm")
    return solved[:20]


def _solve(residuals, start: np.ndarray) -> np.ndarray:
    low, high = HUMAN_ANGLE_LIMITS_RAD.T
    return least_squares(residuals, np.clip(start, low, high), bounds=(low, high), xtol=1e-10).x


def _check(error_m: float, what: str) -> None:
    if error_m > _SOLVE_TOLERANCE_M:
        raise ValueError(f"the hand model cannot make {what} within human joint limits "
                         f"({error_m * 1000:.1f} mm off); choose a size the hand spans")


@functools.cache
def human_grasps(geometry: HandGeometry = AVERAGE_ADULT_HAND, scale: float = 1.0,
                 habits: GraspHabits = GraspHabits()) -> dict[str, HumanGrasp]:
    """The grasps a person mimes, by kind: a pinch from an 8 cm to a 2 cm gap between the tips, a wrap from round
    a 10 cm to round a 4 cm cylinder. Solved once per hand and habits (about 0.7 s); the poses are read-only."""
    pinch, wrap = habits.pinch_posture, habits.wrap_posture
    return {
        "pinch": HumanGrasp("pinch", pinch_pose(0.08, geometry, scale, pinch), pinch_pose(0.02, geometry, scale, pinch),
                            GRASP_FINGERS["pinch"]),
        "wrap": HumanGrasp("wrap", wrap_pose(0.10, geometry, scale, wrap), wrap_pose(0.04, geometry, scale, wrap),
                           GRASP_FINGERS["wrap"]),
    }
