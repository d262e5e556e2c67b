"""Σ_k w_k ‖p_k(q) − target_k‖²: robot keypoints onto target points (TeleDex alignment, eq. 2)."""

import numpy as np

from .base import KinematicState, ResidualTerm


class KeypointPositionCost(ResidualTerm):
    def __init__(self, keypoints, weights):
        """`keypoints`: indices into the kinematic state; `weights`: one w_k ≥ 0 per keypoint (α folded in)."""
        self.keypoints = np.asarray(keypoints, dtype=int)
        self.targets = np.zeros((len(self.keypoints), 3))
        self.set_weights(weights)

    def set_weights(self, weights) -> None:
        self._sqrt_weights = np.sqrt(np.asarray(weights, dtype=float))[:, None]

    def set_targets(self, targets: np.ndarray) -> None:
        """(K, 3) target points, metres, operator wrist frame."""
        self.targets = targets

    def residual(self, state: KinematicState) -> np.ndarray:
        return ((state.positions[self.keypoints] - self.targets) * self._sqrt_weights).ravel()

    def residual_jacobian(self, state: KinematicState) -> np.ndarray:
        jacobians = state.jacobians[self.keypoints] * self._sqrt_weights[:, :, None]
        return jacobians.reshape(-1, jacobians.shape[-1])
