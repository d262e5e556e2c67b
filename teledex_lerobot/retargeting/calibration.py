"""Per-operator, per-hand calibration of the TeleDex mapping: segment scales s, root offsets δ, pinch ranges ρ.

The operator holds the calibration pose (flat open hand, fingers together, thumb relaxed in the palm plane: the pose
the robot URDFs have at zero angles), then opens, closes and pinches each finger. From the recording:

- s_ij = |F_j(θ0) − F_{j−1}(θ0)| / |p̄_j − p̄_{j−1}| for consecutive keypoints of finger i, the first segment
  starting at the wrist; p̄ is the median of the calibration-pose frames, F the robot keypoints at θ0 (the reference
  pose);
- δ_i = F_root(θ0) − (p̄_wrist + s_i0 (p̄_root − p̄_wrist)). The TeleDex paper subtracts the unscaled p̄_root,
  which only lands the operator's root on the robot's when s_i0 = 1; subtracting the scaled point makes the
  calibration pose map onto the robot's root keypoints exactly, whatever the scale;
- ρ_min,i / ρ_max,i: the 0.5th / 98th percentile of the thumb-tip to fingertip distance over the whole recording
  A static pose alone gives ρ_min = 0 and ρ_max = the distance in that pose.
- for direct joint mapping: the 2nd / 98th percentile of every canonical hand angle (the operator's own range);
- coverage (keypoint retargeting): the 2nd / 98th percentile of every robot joint over the recording retargeted with
  the above (`HandRetargeter.joint_ranges`); the retargeter stretches that range onto the joint's limits, so the
  operator's whole range of motion reaches the robot's (a thumb whose opposition the operator's keypoints map to
  0.83 of 1.43 rad reaches 1.43), and widens it in use where the operator moves beyond it (never clipped);
- grasp templates: the operator's own pinch and wrap, open to closed, from the session's steps in which they made
  them (`GraspTemplate.from_session`): the grasp anchors match the operator's hand against these, not the model's.

Without an operator calibration, `default_calibration` uses the average adult hand of `operator.hand_model`.
"""

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import platformdirs
import yaml

from ..errors import ConfigError, DataError
from ..operator.hand_model import angles_from_keypoints, keypoints_from_angles
from ..operator.keypoints import CANONICAL_ANGLE_NAMES, FINGER_CHAINS, NUM_CANONICAL_ANGLES, THUMB_TIP, WRIST
from ..operator.object_grasps import GRASP_FINGERS
from .grasp_anchors import GraspTemplate
from .hand_layout import HandKeypointLayout
from .keypoint_kinematics import KeypointKinematics

FORMAT = "teledex-hand-calibration/1"
OPERATOR_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}")  # one folder name: no "/", no ".."
_PERCENTILES = (2.0, 98.0)
# A pinch to one finger fills a few per cent of a session or less (the little finger's ~1 %): its closest approach is
# the lowest half per cent of the distances, where the 2nd percentile put the little finger's at 29 mm and made the
# coupling half-active 6 cm apart.
_PINCH_PERCENTILES = (0.5, 98.0)
_MIN_PINCH_RANGE_M = 0.01  # below this the recording had no open/close motion: fall back to the static rule
CALIBRATION_POSE_ANGLES_RAD = np.zeros(NUM_CANONICAL_ANGLES)  # the flat hand (see hand_model)


@dataclass
class HandCalibration:
    operator: str
    hand: str
    side: str
    segment_scales: dict[str, list[float]]  # finger -> s per robot keypoint (the segment ending at it)
    root_offsets_m: dict[str, list[float]]  # finger -> δ
    pinch_distance_range_m: dict[str, list[float]]  # non-thumb finger -> [ρ_min, ρ_max]
    canonical_angle_ranges_rad: dict[str, list[float]] = field(default_factory=dict)  # for joint mapping
    joint_ranges_rad: dict[str, list[float]] = field(default_factory=dict)  # robot joint -> retargeted range
    # grasp kind (pinch, wrap) -> {"fingers": [...], "keypoints": (K, 21, 3) open to closed, scaled wrist frame}
    grasp_templates: dict[str, dict] = field(default_factory=dict)

    def save(self, path) -> None:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        data = {"format": FORMAT} | {key: _plain(value) for key, value in vars(self).items()}
        path.write_text(yaml.safe_dump(data, sort_keys=False, default_flow_style=None))  # a point per line

    @classmethod
    def load(cls, path) -> "HandCalibration":
        fix = "give a calibration written by teledex-calibrate-hand, or run it again"
        try:
            data = yaml.safe_load(Path(path).read_text())
        except (OSError, yaml.YAMLError, UnicodeDecodeError) as error:
            raise DataError(f"Cannot read calibration {path}: {' '.join(str(error).split())}; {fix}") from error
        if not isinstance(data, dict) or data.pop("format", None) != FORMAT:
            raise DataError(f"{path}: not a {FORMAT} file; {fix}")
        try:
            return cls(**data)
        except TypeError as error:
            raise DataError(f"{path}: {error}; {fix}") from error

    def templates(self) -> dict[str, GraspTemplate]:
        """The operator's own grasps, by kind; DataError naming the kind when the file's template is damaged."""
        templates = {}
        for kind, template in self.grasp_templates.items():
            try:
                templates[kind] = GraspTemplate(np.asarray(template["keypoints"], dtype=float),
                                                tuple(template["fingers"]))
            except (KeyError, TypeError, ValueError) as error:
                raise DataError(f"calibration {self.operator!r} ({self.hand}): its {kind} grasp template cannot be "
                                f"read ({error}); re-run teledex-calibrate-hand") from error
        return templates

    def check_layout(self, layout: HandKeypointLayout, source: str = "calibration") -> None:
        """Raise DataError if this calibration was made for other fingers/keypoints than `layout` has."""
        for finger in layout.fingers:
            scales = self.segment_scales.get(finger.name)
            if scales is None or len(scales) != len(finger.frames):
                raise DataError(f"{source} ({self.operator}, {self.hand}) does not match this hand's finger "
                                f"{finger.name!r} ({len(finger.frames)} keypoints); re-run teledex-calibrate-hand")


def calibrate(layout: HandKeypointLayout, kinematics: KeypointKinematics, robot_pose: np.ndarray, pose_keypoints,
              motion_keypoints=None, *, operator: str, hand: str, side: str,
              grasp_keypoints: dict | None = None) -> HandCalibration:
    """A calibration from calibration-pose frames (M, 21, 3) and, optionally, an open/close/pinch recording and
    the frames of the steps in which the operator made each grasp (kind -> (N, 21, 3))."""
    pose_keypoints = np.asarray(pose_keypoints, dtype=float).reshape(-1, 21, 3)
    human = np.median(pose_keypoints - pose_keypoints[:, WRIST:WRIST + 1], axis=0)
    robot = dict(zip(kinematics.frames, kinematics.positions(robot_pose)))
    scales, offsets = {}, {}
    for finger in layout.fingers:
        robot_points = [np.zeros(3)] + [robot[frame] for frame in finger.frames]
        human_points = [human[WRIST]] + [human[i] for i in finger.human_indices]
        robot_lengths = np.linalg.norm(np.diff(robot_points, axis=0), axis=1)
        human_lengths = np.maximum(np.linalg.norm(np.diff(human_points, axis=0), axis=1), 1e-6)
        scales[finger.name] = (robot_lengths / human_lengths).tolist()
        scaled_root = human[WRIST] + scales[finger.name][0] * (human_points[1] - human[WRIST])
        offsets[finger.name] = (robot_points[1] - scaled_root).tolist()

    recording = pose_keypoints if motion_keypoints is None else np.concatenate(
        [pose_keypoints, np.asarray(motion_keypoints, dtype=float).reshape(-1, 21, 3)])
    pinch_ranges = {}
    for finger in layout.fingers:
        if finger.name == "thumb":
            continue
        tip = FINGER_CHAINS[finger.name][-1]
        distances = np.linalg.norm(recording[:, tip] - recording[:, THUMB_TIP], axis=-1)
        low, high = np.percentile(distances, _PINCH_PERCENTILES)
        if high - low < _MIN_PINCH_RANGE_M:
            low, high = 0.0, float(np.linalg.norm(human[tip] - human[THUMB_TIP]))
        pinch_ranges[finger.name] = [float(low), float(high)]

    angle_ranges = canonical_angle_ranges(angles_from_keypoints(recording, side))
    templates = {}
    for kind, frames in (grasp_keypoints or {}).items():
        if kind not in GRASP_FINGERS:
            raise ConfigError(f"grasp template {kind!r}: a person's grasps are {sorted(GRASP_FINGERS)}")
        template = GraspTemplate.from_session(frames, GRASP_FINGERS[kind], what=f"the {kind} step")
        templates[kind] = {"fingers": list(template.fingers), "keypoints": np.round(template.keypoints, 4)}
    return HandCalibration(operator, hand, side, scales, offsets, pinch_ranges, angle_ranges,
                           grasp_templates=templates)


def calibrate_session(layout: HandKeypointLayout, kinematics: KeypointKinematics, robot_pose: np.ndarray, keypoints,
                      steps: dict[str, slice], *, operator: str, hand: str, side: str) -> HandCalibration:
    """A calibration from a session whose steps are known (name -> slice of the keypoints (N, 21, 3): the steps of
    operator/calibration_session.py, marked by a live session or performed): the pose step as the calibration pose,
    the whole session as the motion, each grasp step as the operator's template."""
    keypoints = np.asarray(keypoints, dtype=float)
    grasps = {kind: keypoints[steps[kind]] for kind in GRASP_FINGERS if kind in steps}
    return calibrate(layout, kinematics, robot_pose, keypoints[steps["pose"]], keypoints, operator=operator, hand=hand,
                     side=side, grasp_keypoints=grasps)


def canonical_angle_ranges(angles: np.ndarray) -> dict[str, list[float]]:
    """The operator's own range of every canonical hand angle: the 2nd to 98th percentile over a recording."""
    low, high = np.percentile(np.asarray(angles, dtype=float), _PERCENTILES, axis=0)
    return {name: [float(a), float(b)] for name, a, b in zip(CANONICAL_ANGLE_NAMES, low, high, strict=True)}


def calibrations_dir() -> Path:
    """Where calibrations are kept: the user's data folder (never inside the installed package);
    TELEDEX_CALIBRATIONS_DIR overrides it."""
    override = os.environ.get("TELEDEX_CALIBRATIONS_DIR")
    return Path(override) if override else Path(platformdirs.user_data_dir("teledex")) / "calibrations"


def operator_dir(operator: str) -> Path:
    """An operator's calibration folder; the name is one folder name, so no calibration is written or read elsewhere."""
    if not OPERATOR_NAME.fullmatch(operator):
        raise ConfigError(f"operator name {operator!r}: use letters, digits, '-', '_' and '.' (not first), e.g. alice "
                          "or station-2_bob; a calibration elsewhere is given as its .yaml path")
    return calibrations_dir() / operator


def calibration_file(operator_or_path: str, hand: str, side: str) -> Path:
    """A calibration file path (.yaml), or an operator's calibration of this hand and side by the operator's name."""
    if operator_or_path.endswith((".yaml", ".yml")):
        return Path(operator_or_path).expanduser()
    path = operator_dir(operator_or_path) / f"{hand}_{side}.yaml"
    if not path.is_file():
        known = sorted(p.name for p in calibrations_dir().glob("*") if p.is_dir())
        raise ConfigError(f"No calibration of operator {operator_or_path!r} for {hand} ({side}) in "
                          f"{calibrations_dir()} (operators there: {', '.join(known) or 'none'}): run "
                          "teledex-calibrate-hand, or give a .yaml path")
    return path


def default_calibration(layout: HandKeypointLayout, kinematics: KeypointKinematics, robot_pose: np.ndarray, *,
                        hand: str, side: str) -> HandCalibration:
    """The calibration of the average adult hand (`operator.hand_model.AVERAGE_ADULT_HAND`), static pose only."""
    pose = keypoints_from_angles(CALIBRATION_POSE_ANGLES_RAD, side)
    calibration = calibrate(layout, kinematics, robot_pose, pose, operator="average_adult", hand=hand, side=side)
    calibration.canonical_angle_ranges_rad = {}  # a single pose says nothing about the range of motion
    return calibration


def uniform_calibration(layout: HandKeypointLayout, kinematics: KeypointKinematics, robot_pose: np.ndarray,
                        scale: float, *, hand: str, side: str) -> HandCalibration:
    """One scale for every segment and no root offsets: the targets are the operator's keypoints times `scale`.

    What to use when fingertips must match a globally scaled human hand (e.g. to compare with vector retargeting
    at one stated scale); the pinch ranges are those of the average adult hand.
    """
    calibration = default_calibration(layout, kinematics, robot_pose, hand=hand, side=side)
    calibration.operator = f"uniform_scale_{scale:g}"
    calibration.segment_scales = {f.name: [scale] * len(f.frames) for f in layout.fingers}
    calibration.root_offsets_m = {f.name: [0.0, 0.0, 0.0] for f in layout.fingers}
    return calibration


def _plain(value):
    """YAML-safe builtin types."""
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_plain(item) for item in value]
    if isinstance(value, np.generic):
        return value.item()
    return value
