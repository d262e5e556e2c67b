"""A hand calibration session: what the operator is asked to do, step by step (teledex-calibrate-hand prompts the
steps live and marks each in the recording), and a person doing it on the hand model (`perform`: what tests and
benchmarks calibrate on where no recorded session of a real person is at hand).

The steps named after a grasp kind (operator/object_grasps.py: pinch, wrap) record the operator's own grasp, which
the grasp anchors then match (retargeting/grasp_anchors.py `GraspTemplate.from_session`).
"""

from dataclasses import dataclass

import numpy as np

from .hand_model import clip_to_human_limits, keypoints_from_angles
from .keypoints import FINGER_NAMES, NUM_CANONICAL_ANGLES
from .object_grasps import GRASP_FINGERS
from .persons import Person
from .poses import FIST, OPEN_HAND, RELAXED_HAND, hand_pose, solve_pinch


@dataclass(frozen=True)
class CalibrationStep:
    name: str
    instruction: str
    seconds: float


CALIBRATION_STEPS = (
    CalibrationStep("pose", "Hold the calibration pose: flat open hand, fingers together, thumb relaxed in the palm "
                            "plane", 3.0),
    CalibrationStep("open_close", "Open and close your hand, three times", 6.0),
    CalibrationStep("finger_pinches", "Pinch your thumb to each fingertip in turn: index, middle, ring, little", 8.0),
    CalibrationStep("thumb_sweep", "Sweep your thumb across the palm to the base of your little finger and back, "
                                   "then spread your fingers wide", 5.0),
    CalibrationStep("pinch", "Pick up a small cube from above as you would: shape your hand round it, squeeze past "
                             "it, open to the shape again; three times, slowly", 8.0),
    CalibrationStep("wrap", "Hold a bottle from the side as you would: shape your hand round it, squeeze past it, "
                            "open to the shape again; three times, slowly", 8.0),
)
GRASP_STEPS = tuple(step.name for step in CALIBRATION_STEPS if step.name in GRASP_FINGERS)

_CALIBRATION_POSE = np.zeros(NUM_CANONICAL_ANGLES)  # the flat hand (hand_model)
_THUMB_ACROSS = hand_pose(thumb=(1.0, 1.3, 0.5, 0.4), index=OPEN_HAND[4:8], middle=OPEN_HAND[8:12],
                          ring=OPEN_HAND[12:16], pinky=OPEN_HAND[16:20])
_SPREAD = hand_pose(thumb=(-0.3, 0.1, 0.0, 0.0), index=(0.0, 0.3, 0.0, 0.0), middle=(0.0, 0.0, 0.0, 0.0),
                    ring=(0.0, 0.25, 0.0, 0.0), pinky=(0.0, 0.45, 0.0, 0.0))
_SHAPING_S = 0.4  # into a grasp's open shape from the relaxed hand, at a grasp step's start (and out at its end)
_POSTURE_DRIFT_RAD = 0.03  # a person's posture differs by this much (std, per joint) from one step to the next


def perform(person: Person, rng: np.random.Generator, rate_hz: float = 30.0, jitter_m: float = 0.001,
            steps=CALIBRATION_STEPS) -> tuple[np.ndarray, dict[str, slice]]:
    """`person` doing the calibration steps: keypoints (N, 21, 3) of a right hand, wrist frame, at `rate_hz`, with a
    tracker's jitter, and where each step's frames are (step name -> slice)."""
    grasps = person.grasps()
    poses: list[np.ndarray] = []
    where: dict[str, slice] = {}
    for step in steps:
        count = int(round(step.seconds * rate_hz))
        phase = np.linspace(0.0, 1.0, count, endpoint=False)
        if step.name == "pose":
            angles = np.repeat(_CALIBRATION_POSE[None], count, axis=0)
        elif step.name == "open_close":
            angles = _between(OPEN_HAND, FIST, _cycles(phase, 3))
        elif step.name == "finger_pinches":
            angles = np.concatenate([_between(RELAXED_HAND, solve_pinch(finger, geometry=person.geometry),
                                              _cycles(np.linspace(0, 1, len(part), endpoint=False), 1))
                                     for part, finger in zip(np.array_split(phase, 4), FINGER_NAMES[1:])])
        elif step.name == "thumb_sweep":
            half = count // 2
            angles = np.concatenate([_between(OPEN_HAND, _THUMB_ACROSS, _cycles(phase[:half] * 2, 1)),
                                     _between(OPEN_HAND, _SPREAD, _cycles(phase[half:] * 2 - 1, 1))])
        elif step.name in grasps:  # into its open shape, open to closed (squeezed a little past) and back, 3 times
            grasp = grasps[step.name]
            shaping = min(count // 4, int(_SHAPING_S * rate_hz))
            closure = 1.05 * _cycles(np.linspace(0.0, 1.0, count - 2 * shaping, endpoint=False), 3)
            angles = np.concatenate([_between(RELAXED_HAND, grasp.open, np.linspace(0, 1, shaping)),
                                     np.stack([grasp.at(c) for c in closure]),
                                     _between(grasp.open, RELAXED_HAND, np.linspace(0, 1, shaping))])
        else:
            raise ValueError(f"calibration step {step.name!r}: perform() knows "
                             f"{[known.name for known in CALIBRATION_STEPS]}")
        drift = rng.normal(0.0, _POSTURE_DRIFT_RAD, NUM_CANONICAL_ANGLES)
        start = sum(len(pose) for pose in poses)
        where[step.name] = slice(start, start + len(angles))
        poses.append(clip_to_human_limits(angles + drift))
    angles = np.concatenate(poses)
    keypoints = keypoints_from_angles(angles, "right", 1.0, person.geometry)
    return keypoints + rng.normal(0.0, jitter_m, keypoints.shape), where


def _cycles(phase: np.ndarray, count: int) -> np.ndarray:
    """0 -> 1 -> 0, `count` times over phase 0..1 (smooth at the turns)."""
    return 0.5 - 0.5 * np.cos(2 * np.pi * count * np.asarray(phase))


def _between(start, end, share) -> np.ndarray:
    share = np.asarray(share, dtype=float)[:, None]
    return np.asarray(start) + share * (np.asarray(end) - np.asarray(start))
