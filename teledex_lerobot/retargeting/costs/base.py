"""The shape every cost term has: a weighted difference of two entries of the kinematic state, minus a target.

The state vector is x = [p_x (K), p_y (K), p_z (K), q (n), 0]: every keypoint coordinate (coordinate-major), every
joint, and a constant zero. A term is a list of residual rows

    r_i = w_i (x[plus_i] − x[minus_i] − t_i),

so a keypoint position is (coordinate, zero), a vector between keypoints (task, origin) and a joint (joint, zero).
Every term of the TeleDex and DexPilot objectives has this form, which lets the solver stack all terms once and
linearise them with a few gathers per iteration (`solver.py`); the same rows give each term's value and gradient
here (value = ‖r‖², gradient = 2 Jᵀ r), so what the solver minimises is what the gradient tests check.
"""

from dataclasses import dataclass

import numpy as np


@dataclass
class KinematicState:
    """Everything a term may read at one configuration."""

    q: np.ndarray  # (n,) actuated joints, rad or m
    positions: np.ndarray  # (K, 3) keypoint positions, operator wrist frame, m
    jacobians: np.ndarray  # (K, 3, n) ∂positions/∂q


class StateIndex:
    """Indices into the state vector x = [p_x (K), p_y (K), p_z (K), q (n), 0]."""

    def __init__(self, num_keypoints: int, num_joints: int):
        self.num_keypoints, self.num_joints = num_keypoints, num_joints
        self.zero = 3 * num_keypoints + num_joints
        self.size = self.zero + 1

    def coordinates(self, keypoints) -> np.ndarray:
        """(3 * len(keypoints),): the x, then y, then z entries of `keypoints`."""
        return (np.arange(3)[:, None] * self.num_keypoints + np.asarray(keypoints, dtype=int)[None]).ravel()

    def joints(self) -> np.ndarray:
        return 3 * self.num_keypoints + np.arange(self.num_joints)

    def zeros(self, count: int) -> np.ndarray:
        return np.full(count, self.zero)

    @staticmethod
    def vector(state: KinematicState) -> tuple[np.ndarray, np.ndarray]:
        """x (size,) and its Jacobian ∂x/∂q (size, n) at `state`."""
        count, n = state.jacobians.shape[0], len(state.q)
        x = np.concatenate([state.positions.T.ravel(), state.q, [0.0]])
        jacobian = np.concatenate([state.jacobians.transpose(1, 0, 2).reshape(3 * count, n), np.eye(n),
                                   np.zeros((1, n))])
        return x, jacobian


class ResidualTerm:
    """Rows r_i = w_i (x[plus_i] − x[minus_i] − t_i); `row_weights` w are square roots of the cost weights.

    Subclasses set `row_targets` and `row_weights` (one per row) and implement `rows`.
    """

    row_targets: np.ndarray
    row_weights: np.ndarray

    def rows(self, index: StateIndex) -> tuple[np.ndarray, np.ndarray]:
        """(plus, minus): the state entries of every row."""
        raise NotImplementedError

    def residual(self, state: KinematicState) -> np.ndarray:
        x, _ = StateIndex.vector(state)
        plus, minus = self.rows(_index(state))
        return self.row_weights * (x[plus] - x[minus] - self.row_targets)

    def residual_jacobian(self, state: KinematicState) -> np.ndarray:
        _, jacobian = StateIndex.vector(state)
        plus, minus = self.rows(_index(state))
        return self.row_weights[:, None] * (jacobian[plus] - jacobian[minus])

    def value(self, state: KinematicState) -> float:
        residual = self.residual(state)
        return float(residual @ residual)

    def gradient(self, state: KinematicState) -> np.ndarray:
        return 2.0 * self.residual_jacobian(state).T @ self.residual(state)


def _index(state: KinematicState) -> StateIndex:
    return StateIndex(state.positions.shape[0], len(state.q))
