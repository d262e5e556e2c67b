"""Grasps that hold: when the operator's hand makes a person's grasp, the robot hand makes its measured grasp.

Retargeting by keypoints reproduces the operator's fingertips, which is not what a robot hand needs to hold an object:
the O6's pinch of the half cube is its thumb opposed to its limit as a post and the fingers curled onto it, a shape
no human pinch maps to (TeleDex gives thumb yaw 0.4 at the pinch's open end, the post needs 1.36 from the start).
The measured grasps (control/hand_grasps.py, held on the grasp rig and in the world) are ground truth for what the
robot must do, so each is anchored to the human grasp it answers (operator/object_grasps.py: a pinch, a wrap), and:

- the operator's keypoints are compared with each human grasp's family of poses, open to closed, in the wrist frame
  scaled to one hand size (RMS over the grasp's fingers' keypoints beyond their base joints);
- the nearest pose gives the grasp's closure (0 open .. 1 closed) and a weight: 1 within `near_mm`, 0 beyond
  `far_mm`, smooth between, so the robot leaves the retargeted shape gradually as the person's hand forms the grasp;
- the families are the operator's own where a calibration recorded them (`GraspTemplate.from_session`: the pinch
  and wrap steps of teledex-calibrate-hand), else the hand model's (`GraspTemplate.of_model`). The shape of a grasp
  is personal: on the hand model (200 people each: hand size +-8 %, a habitual offset of 0.05 rad on every joint,
  1 mm of tracker jitter) a person making the grasp is 3.0-7.6 mm from the model's family (5th-95th percentile)
  and other poses 13-55 mm away (the defaults, 8 and 12 mm, sit between), but real recorded hands sit 16-37 mm from
  it and another hand model's person (operator/persons.py) 15-27 mm: for a person, only their own templates work;
- the robot's target is the retargeted joints blended toward the measured grasp's path at that closure.

The solver's own solution stays the warm start of the next frame: leaving a grasp returns to tracking at once.
Opening a grasp from a hold lets go as the analog method does (analog.PostHold: a pinch's thumb post stays where it
is measured, so it cannot spring back into the object).
"""

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..errors import ConfigError, DataError
from ..operator.hand_model import keypoints_from_angles
from ..operator.keypoints import FINGER_CHAINS, FINGER_NAMES, MIDDLE_MCP, WRIST
from ..operator.object_grasps import HumanGrasp
from .analog import GraspPath, PostHold

_FAMILY_SAMPLES = 41  # closures sampled along each human grasp's family (0.025 apart)
_REFERENCE_HAND_M = 0.09  # the scaled hand's wrist to middle-finger MCP (the average adult's)
_SESSION_TRIM = 0.1  # of a grasp step's frames at each end: the hand moving into and out of the grasp
_MIN_SESSION_FRAMES = 20
_MIN_SESSION_MOTION_M = 0.01  # the grasp's fingers must move this much (scaled, RMS) between open and closed
_MIN_FILLED_SHARE = 0.6  # of the closures that the session's frames must show (the others are interpolated)
_PALM = [WRIST, *(FINGER_CHAINS[finger][0] for finger in FINGER_NAMES[1:])]  # the wrist and the MCPs


@dataclass(frozen=True)
class GraspTemplate:
    """A person's grasp as keypoints: `keypoints` (K, 21, 3) in the wrist frame, scaled to the reference hand, open
    (first) to closed (last) at K equal steps of closure; `fingers`: those the grasp is made with (only their
    keypoints are compared)."""

    keypoints: np.ndarray
    fingers: tuple[str, ...]
    _compared: np.ndarray = field(init=False, repr=False, compare=False)  # the keypoints compared: the fingers'

    def __post_init__(self):
        keypoints = np.asarray(self.keypoints, dtype=float)
        if keypoints.ndim != 3 or keypoints.shape[1:] != (21, 3) or len(keypoints) < 2 \
                or not np.isfinite(keypoints).all():
            raise DataError(f"a grasp template needs finite keypoints of shape (K >= 2, 21, 3), got {keypoints.shape}")
        unknown = sorted(set(self.fingers) - set(FINGER_CHAINS))
        if unknown:
            raise DataError(f"a grasp template names fingers {unknown}; use {sorted(FINGER_CHAINS)}")
        object.__setattr__(self, "keypoints", _scaled(keypoints))
        object.__setattr__(self, "_compared", _grasp_points(self.fingers))

    def nearest(self, keypoints: np.ndarray) -> tuple[float, float]:
        """(distance in mm, closure) of the nearest pose of the family to wrist-frame keypoints (21, 3)."""
        family = self.keypoints[:, self._compared]
        rms_mm = 1000 * np.sqrt(np.mean(np.sum((family - _scaled(keypoints)[self._compared]) ** 2, axis=-1), axis=-1))
        index = int(np.argmin(rms_mm))
        return float(rms_mm[index]), index / (len(family) - 1)

    @classmethod
    def of_model(cls, grasp: HumanGrasp, side: str) -> "GraspTemplate":
        """The hand model's family of the grasp (the average adult's, unless `grasp` is another person's)."""
        closures = np.linspace(0.0, 1.0, _FAMILY_SAMPLES)
        return cls(keypoints_from_angles(np.stack([grasp.at(c) for c in closures]), side), grasp.fingers)

    @classmethod
    def from_session(cls, frames, fingers: tuple[str, ...], samples: int = 21, what: str = "the grasp step"):
        """An operator's own family from the frames (N, 21, 3, wrist frame) of a calibration step in which they made
        the grasp, open to closed and back, a few times. Each frame's closure is its place along the motion's main
        direction (the first principal component of the grasp's fingers' keypoints, 2nd to 98th percentile; closed
        where the fingertips are nearest the palm); the template is the mean shape at each of `samples` closures,
        interpolated where the session passed too quickly. DataError when the frames show no such motion."""
        frames = np.asarray(frames, dtype=float).reshape(-1, 21, 3)
        trim = int(_SESSION_TRIM * len(frames))
        frames = _scaled(frames[trim:len(frames) - trim])
        if len(frames) < _MIN_SESSION_FRAMES:
            raise DataError(f"{what}: {len(frames)} tracked frames; the grasp needs {_MIN_SESSION_FRAMES} or more "
                            "(record the step again, the hand in view)")
        points = frames[:, _grasp_points(fingers)].reshape(len(frames), -1)
        centred = points - points.mean(axis=0)
        direction = np.linalg.svd(centred, full_matrices=False)[2][0]
        along = centred @ direction
        low, high = np.percentile(along, (2.0, 98.0))
        if (high - low) / np.sqrt(len(_grasp_points(fingers))) < _MIN_SESSION_MOTION_M:
            raise DataError(f"{what}: the hand barely moved ({(high - low) * 1000:.0f} mm along the grasp); open and "
                            "close it round the object a few times, and record the step again")
        tips = [FINGER_CHAINS[finger][-1] for finger in fingers]
        reach = np.linalg.norm(frames[:, tips] - frames[:, _PALM].mean(axis=1, keepdims=True), axis=-1).mean(axis=1)
        if np.corrcoef(along, reach)[0, 1] > 0:  # closing brings the tips toward the palm
            along, low, high = -along, -high, -low
        closure = np.clip((along - low) / (high - low), 0.0, 1.0)
        centres = np.linspace(0.0, 1.0, samples)
        half_step = 0.5 / (samples - 1)
        family = np.full((samples, 21, 3), np.nan)
        for index, centre in enumerate(centres):
            near = np.abs(closure - centre) <= half_step
            if near.sum() >= 2:
                family[index] = frames[near].mean(axis=0)
        filled = ~np.isnan(family[:, 0, 0])
        if filled.mean() < _MIN_FILLED_SHARE:
            raise DataError(f"{what}: the frames show {filled.sum()} of {samples} stages between open and closed; "
                            "close the hand slowly and steadily, and record the step again")
        flat = family.reshape(samples, -1)
        for column in range(flat.shape[1]):
            flat[~filled, column] = np.interp(centres[~filled], centres[filled], flat[filled, column])
        return cls(flat.reshape(samples, 21, 3), tuple(fingers))


@dataclass(frozen=True)
class GraspAnchorSettings:
    near_mm: float = 8.0  # within this the robot makes the measured grasp exactly
    far_mm: float = 12.0  # beyond this the grasp plays no part

    def __post_init__(self):
        if not 0.0 <= self.near_mm < self.far_mm:
            raise ConfigError(f"grasp_anchors: need 0 <= near_mm < far_mm, got {self.near_mm} and {self.far_mm}")


@dataclass(frozen=True)
class GraspMatch:
    name: str  # the robot grasp
    closure: float  # 0 (open) .. 1 (closed)
    distance_mm: float
    weight: float  # 0 .. 1, the share of the measured grasp in the robot's target


class GraspAnchors:
    """Measured robot grasps, each with the person's grasp it answers. `robot_paths`: grasp name -> (preshape,
    closed) joint targets; `templates`: grasp name -> the person's grasp (`GraspTemplate`) on the operator's side."""

    def __init__(self, robot_paths: dict[str, GraspPath], templates: dict[str, GraspTemplate],
                 settings: GraspAnchorSettings = GraspAnchorSettings()):
        missing = sorted(set(robot_paths) - set(templates))
        if missing:
            raise ValueError(f"grasp anchors: no human grasp given for {missing}")
        self.settings = settings
        self.robot_paths = {name: (np.asarray(a, float), np.asarray(b, float)) for name, (a, b) in robot_paths.items()}
        self.templates = {name: templates[name] for name in robot_paths}
        self._post_hold = PostHold()
        self._held_grasp: str | None = None

    def match(self, keypoints: np.ndarray) -> GraspMatch | None:
        """The grasp the wrist-frame keypoints (21, 3) come nearest, or None when none is within `far_mm`."""
        nearest = {name: template.nearest(keypoints) for name, template in self.templates.items()}
        name = min(nearest, key=lambda grasp: nearest[grasp][0])
        distance_mm, closure = nearest[name]
        weight = self._weight(distance_mm)
        return GraspMatch(name, closure, distance_mm, weight) if weight > 0.0 else None

    def _weight(self, distance_mm: float) -> float:
        near, far = self.settings.near_mm, self.settings.far_mm
        x = np.clip((far - distance_mm) / (far - near), 0.0, 1.0)
        return float(x * x * (3 - 2 * x))

    def reset(self) -> None:
        self._post_hold.reset()
        self._held_grasp = None

    def shaped(self, solution: np.ndarray, match: GraspMatch | None,
               measured: Callable[[], np.ndarray | None] = lambda: None) -> np.ndarray:
        """The robot's target: the retargeted joints, blended toward the matched grasp at its closure; `measured`
        gives the hand's measured joints (None while unknown), read when a hold starts to open."""
        if match is None or match.name != self._held_grasp:
            self.reset()
        if match is None:
            return solution
        self._held_grasp = match.name
        path = self.robot_paths[match.name]
        grasp = self._post_hold(path[0] + match.closure * (path[1] - path[0]), path, match.closure, measured)
        return solution + match.weight * (grasp - solution)


def fired_shares(templates: dict[str, GraspTemplate], frames, far_mm: float) -> tuple[np.ndarray, dict[str, float]]:
    """Frames (N, 21, 3) against templates: each frame's distance to each template (N, len(templates), mm), and the
    share of frames on which anchors with those templates fire as each (nearest, and within `far_mm`)."""
    distances = np.array([[template.nearest(frame)[0] for template in templates.values()] for frame in frames])
    nearest = np.array(list(templates))[distances.argmin(axis=1)]
    within = distances.min(axis=1) < far_mm
    return distances, {kind: float(np.mean((nearest == kind) & within)) for kind in templates}


def _grasp_points(fingers) -> np.ndarray:
    """The keypoints a grasp is compared on: its fingers' beyond their base joints."""
    return np.array([index for finger in fingers for index in FINGER_CHAINS[finger][1:]])


def _scaled(keypoints: np.ndarray) -> np.ndarray:
    """Keypoints (..., 21, 3) from the wrist, scaled to the reference hand size."""
    points = keypoints - keypoints[..., WRIST:WRIST + 1, :]
    size = np.linalg.norm(points[..., MIDDLE_MCP, :], axis=-1)[..., None, None]
    return points * (_REFERENCE_HAND_M / np.maximum(size, 1e-6))
