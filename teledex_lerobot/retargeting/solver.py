"""The retargeting objective for the one damped least-squares core (`kinematics.least_squares`).

Every term's rows are r_i = w_i (x[plus_i] − x[minus_i] − t_i) over the state vector x = [keypoint coordinates; q; 0]
(`costs.base`), so this stacks the rows of all terms once. A kinematics pass writes x and ∂x/∂q and gathers the
unweighted rows x[plus] − x[minus] and their Jacobian; each linearisation then only weights them. On this machine a
numpy call costs 1-2 µs whatever its size, so the code counts calls: a fixed few dozen per frame, whatever the hand.

The core stops when a step moved the joints less than `step_tolerance_rad` (2-norm, so no joint moved more). The
returned q is then that close to the last pass, whose linearisation, moved to q to first order, is the first
linearisation of the next solve when it starts from q (the warm start at the previous frame's solution): a frame
that converges in two steps costs one kinematics pass.

Optionally the joints are tied linearly, q = tie @ z (e.g. DexPilot's distal = medial joint): the solver then works
on z and the cost terms still see q.
"""

from dataclasses import dataclass

import numpy as np

from ..errors import ConfigError
from ..kinematics.least_squares import DampedLeastSquaresSettings, minimise
from .costs import ResidualTerm, StateIndex
from .keypoint_kinematics import KeypointKinematics


@dataclass(frozen=True)
class SolverSettings:
    max_iterations: int = 3
    step_tolerance_rad: float = 1e-3  # stop when the last step moved the joints less than this (2-norm)
    initial_damping: float = 1e-7  # λ in (JᵀJ + λI); the costs are in m² and rad²
    max_damping: float = 1e3

    def __post_init__(self):
        if self.max_iterations < 1:
            raise ConfigError(f"solver.max_iterations must be at least 1, got {self.max_iterations}")
        if self.step_tolerance_rad < 0:
            raise ConfigError(f"solver.step_tolerance_rad must be >= 0, got {self.step_tolerance_rad}")
        if not 0 < self.initial_damping <= self.max_damping:
            raise ConfigError(f"solver: need 0 < initial_damping <= max_damping, got {self.initial_damping} and "
                              f"{self.max_damping}")


@dataclass
class SolveReport:
    iterations: int = 0
    accepted_cost: float = float("nan")  # at the last accepted pass (the returned q itself is not re-evaluated)
    normal_matrix: np.ndarray | None = None  # JᵀJ of the stacked residuals at the last accepted pass (over z)


class BoxLeastSquaresSolver:
    def __init__(self, kinematics: KeypointKinematics, terms: list[ResidualTerm], lower, upper,
                 settings: SolverSettings = SolverSettings(), tie: np.ndarray | None = None):
        self.kinematics = kinematics
        self.terms = terms
        self.settings = settings
        self._core_settings = DampedLeastSquaresSettings(
            max_iterations=settings.max_iterations, step_tolerance=settings.step_tolerance_rad,
            initial_damping=settings.initial_damping, min_damping=settings.initial_damping,
            max_damping=settings.max_damping)
        self.tie = tie
        self.lower = np.asarray(lower, dtype=float)
        self.upper = np.asarray(upper, dtype=float)
        if tie is not None:  # bounds of z: those of the joints z drives one-to-one
            drives = np.argmax(tie != 0, axis=0)
            self.lower_z, self.upper_z = self.lower[drives], self.upper[drives]
        else:
            self.lower_z, self.upper_z = self.lower, self.upper

        index = StateIndex(kinematics.num_keypoints, kinematics.num_joints)
        rows = [term.rows(index) for term in terms]
        self._plus = np.concatenate([plus for plus, _ in rows])
        self._minus = np.concatenate([minus for _, minus in rows])
        size_z = len(self.lower_z)
        coordinates = 3 * kinematics.num_keypoints
        self._x = np.zeros(index.size)  # [keypoint coordinates; q; 0]
        self._x_jacobian = np.zeros((index.size, size_z))  # ∂x/∂z
        self._x_jacobian[coordinates:index.zero] = np.eye(size_z) if tie is None else tie
        self._positions = self._x[:coordinates]
        self._q = self._x[coordinates:index.zero]
        # the kinematics writes ∂p/∂q straight into ∂x/∂z, or into a scratch buffer first when q = tie @ z
        self._position_jacobian = (self._x_jacobian[:coordinates] if tie is None
                                   else np.zeros((coordinates, kinematics.num_joints)))
        self._differences = self._difference_jacobian = None  # rows x[plus] − x[minus] and ∂/∂z, last pass
        # (z of the last kinematics pass, z returned) after a solve whose last pass was accepted
        self._carried_over: tuple[np.ndarray, np.ndarray] | None = None

    def solve(self, q_start: np.ndarray) -> tuple[np.ndarray, SolveReport]:
        """Minimise the summed terms from q_start (clipped into the limits). Raises on a singular system."""
        weights = np.concatenate([term.row_weights for term in self.terms])
        weighted_targets = weights * np.concatenate([term.row_targets for term in self.terms])
        weight_column = weights[:, None]
        carried_over, self._carried_over = self._carried_over, None
        first = [True]

        def linearise(z):
            if first[0] and carried_over is not None and not np.count_nonzero(carried_over[1] != z):
                # Warm start at the last solution: the previous solve's last pass was made there (or less than a
                # step tolerance away), and the kinematics do not depend on the targets, so that linearisation,
                # moved there to first order, stands in for a new pass.
                self._differences = self._differences + self._difference_jacobian @ (z - carried_over[0])
            else:
                self._evaluate(z)
            first[0] = False
            return self._residual(weights, weighted_targets, weight_column)

        result = minimise(linearise, self._to_z(q_start), self.lower_z, self.upper_z, self._core_settings)
        if result.last_linearised_accepted:  # z is that linearisation's point, or a step tolerance beyond it
            self._carried_over = (result.accepted_z, result.z)
        residual = result.accepted_residual
        report = SolveReport(result.iterations, float(residual @ residual), result.normal_matrix)
        return (result.z if self.tie is None else self.tie @ result.z), report

    def _evaluate(self, z) -> None:
        """One kinematics pass at z: the unweighted rows x[plus] − x[minus] and their Jacobian."""
        if self.tie is None:
            self._q[:] = z
        else:
            np.matmul(self.tie, z, out=self._q)
        self.kinematics.evaluate(self._q, self._positions, self._position_jacobian)
        if self.tie is not None:
            np.matmul(self._position_jacobian, self.tie, out=self._x_jacobian[:len(self._positions)])
        x, x_jacobian = self._x, self._x_jacobian
        self._differences = x.take(self._plus) - x.take(self._minus)
        self._difference_jacobian = x_jacobian.take(self._plus, axis=0) - x_jacobian.take(self._minus, axis=0)

    def _residual(self, weights, weighted_targets, weight_column) -> tuple[np.ndarray, np.ndarray]:
        """The stacked residual r (R,) and its Jacobian (R, n_z) from the rows of the last linearisation."""
        residual = weights * self._differences
        residual -= weighted_targets
        return residual, self._difference_jacobian * weight_column

    def _to_z(self, q: np.ndarray) -> np.ndarray:
        if self.tie is None:
            return np.asarray(q, dtype=float)
        return np.linalg.lstsq(self.tie, q, rcond=None)[0]
