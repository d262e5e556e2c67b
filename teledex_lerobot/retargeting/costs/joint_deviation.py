"""w ‖q − q_reference‖²: joints toward a reference.

TeleDex temporal smoothness (eq. 9: reference = the previous solution θ(t−1), w = α_smooth) and DexPilot's
regularisation γ‖q‖² (reference = the open hand, w = γ).
"""

import numpy as np

from .base import KinematicState, ResidualTerm


class JointDeviationCost(ResidualTerm):
    def __init__(self, weight: float, reference: np.ndarray):
        self._sqrt_weight = float(np.sqrt(weight))
        self.reference = np.asarray(reference, dtype=float).copy()
        self._jacobian = self._sqrt_weight * np.eye(len(self.reference))

    def set_reference(self, reference: np.ndarray) -> None:
        self.reference = reference

    def residual(self, state: KinematicState) -> np.ndarray:
        return self._sqrt_weight * (state.q - self.reference)

    def residual_jacobian(self, state: KinematicState) -> np.ndarray:
        return self._jacobian
