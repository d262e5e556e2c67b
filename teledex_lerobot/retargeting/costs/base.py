"""The shape every cost term has: a residual and its Jacobian at a kinematic state."""

from dataclasses import dataclass

import numpy as np


@dataclass
class KinematicState:
    """Everything a term may read at one configuration; computed once per solver iteration."""

    q: np.ndarray  # (n,) actuated joints, rad or m
    positions: np.ndarray  # (K, 3) keypoint positions, operator wrist frame, m
    jacobians: np.ndarray  # (K, 3, n) ∂positions/∂q


class ResidualTerm:
    """value = ‖r‖², gradient = 2 Jᵀ r. Subclasses implement `residual` and `residual_jacobian`."""

    def residual(self, state: KinematicState) -> np.ndarray:
        raise NotImplementedError

    def residual_jacobian(self, state: KinematicState) -> np.ndarray:
        raise NotImplementedError

    def value(self, state: KinematicState) -> float:
        residual = self.residual(state)
        return float(residual @ residual)

    def gradient(self, state: KinematicState) -> np.ndarray:
        return 2.0 * self.residual_jacobian(state).T @ self.residual(state)
