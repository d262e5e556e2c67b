"""Grasps that hold: when the operator's hand makes a person's grasp, the robot hand makes its measured grasp.

Retargeting by keypoints reproduces the operator's fingertips, which is not what a robot hand needs to hold an object:
the O6's pinch of the half cube is its thumb opposed to its limit as a post and the fingers curled onto it, a shape
no human pinch maps to (TeleDex gives thumb yaw 0.4 at the pinch's open end, the post needs 1.36 from the start).
The measured grasps (control/hand_grasps.py, held on the grasp rig and in the world) are ground truth for what the
robot must do, so each is anchored to the human grasp it answers (operator/object_grasps.py: a pinch, a wrap), and:

- the operator's keypoints are compared with each human grasp's family of poses, open to closed, in the wrist frame
  scaled to one hand size (RMS over the grasp's fingers' keypoints beyond their base joints);
- the nearest pose gives the grasp's closure (0 open .. 1 closed) and a weight: 1 within `near_mm`, 0 beyond
  `far_mm`, smooth between, so the robot leaves the retargeted shape gradually as the person's hand forms the grasp.
  On the hand model (200 people each: hand size +-8 %, a habitual offset of 0.05 rad on every joint, 1 mm of
  tracker jitter), a person making the grasp is 3.0-7.6 mm from its family (5th-95th percentile, open to closed);
  other poses are far: a thumb-to-ring pinch 16 (12.9 at the 5th percentile), a power grasp round 5 cm 16, the
  relaxed hand 26, the open hand 44, a fist 55 mm (the defaults, 8 and 12 mm, sit between);
- the robot's target is the retargeted joints blended toward the measured grasp's path at that closure.

The solver's own solution stays the warm start of the next frame: leaving a grasp returns to tracking at once.
Opening a grasp from a hold lets go as the analog method does (analog.PostHold: a pinch's thumb post stays where it
is measured, so it cannot spring back into the object).
"""

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..errors import ConfigError
from ..operator.hand_model import keypoints_from_angles
from ..operator.keypoints import FINGER_CHAINS, MIDDLE_MCP, WRIST
from ..operator.object_grasps import HumanGrasp
from .analog import GraspPath, PostHold

_FAMILY_SAMPLES = 41  # closures sampled along each human grasp's family (0.025 apart)
_REFERENCE_HAND_M = 0.09  # the scaled hand's wrist to middle-finger MCP (the average adult's)


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
    """Measured robot grasps, each with the human grasp it answers. `robot_paths`: grasp name -> (preshape, closed)
    joint targets; `human`: grasp name -> the human grasp (right-hand angles; `side` mirrors them)."""

    def __init__(self, robot_paths: dict[str, GraspPath], human: dict[str, HumanGrasp],
                 side: str, settings: GraspAnchorSettings = GraspAnchorSettings()):
        missing = sorted(set(robot_paths) - set(human))
        if missing:
            raise ValueError(f"grasp anchors: no human grasp given for {missing}")
        self.settings = settings
        self.robot_paths = {name: (np.asarray(a, float), np.asarray(b, float)) for name, (a, b) in robot_paths.items()}
        self._post_hold = PostHold()
        self._held_grasp: str | None = None
        self._closures = np.linspace(0.0, 1.0, _FAMILY_SAMPLES)
        self._points: dict[str, np.ndarray] = {}
        self._families: dict[str, np.ndarray] = {}
        for name in robot_paths:
            grasp = human[name]
            self._points[name] = np.array([index for finger in grasp.fingers for index in FINGER_CHAINS[finger][1:]])
            family = keypoints_from_angles(np.stack([grasp.at(c) for c in self._closures]), side)
            self._families[name] = _scaled(family)[:, self._points[name]]

    def match(self, keypoints: np.ndarray) -> GraspMatch | None:
        """The grasp the wrist-frame keypoints (21, 3) come nearest, or None when none is within `far_mm`."""
        scaled = _scaled(keypoints)
        best: GraspMatch | None = None
        for name, family in self._families.items():
            rms_mm = 1000 * np.sqrt(np.mean(np.sum((family - scaled[self._points[name]]) ** 2, axis=-1), axis=-1))
            nearest = int(np.argmin(rms_mm))
            if best is None or rms_mm[nearest] < best.distance_mm:
                best = GraspMatch(name, float(self._closures[nearest]), float(rms_mm[nearest]),
                                  self._weight(float(rms_mm[nearest])))
        return best if best is not None and best.weight > 0.0 else None

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


def _scaled(keypoints: np.ndarray) -> np.ndarray:
    """Keypoints (..., 21, 3) from the wrist, scaled to the reference hand size."""
    points = keypoints - keypoints[..., WRIST:WRIST + 1, :]
    size = np.linalg.norm(points[..., MIDDLE_MCP, :], axis=-1)[..., None, None]
    return points * (_REFERENCE_HAND_M / np.maximum(size, 1e-6))
