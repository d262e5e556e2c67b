"""Σ_i w_i ‖(p_task_i(q) − p_origin_i(q)) − target_i‖²: vectors between robot keypoints onto target vectors.

TeleDex thumb-finger coupling (origin = thumb tip, task = fingertip, w = α_couple β_i) and DexPilot's
task-space vectors (w = s(d_i), target = f(d_i) r̂_i).
"""

import numpy as np

from .base import ResidualTerm, StateIndex


class KeypointVectorCost(ResidualTerm):
    def __init__(self, origins, tasks):
        """Indices into the kinematic state: vector i goes from keypoint origins[i] to keypoint tasks[i]."""
        self.origins = np.asarray(origins, dtype=int)
        self.tasks = np.asarray(tasks, dtype=int)
        self.row_targets = np.zeros(3 * len(self.tasks))
        self.row_weights = np.ones(3 * len(self.tasks))

    def set_targets(self, targets: np.ndarray, weights: np.ndarray) -> None:
        """(V, 3) target vectors in metres and (V,) weights ≥ 0."""
        self.row_targets = targets.T.ravel()
        self.row_weights = np.sqrt(np.concatenate((weights, weights, weights)))

    def rows(self, index: StateIndex) -> tuple[np.ndarray, np.ndarray]:
        return index.coordinates(self.tasks), index.coordinates(self.origins)
