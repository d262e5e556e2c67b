"""The TeleDex retargeter: keypoint alignment with calibrated scaling, smooth pinch coupling, temporal smoothness.

θ* = argmin α_align L_align + α_couple L_couple + α_smooth L_smooth + α_posture L_posture, inside the joint limits:
- L_align pulls every robot keypoint onto the operator's keypoint mapped onto the robot hand: each phalanx scaled
  by its own robot/operator length ratio s and each finger's root shifted by δ (both from the operator's
  calibration, `calibration.py`), or one scale for everything (`hand_scale`);
- L_couple pulls each robot thumb-tip → fingertip vector onto a target weighted by β_i = sigmoid(σ (ρ_i − τ)) of the
  normalised proximity ρ_i = 1 − (|R_H,i| − ρ_min,i)/(ρ_max,i − ρ_min,i) of the operator's thumb and finger (R_H,i
  their vector, ρ_min/ρ_max the calibrated closest/farthest distances): near zero for an open hand, near one in a
  pinch, so pinches close on the robot even when the hands' proportions differ, and the weight changes smoothly
  (no switching jerk). The target slides with β from the aligned tips' vector to a shrunk copy of R_H;
- L_smooth = ‖θ − θ(t−1)‖² and L_posture = ‖θ − θ_open‖² (see `TeleDexSettings`).
Per-keypoint weights within L_align (e.g. fingertips above joints) are in the config.
"""

from dataclasses import dataclass, field

import numpy as np
from scipy.linalg import lapack
from scipy.special import expit

from ..kinematics import KinematicModel
from ..operator.keypoints import FINGER_CHAINS, KEYPOINT_NAMES, NUM_KEYPOINTS, THUMB_TIP, WRIST
from .calibration import HandCalibration
from .costs import JointDeviationCost, KeypointPositionCost, KeypointVectorCost, KinematicState
from .hand_layout import HandKeypointLayout, reference_pose
from .keypoint_kinematics import KeypointKinematics
from .solver import BoxLeastSquaresSolver, SolverSettings

_ONES_3 = np.ones(3)
# The tracking curvature, as a fraction of α_smooth, at which a direction's memory fades half as fast as where
# nothing tracks (`_forgetting`). A hard cut at 0.5 applied to the output cost up to 1.9 mm of tip error on
# dex-retargeting's recorded hand (docs/retargeting.md).
_FREE_CURVATURE_RATIO = 0.1


@dataclass(frozen=True)
class KeypointWeights:
    """w_k within L_align by keypoint kind (the part of the MediaPipe name after the finger)."""

    tip: float = 1.0
    dip: float = 0.2
    pip: float = 0.2
    mcp: float = 0.2
    ip: float = 0.2
    cmc: float = 0.2


@dataclass(frozen=True)
class TeleDexSettings:
    alignment_weight: float = 1.0  # α_align
    coupling_weight: float = 20.0  # α_couple
    smoothness_weight: float = 5e-3  # α_smooth (rad² against m²: 1 mrad of change costs as much as 71 µm of error)
    # Pull toward the open hand: a weak prior that makes the optimum unique where the keypoints leave joints free.
    posture_weight: float = 2e-4
    # Directions of joint space the keypoints barely determine keep whatever the previous frames left there: a
    # glitch would stay for good (a redundant thumb's roll). Each frame the smoothness term remembers the previous
    # solution moved this fraction of the way to the open hand along them (see `_forgetting`), so the solution
    # forgets the path there; well-tracked directions keep their memory, and the output stays the cost's optimum.
    free_direction_reset: float = 0.5
    keypoint_weights: KeypointWeights = field(default_factory=KeypointWeights)
    pinch_sigmoid_steepness: float = 30.0  # σ
    pinch_sigmoid_threshold: float = 0.75  # τ
    pinch_closure: float = 0.5  # pinching target: this fraction of the operator's thumb-finger vector


class TeleDexRetargeter:
    def __init__(self, model: KinematicModel, layout: HandKeypointLayout, calibration: HandCalibration,
                 settings: TeleDexSettings = TeleDexSettings(), solver_settings: SolverSettings = SolverSettings()):
        calibration.check_layout(layout)
        self.settings = settings
        self.kinematics = KeypointKinematics(model, layout.keypoint_frames, layout)
        count = len(layout.keypoint_frames)

        # The calibrated mapping as one linear map of the operator keypoints: p' = T @ p + Δ, with
        # T = L diag(s) (E_h − E_h_prev), E selecting each keypoint and its predecessor on the finger, L summing each
        # finger's segments up to k.
        human = np.array(layout.human_indices)
        human_previous = np.empty(count, dtype=int)
        scales = np.empty((count, 1))
        cumulative = np.zeros((count, count))
        self._offsets = np.zeros((count, 3))
        weights = np.empty(count)
        start = 0
        for finger in layout.fingers:
            span = slice(start, start + len(finger.frames))
            human_previous[span] = (WRIST,) + finger.human_indices[:-1]
            scales[span, 0] = calibration.segment_scales[finger.name]
            cumulative[span, span] = np.tril(np.ones((len(finger.frames),) * 2))
            self._offsets[span] = calibration.root_offsets_m[finger.name]
            weights[span] = [getattr(settings.keypoint_weights, KEYPOINT_NAMES[i].split("_")[1])
                             for i in finger.human_indices]
            start = span.stop
        selection = np.eye(NUM_KEYPOINTS)
        self._target_map = cumulative @ (scales * (selection[human] - selection[human_previous]))  # (K, 21)

        self.alignment = KeypointPositionCost(np.arange(count), settings.alignment_weight * weights)
        self.smoothness = JointDeviationCost(settings.smoothness_weight, np.zeros(len(model.joint_names)))
        self.posture = JointDeviationCost(settings.posture_weight, reference_pose(model))
        terms = [self.alignment, self.smoothness, self.posture]
        self._open_hand, self._lower, self._upper = reference_pose(model), model.lower, model.upper
        self._normal_matrix: np.ndarray | None = None  # JᵀJ of the last solve
        self._identity = np.eye(len(model.joint_names))

        self.coupling = None
        pinch_fingers = [f for f in layout.fingers if f.name != "thumb"] if layout.has_thumb else []
        if pinch_fingers:
            frame_index = {frame: k for k, frame in enumerate(layout.keypoint_frames)}
            thumb_tip = frame_index[layout.fingers[0].frames[-1]]
            self._finger_tips = [frame_index[f.frames[-1]] for f in pinch_fingers]
            self._thumb_tip = thumb_tip
            self.coupling = KeypointVectorCost([thumb_tip] * len(pinch_fingers), self._finger_tips)
            human_tips = [FINGER_CHAINS[f.name][-1] for f in pinch_fingers]
            self._pinch_map = np.eye(NUM_KEYPOINTS)[human_tips] - np.eye(NUM_KEYPOINTS)[THUMB_TIP]  # (F, 21)
            # The pinch weight folded: β = sigmoid(σ (ρ − τ)) with ρ = 1 − (d − ρ_min) / span is sigmoid(a d + b).
            ranges = np.array([calibration.pinch_distance_range_m[f.name] for f in pinch_fingers])
            span = np.maximum(ranges[:, 1] - ranges[:, 0], 1e-3)
            steepness, threshold = settings.pinch_sigmoid_steepness, settings.pinch_sigmoid_threshold
            self._pinch_slope = -steepness / span
            self._pinch_intercept = steepness * (1.0 - threshold + ranges[:, 0] / span)
            terms.insert(1, self.coupling)
        self.solver = BoxLeastSquaresSolver(self.kinematics, terms, model.lower, model.upper,
                                             solver_settings)

    def target_points(self, keypoints: np.ndarray) -> np.ndarray:
        """The operator keypoints (21, 3), wrist frame, scaled and offset onto the robot hand: (K, 3)."""
        return self._target_map @ keypoints + self._offsets

    def pinch_weights(self, keypoints: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The operator's thumb-tip → fingertip vectors R_H (F, 3) and their pinch weights β (F,)."""
        vectors = self._pinch_map @ keypoints
        distances = np.sqrt((vectors * vectors) @ _ONES_3)
        return vectors, expit(self._pinch_slope * distances + self._pinch_intercept)

    def tracking_cost(self, q: np.ndarray) -> float:
        """Alignment + coupling cost of q for the last frame solved (no smoothness)."""
        positions = self.kinematics.positions(q)
        state = KinematicState(q, positions, np.zeros((len(positions), 3, len(q))))
        return self.alignment.value(state) + (self.coupling.value(state) if self.coupling is not None else 0.0)

    def solve(self, keypoints: np.ndarray, q_previous: np.ndarray, remember: bool = True) -> np.ndarray:
        """Joint vector for MediaPipe-21 keypoints (21, 3) in the wrist frame, warm-started at θ(t−1) = q_previous.
        remember=False: a trial solve (the basin check's, from the open hand) that leaves what the next frame
        forgets as the last frame's solve left it."""
        targets = self.target_points(keypoints)
        self.alignment.set_targets(targets)
        if self.coupling is not None:
            vectors, weights = self.pinch_weights(keypoints)
            # Open: the vector between the aligned tip targets (no conflict with L_align, so no jitter where β
            # starts to rise); pinching: the operator's own vector shrunk by pinch_closure, so the robot's pair
            # closes at least as far as the operator's whatever the hands' proportions.
            aligned = targets[self._finger_tips] - targets[self._thumb_tip]
            blend = weights[:, None]
            pinch = (1.0 - blend) * aligned + blend * (self.settings.pinch_closure * vectors)
            self.coupling.set_targets(pinch, self.settings.coupling_weight * weights)
        # θ(t−1) as the smoothness term remembers it: moved toward the open hand along the directions the last
        # frame's tracking barely determined, so memory fades there (the warm start itself stays θ(t−1): the
        # solver's linearisation carries over, and the solution is the optimum of the stated cost)
        self.smoothness.set_reference(self._forgetting(q_previous))
        q, report = self.solver.solve(q_previous)
        if remember:
            self._normal_matrix = report.normal_matrix
        return q

    def reset(self) -> None:
        """Forget the last frame (a new session)."""
        self._normal_matrix = None

    def _forgetting(self, q: np.ndarray) -> np.ndarray:
        """q moved toward the open hand along the directions the last solve's tracking terms barely determined.

        With H the tracking curvature (JᵀJ less the regularisation) and c = _FREE_CURVATURE_RATIO α_smooth, the
        move is reset · c² (H² + c²I)⁻¹ (q − θ_open): along an eigenvector of H with curvature λ, a share
        c² / (λ² + c²) of the reset (all of it where nothing tracks, half at λ = c, 1 % at λ = 10 c), so the share
        changes smoothly as a direction becomes determined; one Cholesky solve, no eigendecomposition."""
        reset = self.settings.free_direction_reset
        if self._normal_matrix is None or reset <= 0:
            return q
        settings = self.settings
        curvature = self._normal_matrix - (settings.smoothness_weight + settings.posture_weight) * self._identity
        free_curvature = _FREE_CURVATURE_RATIO * settings.smoothness_weight
        system = curvature @ curvature + free_curvature ** 2 * self._identity
        _, share, info = lapack.dposv(system, free_curvature ** 2 * (q - self._open_hand))
        if info != 0:
            return q
        moved = q - reset * share
        return np.minimum(np.maximum(moved, self._lower), self._upper)
