"""Σ_k w_k ‖p_k(q) − target_k‖²: robot keypoints onto target points (TeleDex alignment)."""

import numpy as np

from .base import ResidualTerm, StateIndex


class KeypointPositionCost(ResidualTerm):
    def __init__(self, keypoints, weights):
        """`keypoints`: indices into the kinematic state; `weights`: one w_k ≥ 0 per keypoint (α folded in)."""
        self.keypoints = np.asarray(keypoints, dtype=int)
        self.row_targets = np.zeros(3 * len(self.keypoints))
        self.set_weights(weights)

    def set_weights(self, weights) -> None:
        self.row_weights = np.tile(np.sqrt(np.asarray(weights, dtype=float)), 3)

    def set_targets(self, targets: np.ndarray) -> None:
        """(K, 3) target points, metres, operator wrist frame."""
        self.row_targets = targets.T.ravel()

    def rows(self, index: StateIndex) -> tuple[np.ndarray, np.ndarray]:
        return index.coordinates(self.keypoints), index.zeros(3 * len(self.keypoints))
