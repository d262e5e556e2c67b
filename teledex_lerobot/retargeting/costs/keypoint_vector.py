"""Σ_i w_i ‖(p_task_i(q) − p_origin_i(q)) − target_i‖²: vectors between robot keypoints onto target vectors.

TeleDex thumb-finger coupling (eq. 6: origin = thumb tip, task = fingertip, w = α_couple β_i) and DexPilot's
task-space vectors (w = s(d_i), target = f(d_i) r̂_i).
"""

import numpy as np

from .base import KinematicState, ResidualTerm


class KeypointVectorCost(ResidualTerm):
    def __init__(self, origins, tasks):
        """Indices into the kinematic state: vector i goes from keypoint origins[i] to keypoint tasks[i]."""
        self.origins = np.asarray(origins, dtype=int)
        self.tasks = np.asarray(tasks, dtype=int)
        self.targets = np.zeros((len(self.tasks), 3))
        self._sqrt_weights = np.ones((len(self.tasks), 1))

    def set_targets(self, targets: np.ndarray, weights: np.ndarray) -> None:
        """(V, 3) target vectors in metres and (V,) weights ≥ 0."""
        self.targets = targets
        self._sqrt_weights = np.sqrt(weights)[:, None]

    def residual(self, state: KinematicState) -> np.ndarray:
        vectors = state.positions[self.tasks] - state.positions[self.origins]
        return ((vectors - self.targets) * self._sqrt_weights).ravel()

    def residual_jacobian(self, state: KinematicState) -> np.ndarray:
        jacobians = (state.jacobians[self.tasks] - state.jacobians[self.origins]) * self._sqrt_weights[:, :, None]
        return jacobians.reshape(-1, jacobians.shape[-1])
