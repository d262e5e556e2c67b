"""w ‖q − q_reference‖²: joints toward a reference.

TeleDex temporal smoothness (reference = the previous solution θ(t−1), w = α_smooth), its posture prior (the open
hand, w = α_posture) and DexPilot's
regularisation γ‖q‖² (reference = the open hand, w = γ).
"""

import numpy as np

from .base import ResidualTerm, StateIndex


class JointDeviationCost(ResidualTerm):
    def __init__(self, weight: float, reference: np.ndarray):
        self.row_targets = np.asarray(reference, dtype=float).copy()
        self.row_weights = np.full(len(self.row_targets), np.sqrt(weight))

    def set_reference(self, reference: np.ndarray) -> None:
        self.row_targets = reference

    def rows(self, index: StateIndex) -> tuple[np.ndarray, np.ndarray]:
        return index.joints(), index.zeros(index.num_joints)
