"""DexPilot task-space vector retargeting (Handa et al., "DexPilot", ICRA 2020).

C(q) = ½ Σ_i s(d_i) ‖r_i(q) − f(d_i) r̂_i‖² + γ ‖q‖², over the vectors
- S1: from each primary (non-thumb) fingertip to the thumb tip,
- S2: between two primary fingertips,
- and from the wrist to every fingertip,
with d_i = |r_i| on the operator's hand and
    s = 1, f = β d         when d_i > ε (track the scaled vector),
    s = 200, f = η1       for S1 when d_i ≤ ε (pinch: thumb and finger meet, η1 = 0.1 mm),
    s = 400, f = η2       for S2 when both its fingers pinch the thumb (keep them η2 = 30 mm apart).
γ pulls toward the open hand (q = 0 clipped into the limits). Options: the paper's distal = medial joint constraint
(`tied_joints`), and a release distance above ε for a hysteresis on the switching (the paper has none).
Warm start and the output low-pass filter are the retargeter's (see `retargeter.py`).
"""

from dataclasses import dataclass, field
from itertools import combinations

import numpy as np

from ..errors import ModelError
from ..kinematics import KinematicModel
from ..operator.keypoints import FINGER_CHAINS, WRIST
from .costs import JointDeviationCost, KeypointVectorCost
from .hand_layout import HandKeypointLayout, reference_pose
from .keypoint_kinematics import WRIST_FRAME, KeypointKinematics
from .solver import BoxLeastSquaresSolver, SolverSettings


@dataclass(frozen=True)
class DexPilotSettings:
    vector_scale: float | None = None  # β; None = robot/operator hand size from the calibration (paper: 1.6)
    switch_distance_m: float = 0.03  # ε
    release_distance_m: float = 0.03  # > ε adds hysteresis; = ε switches as the paper does
    thumb_finger_weight: float = 200.0  # s for S1 when switched
    finger_finger_weight: float = 400.0  # s for S2 when switched
    thumb_finger_distance_m: float = 1e-4  # η1
    finger_finger_distance_m: float = 3e-2  # η2
    regularization: float = 2.5e-3  # γ
    tied_joints: dict[str, str] = field(default_factory=dict)  # {distal joint: medial joint}: q_distal = q_medial


class DexPilotRetargeter:
    def __init__(self, model: KinematicModel, layout: HandKeypointLayout, vector_scale: float,
                 settings: DexPilotSettings = DexPilotSettings(), solver_settings: SolverSettings = SolverSettings()):
        if not layout.has_thumb or len(layout.fingers) < 2:
            raise ModelError(f"{model.name}: DexPilot needs a thumb and at least one other finger (the hand's layout "
                             f"has {list(layout.finger_names)}): name them in keypoint_frames (retargeting config), "
                             "or use the teledex method")
        self.settings = settings
        self.vector_scale = settings.vector_scale if settings.vector_scale is not None else vector_scale
        self.kinematics = KeypointKinematics(model, (WRIST_FRAME,) + layout.fingertip_frames, layout)
        thumb, primaries = 1, list(range(2, 1 + len(layout.fingers)))  # kinematic indices; 0 = wrist
        human = [WRIST] + [FINGER_CHAINS[f.name][-1] for f in layout.fingers]
        s1 = [(finger, thumb) for finger in primaries]
        s2 = list(combinations(primaries, 2))
        wrist_vectors = [(0, tip) for tip in [thumb] + primaries]
        pairs = s1 + s2 + wrist_vectors
        self._origins = np.array([human[a] for a, _ in pairs])
        self._tasks = np.array([human[b] for _, b in pairs])
        self._num_s1, self._num_s2 = len(s1), len(s2)
        self._s2_members = np.array([(primaries.index(a), primaries.index(b)) for a, b in s2]).reshape(-1, 2)
        self._s1_switched = np.zeros(len(s1), dtype=bool)

        self.vectors = KeypointVectorCost([a for a, _ in pairs], [b for _, b in pairs])
        self.regularization = JointDeviationCost(settings.regularization, reference_pose(model))
        self.solver = BoxLeastSquaresSolver(self.kinematics, [self.vectors, self.regularization], model.lower,
                                            model.upper, solver_settings, tie=_tie_matrix(model, settings.tied_joints))

    def reset(self) -> None:
        self._s1_switched[:] = False

    def targets(self, keypoints: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The target vectors f(d) r̂ (V, 3) and weights s(d) (V,) for the operator keypoints (21, 3)."""
        settings = self.settings
        human = keypoints[self._tasks] - keypoints[self._origins]
        distances = np.sqrt((human * human).sum(axis=1))
        s1 = slice(0, self._num_s1)
        s2 = slice(self._num_s1, self._num_s1 + self._num_s2)
        limit = np.where(self._s1_switched, settings.release_distance_m, settings.switch_distance_m)
        self._s1_switched = distances[s1] <= limit
        s2_switched = self._s1_switched[self._s2_members].all(axis=1)

        targets = self.vector_scale * human
        weights = np.ones(len(human))
        directions = human / np.maximum(distances, 1e-9)[:, None]
        targets[s1] = np.where(self._s1_switched[:, None], settings.thumb_finger_distance_m * directions[s1],
                               targets[s1])
        weights[s1] = np.where(self._s1_switched, settings.thumb_finger_weight, 1.0)
        targets[s2] = np.where(s2_switched[:, None], settings.finger_finger_distance_m * directions[s2], targets[s2])
        weights[s2] = np.where(s2_switched, settings.finger_finger_weight, 1.0)
        return targets, 0.5 * weights  # the paper's ½

    def solve(self, keypoints: np.ndarray, q_previous: np.ndarray) -> np.ndarray:
        self.vectors.set_targets(*self.targets(keypoints))
        return self.solver.solve(q_previous)[0]


def _tie_matrix(model: KinematicModel, tied_joints: dict) -> np.ndarray | None:
    """q = tie @ z with one z per untied joint; a tied (distal) joint copies its medial joint."""
    if not tied_joints:
        return None
    names = model.joint_names
    model.require_joints(list(tied_joints) + list(tied_joints.values()))
    free = [name for name in names if name not in tied_joints]
    tie = np.zeros((len(names), len(free)))
    for row, name in enumerate(names):
        tie[row, free.index(tied_joints.get(name, name))] = 1.0
    return tie
