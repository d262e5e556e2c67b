"""The public retargeter: any hand URDF + a method + a side -> joint vectors from the operator's hand, failure-safe.

Every hand method is an engine behind this one class (as dex-retargeting's SeqRetargeting wraps any optimizer), so
every input gets the same checks and failure handling:

    retargeter = build_retargeter("hand.urdf", method="teledex", side="right")
    q = retargeter.retarget(keypoints)            # teledex, dexpilot, joint_mapping: (21, 3) -> (n,)
    retargeter.grasp_match                        # with grasp anchors: the measured grasp the hand is making
    q = retargeter.retarget_angles(angles)        # joint_mapping: canonical human angles (20,), e.g. a glove
    q = retargeter.retarget_closure(closure)      # analog: 0..1 along the chosen grasp (select_grasp steps on)
    qs, ok = retargeter.retarget_sequence(seq)    # (N, 21, 3) -> (N, n), (N,) bool
    tips = retargeter.fingertip_positions(q)      # (F, 3), order retargeter.finger_names

q is in the order retargeter.joint_names. Failure handling (the control loop never sees an exception from here): an
input that is missing (None), has the wrong shape or contains NaN/inf, keypoints that are not a plausible human hand
(`operator.plausibility`: all zeros, one point, millimetres, a mirrored hand, ...), angles far outside the human
limits, a closure outside 0..1, or an engine that fails or returns non-finite joints is not retargeted. The last good
output is held, `last_frame_ok` is False, and the event is counted in `failures` by reason (warned once per reason).
Outputs are always inside the joint limits. Keypoint frames: the warm start is the last unfiltered solution; the
low-pass filter acts on the output only. Angles and closures are not filtered.

Coverage (teledex): a calibration with joint ranges (the operator's session retargeted, `joint_ranges`)
has each joint's range stretched onto its limits, so the operator's whole range of motion reaches the robot's. A
range only widens while in use (motion beyond the session's), so the stretch never narrows what the solve reaches.
Grasp anchors (grasp_anchors.py): when the operator's hand makes a person's pinch or wrap, the output is blended
toward the robot's measured grasp at the same closure. Both act after the solve, before the limits and the filter;
the solve's own solution stays the next frame's warm start.
"""

import dataclasses
import logging
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ..errors import ConfigError, DataError
from ..geometry.sides import check_side
from ..kinematics import KinematicModel, resolve_urdf
from ..operator.hand_model import HUMAN_ANGLE_LIMITS_RAD
from ..operator.keypoints import CANONICAL_ANGLE_NAMES, NUM_CANONICAL_ANGLES
from ..operator.plausibility import implausibility
from .analog import FIST, GraspChoice, GraspPath
from .calibration import HandCalibration, default_calibration, uniform_calibration
from .config import RetargetingConfig
from .conventions import to_internal
from .dexpilot import DexPilotRetargeter
from .grasp_anchors import GraspAnchors, GraspMatch
from .hand_layout import HandednessError, HandKeypointLayout, build_layout, reference_pose
from .joint_mapping import JointMappingRetargeter, joint_map_path, load_joint_map, with_operator_ranges
from .keypoint_kinematics import KeypointKinematics
from .output_filter import CascadedLowPass
from .teledex import TeleDexRetargeter

logger = logging.getLogger(__name__)

METHODS = ("teledex", "dexpilot", "joint_mapping", "analog")
_INPUTS = {"keypoints": ("teledex", "dexpilot", "joint_mapping"), "angles": ("joint_mapping",), "closure": ("analog",)}
_BASIN_SWITCH_RATIO = 0.8  # a fresh solve replaces the warm-started one when it tracks with 20 % less cost
# Gloves and keypoints give canonical angles clipped to the human limits: far beyond them (degrees given as radians,
# another convention) is not a hand.
_ANGLE_MARGIN_RAD = 0.5
_CLOSURE_MARGIN = 0.01  # a trigger a hair outside 0..1 is rounding (clipped); farther is not a closure
_COVERAGE_PERCENTILES = (2.0, 98.0)
# A joint the session barely moved is not stretched: its range says nothing (and stretching would magnify noise).
_MIN_COVERED_RANGE_RAD = 0.05
_MIRROR = np.array([-1.0, 1.0, 1.0])  # a hand onto one of the other side: across the palm (x), in the wrist frame


def _hand_layout(model: KinematicModel, side: str, config: RetargetingConfig) -> tuple[HandKeypointLayout, str]:
    """The robot hand's keypoints and its side: a hand of the other side than the operator's is read on its own
    (never as the operator's: its palm would face away)."""
    def layout(on_side: str) -> HandKeypointLayout:
        return build_layout(model, on_side, config.keypoint_frames, config.base_rotation, config.fingertip_offsets_m)

    try:
        return layout(side), side
    except HandednessError as err:
        logger.info("%s is a %s hand and the operator's is %s: the operator's hand is mirrored onto it",
                    model.name, err.side, side)
        return layout(err.side), err.side


class HandRetargeter:
    def __init__(self, model: KinematicModel, method: str, side: str, config: RetargetingConfig,
                 calibration: HandCalibration | None = None, grasps: dict[str, GraspPath | None] | None = None,
                 anchors: GraspAnchors | None = None):
        """`side`: the operator's hand. `grasps` (analog): the operator's grasps in order, name -> path over
        `joint_names` or None for the fist through the joint map (control/hand_grasps.py `grasp_paths`); default
        the fist only. `anchors` (teledex, dexpilot): measured grasps the hand makes when the operator's hand makes
        the matching human grasp (control/hand_grasps.py `grasp_anchors`)."""
        if method not in METHODS:
            raise ConfigError(f"unknown retargeting method {method!r}; use one of {METHODS}")
        self.model = model
        self.method = method
        self.side = check_side(side)
        self.config = config
        self.joint_names: list[str] = list(model.joint_names)
        self.lower, self.upper = model.lower.copy(), model.upper.copy()
        self.layout, hand_side = _hand_layout(model, side, config)
        # the keypoint methods match positions: the operator's hand mirrored across the palm onto a hand of the other
        # side (its calibration pose the hand's side's); joint mapping reads the operator's own angles
        self.mirrored = hand_side != side and method in ("teledex", "dexpilot")
        self.hand_name = hand_name(model)
        self._tips = KeypointKinematics(model, self.layout.fingertip_frames, self.layout)
        self.reference_pose = reference_pose(model)
        if calibration is None:
            kinematics = KeypointKinematics(model, self.layout.keypoint_frames, self.layout)
            if config.hand_scale is None:
                calibration = default_calibration(self.layout, kinematics, self.reference_pose, hand=self.hand_name,
                                                  side=hand_side)
            else:
                calibration = uniform_calibration(self.layout, kinematics, self.reference_pose, config.hand_scale,
                                                  hand=self.hand_name, side=hand_side)
        self.calibration = calibration
        # the ranges are TeleDex's (teledex-calibrate-hand measures them so); other methods have ranges of their own
        self._covered = self._covered_ranges(calibration.joint_ranges_rad) if method == "teledex" else None
        self.engine = self._engine(method, config, calibration, grasps or {FIST: None})
        self.grasps: GraspChoice | None = self.engine if method == "analog" else None
        if anchors is not None and method not in ("teledex", "dexpilot"):
            raise ValueError(f"grasp anchors act on keypoint retargeting (teledex, dexpilot), not {method!r}")
        self.anchors = anchors
        self.grasp_match: GraspMatch | None = None
        self._filter = CascadedLowPass(config.low_pass_alpha, config.low_pass_order)
        self.failures: Counter = Counter()
        self.frames_retargeted = 0
        self.basin_switches = 0
        self.last_frame_ok = True
        self.reset()

    @property
    def finger_names(self) -> tuple[str, ...]:
        return self.layout.finger_names

    def reset(self) -> None:
        """Forget the motion so far: the next frame starts from the open hand and is not filtered."""
        self._solution = self.reference_pose.copy()
        self._output: np.ndarray | None = None
        self.grasp_match = None
        self._filter.reset()
        self._frames_since_basin_check = 0
        if hasattr(self.engine, "reset"):
            self.engine.reset()
        if self.anchors is not None:
            self.anchors.reset()

    def retarget(self, keypoints, measured: Callable[[], np.ndarray | None] = lambda: None) -> np.ndarray:
        """Joint vector (n,) for one hand frame in the configured convention; holds the last output on failure.
        `measured` (grasp anchors): the hand's measured joints in `joint_names` order, read when a hold opens."""
        self._start_frame("keypoints")
        if keypoints is None:
            return self._hold("hand_lost")
        try:
            points = to_internal(keypoints, self.config.input_convention, self.config.input_frame, self.side)
        except ValueError as error:
            return self._hold("bad_shape" if "shape" in str(error) else "non_finite_input")
        problem = implausibility(points, self.side)
        if problem is not None:
            return self._hold(f"implausible_{problem[0]}", problem[1])
        solved = points * _MIRROR if self.mirrored else points  # the operator's grasp is matched unmirrored
        return self._accept(lambda: self._solve(solved), filtered=True,
                            shape=lambda q: self._shaped(points, q, measured))

    def _shaped(self, points: np.ndarray, solution: np.ndarray, measured) -> np.ndarray:
        """The target from the solve: coverage stretched, then blended toward a grasp the operator is making."""
        if self._covered is not None:
            joints, low, high = self._covered
            # motion beyond the session's range widens the range (never clipped at the limit): the stretch's slope
            # stays >= 1, so it never lowers a joint's reach; the output is continuous (the new end maps to the limit)
            np.minimum(low, solution[joints], out=low)
            np.maximum(high, solution[joints], out=high)
            solution = solution.copy()
            solution[joints] = self.lower[joints] + (solution[joints] - low) / (high - low) * \
                (self.upper[joints] - self.lower[joints])
        if self.anchors is None:
            return solution
        self.grasp_match = self.anchors.match(points)
        return self.anchors.shaped(solution, self.grasp_match, measured)

    def _covered_ranges(self, ranges: dict[str, list[float]]) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """The joints to stretch (indices) with their calibrated output ranges (low, high); None if none. Joints
        without a range, or one too narrow to say anything, stay as solved (a joint locked by lower == upper too)."""
        unknown = sorted(set(ranges) - set(self.joint_names))
        if unknown:
            raise DataError(f"calibration {self.calibration.operator!r}: joint ranges for {unknown}, which "
                            f"{self.hand_name} does not have; re-run teledex-calibrate-hand for this hand")
        stretched = [(index, *ranges[joint]) for index, joint in enumerate(self.joint_names)
                     if joint in ranges and ranges[joint][1] - ranges[joint][0] >= _MIN_COVERED_RANGE_RAD]
        if not stretched:
            return None
        joints, low, high = (np.array(column) for column in zip(*stretched, strict=True))
        return joints.astype(int), low.astype(float), high.astype(float)

    def joint_ranges(self, keypoints) -> dict[str, list[float]]:
        """Each joint's range (2nd to 98th percentile) over a session of keypoint frames (N, 21, 3) retargeted
        without coverage or anchors: what a calibration stretches onto the limits."""
        plain = HandRetargeter(self.model, self.method, self.side, self.config,
                               dataclasses.replace(self.calibration, joint_ranges_rad={}))
        joints, ok = plain.retarget_sequence(keypoints)
        if not ok.any():
            raise DataError("no frame of the session could be retargeted (see the warnings); record it again")
        low, high = np.percentile(joints[ok], _COVERAGE_PERCENTILES, axis=0)
        return {joint: [float(a), float(b)] for joint, a, b in zip(self.joint_names, low, high, strict=True)}

    def retarget_angles(self, canonical_angles) -> np.ndarray:
        """joint_mapping: joint vector for canonical human angles (20,) (a glove), with the same safety."""
        self._start_frame("angles")
        if canonical_angles is None:
            return self._hold("hand_lost")
        angles = np.asarray(canonical_angles, dtype=float)
        if angles.shape != (NUM_CANONICAL_ANGLES,):
            return self._hold("bad_shape", f"{angles.shape} angles")
        if not np.isfinite(angles).all():
            return self._hold("non_finite_input")
        outside = np.flatnonzero((angles < HUMAN_ANGLE_LIMITS_RAD[:, 0] - _ANGLE_MARGIN_RAD)
                                 | (angles > HUMAN_ANGLE_LIMITS_RAD[:, 1] + _ANGLE_MARGIN_RAD))
        if outside.size:
            first = outside[0]
            return self._hold("implausible_angles", f"{CANONICAL_ANGLE_NAMES[first]} = {angles[first]:.2f} rad")
        return self._accept(lambda: self.engine.map_angles(angles), filtered=False)

    def retarget_closure(self, closure, measured: Callable[[], np.ndarray | None] = lambda: None) -> np.ndarray:
        """analog: joint vector for a closure 0..1 along the chosen grasp, with the same safety; `measured` gives the
        hand's measured joints in `joint_names` order (None while unknown), read when a hold starts to open."""
        self._start_frame("closure")
        if closure is None:
            return self._hold("hand_lost")
        value = np.asarray(closure, dtype=float)
        if value.shape != ():
            return self._hold("bad_shape", f"closure of shape {value.shape}")
        if not np.isfinite(value):
            return self._hold("non_finite_input")
        if not -_CLOSURE_MARGIN <= value <= 1.0 + _CLOSURE_MARGIN:
            return self._hold("implausible_closure", f"{float(value):g}, not in 0..1")
        return self._accept(lambda: self.engine.close(float(value), measured), filtered=False)

    def select_grasp(self, pressed: bool) -> None:
        """analog: the grasp selection button's state this tick (its press steps to the next grasp)."""
        if self.grasps is None:
            raise TypeError(f"{self.method!r} retargeting has no grasps to select; analog has")
        self.grasps.select(pressed)

    def _start_frame(self, given: str) -> None:
        """Count a frame of this input kind; a kind the method does not take is a programming error."""
        if self.method not in _INPUTS[given]:
            raise TypeError(f"{self.method!r} retargeting takes no {given}; "
                            f"{given} drive {' / '.join(_INPUTS[given])}")
        self.frames_retargeted += 1

    def _solve(self, points: np.ndarray) -> np.ndarray:
        solution = self.engine.solve(points, self._solution)
        self._frames_since_basin_check += 1
        if (self._frames_since_basin_check >= self.config.basin_check_period > 0
                and hasattr(self.engine, "tracking_cost")):
            solution = self._best_basin(points, solution)
        return solution

    def _accept(self, solve: Callable[[], np.ndarray], filtered: bool,
                shape: Callable[[np.ndarray], np.ndarray] = lambda q: q) -> np.ndarray:
        """The engine's joints for this input (the next frame's warm start), then `shape`d into the target, inside
        the limits (low-pass filtered if `filtered`), or the held ones if it fails."""
        try:
            solution = solve()
        except Exception:  # noqa: BLE001 - the control loop must survive any engine failure; it is counted
            logger.debug("retargeting engine failed", exc_info=True)
            return self._hold("solver_error")
        if not np.isfinite(solution).all():
            return self._hold("non_finite_solution")
        self._solution = np.minimum(np.maximum(solution, self.lower), self.upper)
        target = np.minimum(np.maximum(shape(self._solution), self.lower), self.upper)
        if filtered:
            self._output = self._filter(target)
        else:  # a later keypoint frame starts the filter afresh
            self._filter.reset()
            self._output = target
        self.last_frame_ok = True
        return self._output.copy()

    def _best_basin(self, points: np.ndarray, warm: np.ndarray) -> np.ndarray:
        """The warm-started solution, or a solve from the open hand if that tracks the frame clearly better.

        A warm start keeps the previous frame's basin; after a glitch (a plausible but wrong frame) a finger can stay
        in another local minimum for good. Every `basin_check_period` frames a second solve from the open hand
        competes on the tracking terms alone (not the smoothness term, which favours staying).
        """
        self._frames_since_basin_check = 0
        fresh = self.engine.solve(points, self.reference_pose, remember=False)
        if self.engine.tracking_cost(fresh) < _BASIN_SWITCH_RATIO * self.engine.tracking_cost(warm):
            self.basin_switches += 1
            return fresh
        return warm

    def retarget_sequence(self, keypoints) -> tuple[np.ndarray, np.ndarray]:
        """(N, n) joint vectors and (N,) ok flags for a sequence of frames, in order (warm-started, filtered)."""
        joints, ok = [], []
        for frame in keypoints:
            joints.append(self.retarget(frame))
            ok.append(self.last_frame_ok)
        return np.array(joints).reshape(-1, len(self.joint_names)), np.array(ok, dtype=bool)

    def fingertip_positions(self, q) -> np.ndarray:
        """(F, 3) fingertip positions for joint vector q, metres, in the operator-aligned hand base frame."""
        return self._tips.positions(np.asarray(q, dtype=float))

    def _hold(self, reason: str, detail: str = "") -> np.ndarray:
        self.failures[reason] += 1
        self.last_frame_ok = False
        if self.failures[reason] == 1:
            logger.warning("%s retargeting: %s%s; holding the last target (counted in .failures)", self.method,
                           reason, f" ({detail})" if detail else "")
        held = self._output if self._output is not None else self._solution
        return held.copy()

    def _engine(self, method: str, config: RetargetingConfig, calibration: HandCalibration,
                grasps: dict[str, GraspPath | None]):
        if method == "teledex":
            return TeleDexRetargeter(self.model, self.layout, calibration, config.teledex, config.solver)
        if method == "dexpilot":
            return DexPilotRetargeter(self.model, self.layout, hand_size_ratio(calibration),
                                      config.dexpilot, config.solver)
        # the map of the robot hand's side (the URDF's), which need not be the operator's
        path = config.joint_map or joint_map_path(self.hand_name, _name_and_side(self.model)[1] or self.side)
        joint_map = with_operator_ranges(load_joint_map(path, self.joint_names, self.lower, self.upper),
                                         calibration.canonical_angle_ranges_rad)
        if method == "analog":
            return GraspChoice(grasps, joint_map)
        return JointMappingRetargeter(joint_map, self.side)


def build_retargeter(urdf, method: str = "teledex", side: str = "right", config=None,
                     calibration=None) -> HandRetargeter:
    """A retargeter for the hand in `urdf` (path, or a built-in hand name such as "linkerhand_l20").

    config: None, a dict, a YAML path or a RetargetingConfig (see config.py). calibration: None (average adult
    hand), a HandCalibration, or the path of a file written by teledex-calibrate-hand.
    """
    model = KinematicModel.from_urdf(resolve_urdf(str(urdf), side))
    if isinstance(calibration, (str, Path)):
        calibration = HandCalibration.load(calibration)
    return HandRetargeter(model, method, side, RetargetingConfig.load(config), calibration)


def hand_name(model: KinematicModel) -> str:
    """The model name without its side suffix: linkerhand_l20_right -> linkerhand_l20."""
    return _name_and_side(model)[0]


def _name_and_side(model: KinematicModel) -> tuple[str, str | None]:
    """The URDF's name and side: linkerhand_l20_right -> (linkerhand_l20, right); no side suffix -> (name, None)."""
    stem = Path(model.description.source).stem
    for side in ("right", "left"):
        if stem.endswith(f"_{side}"):
            return stem[: -len(side) - 1], side
    return stem, None


def hand_size_ratio(calibration: HandCalibration) -> float:
    """Robot/operator hand size: the mean of the calibrated segment scales of the non-thumb fingers."""
    scales = [s for finger, values in calibration.segment_scales.items() if finger != "thumb" for s in values]
    return float(np.mean(scales)) if scales else 1.0


