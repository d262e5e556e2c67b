"""Levenberg-Marquardt on the stacked residuals of the cost terms, inside the joint limits.

Every term's rows are r_i = w_i (x[plus_i] − x[minus_i] − t_i) over the state vector x = [keypoint coordinates; q; 0]
(`costs.base`), so the solver stacks the rows of all terms once. A kinematics pass writes x and ∂x/∂q and gathers
the unweighted rows x[plus] − x[minus] and their Jacobian; each iteration then weights them, forms JᵀJ and Jᵀr and
solves one n×n Cholesky system (LAPACK dposv). On this machine a numpy call costs 1-2 µs whatever its size, so the
code counts calls: a fixed few dozen per frame, whatever the hand.

Joint limits: an active set per step. A joint whose step would leave the box (at a limit and pushed outward, or
crossing one) stops at the limit and the others are solved again given that move; clipping instead would leave them
moved as if it had gone on, which often raises the cost. A step that raises the cost is undone and retried with more
damping (no kinematics needed). It stops when the last step moved the joints less than `step_tolerance_rad` (2-norm,
so no joint moved more). The returned q is then that close to the last pass, whose linearisation, moved to q to
first order, is the first linearisation of the next solve when it starts from q (the warm start at the previous
frame's solution): a frame that converges in two steps costs one kinematics pass.

Optionally the joints are tied linearly, q = tie @ z (e.g. DexPilot's distal = medial joint): the solver then works
on z and the cost terms still see q.
"""

from dataclasses import dataclass

import numpy as np
from scipy.linalg import lapack

from .costs import ResidualTerm, StateIndex
from .keypoint_kinematics import KeypointKinematics

_PINNED = 1e12  # diagonal entry that pins a joint's step (the costs' curvatures are < 1)


@dataclass(frozen=True)
class SolverSettings:
    max_iterations: int = 6
    step_tolerance_rad: float = 1e-3  # stop when the last step moved the joints less than this (2-norm)
    initial_damping: float = 1e-7  # λ in (JᵀJ + λI); the costs are in m² and rad²
    max_damping: float = 1e3


@dataclass
class SolveReport:
    iterations: int = 0
    cost_before_last_step: float = float("nan")  # the returned q itself is not re-evaluated (that costs a pass)
    normal_matrix: np.ndarray | None = None  # JᵀJ of the stacked residuals at the last accepted iterate (over z)


class BoxLeastSquaresSolver:
    def __init__(self, kinematics: KeypointKinematics, terms: list[ResidualTerm], lower, upper,
                 settings: SolverSettings = SolverSettings(), tie: np.ndarray | None = None):
        self.kinematics = kinematics
        self.terms = terms
        self.settings = settings
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
        self._identity = np.eye(size_z)
        self._damping, self._damping_identity = 0.0, np.zeros((size_z, size_z))
        self._differences = self._difference_jacobian = None  # rows x[plus] − x[minus] and ∂/∂z, last pass
        self._carried_over = None  # (z of the last kinematics pass, z returned) after a converged solve

    def solve(self, q_start: np.ndarray) -> tuple[np.ndarray, SolveReport]:
        """Minimise the summed terms from q_start (clipped into the limits). Raises on a singular system."""
        settings, tie = self.settings, self.tie
        tolerance_squared = settings.step_tolerance_rad ** 2
        weights = np.concatenate([term.row_weights for term in self.terms])
        weighted_targets = weights * np.concatenate([term.row_targets for term in self.terms])
        weight_column = weights[:, None]
        z = np.minimum(np.maximum(self._to_z(q_start), self.lower_z), self.upper_z)
        carried_over, self._carried_over = self._carried_over, None
        damping = settings.initial_damping
        accepted = None  # (z, cost, JᵀJ, Jᵀr) of the last accepted iterate
        iteration = 0
        for iteration in range(settings.max_iterations):
            if iteration == 0 and carried_over is not None and not np.count_nonzero(carried_over[1] != z):
                # Warm start at the last solution: the last pass of the previous solve was made less than a step
                # tolerance away, so its linearisation, moved there to first order, stands in for a new pass.
                self._differences = self._differences + self._difference_jacobian @ (z - carried_over[0])
            else:
                self._evaluate(z)
            z_evaluated = z
            residual, jacobian = self._residual(weights, weighted_targets, weight_column)
            cost = float(residual @ residual)
            if accepted is not None and cost > accepted[1]:
                z, cost, hessian, gradient = accepted  # undo the step; retry with more damping
                damping *= 10.0
                if damping > settings.max_damping:
                    break
            else:
                hessian, gradient = jacobian.T @ jacobian, residual @ jacobian
                accepted = (z, cost, hessian, gradient)
                damping = max(damping * 0.1, settings.initial_damping)
            z_next = self._step(z, hessian, gradient, damping)
            moved = z_next - z
            converged = moved @ moved < tolerance_squared  # the 2-norm bounds every joint's move
            z = z_next
            if converged:
                if z_evaluated is accepted[0]:  # the buffers hold the pass at the z we stepped from
                    self._carried_over = (z_evaluated, z)
                break
        return (z if tie is None else tie @ z), SolveReport(iteration + 1, cost, accepted[2])

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

    def _step(self, z, hessian, gradient, damping) -> np.ndarray:
        """z after one damped Gauss-Newton step inside the limits (an active-set solve of the local model).

        A joint whose step would leave the box (a joint at a limit pushed outward, or one crossing a limit) stops
        at the limit, and the others are solved again given that move (no kinematics needed). Clipping instead
        would leave the other joints moved as if it had gone on, which often raises the cost and costs a rejected
        step. Symmetric systems: their transpose is the Fortran-ordered matrix LAPACK takes without a copy.
        """
        lower, upper = self.lower_z, self.upper_z
        pinned, pinned_at = None, None
        for _ in range(len(z) + 1):
            if pinned is None:
                system, rhs = hessian + self._damped_identity(damping), -gradient
            else:  # a huge diagonal entry and its multiple of the pinned move on the right-hand side fix a joint
                system = hessian + self._identity * np.where(pinned, _PINNED, damping)
                rhs = np.where(pinned, _PINNED * (pinned_at - z), -gradient)
            _, step, info = lapack.dposv(system.T, rhs, overwrite_a=True, overwrite_b=True)
            if info != 0:
                raise np.linalg.LinAlgError(f"retargeting normal equations not positive definite (LAPACK info {info})")
            target = z + step if pinned is None else np.where(pinned, pinned_at, z + step)
            inside = np.minimum(np.maximum(target, lower), upper)
            leaving = inside != target
            if not np.count_nonzero(leaving):  # (ndarray.any() costs several times more at this size)
                return target
            pinned = leaving if pinned is None else pinned | leaving
            pinned_at = inside
        return inside

    def _damped_identity(self, damping: float) -> np.ndarray:
        if damping != self._damping:  # (the damping rarely changes: one product saved per step)
            self._damping, self._damping_identity = damping, self._identity * damping
        return self._damping_identity

    def _to_z(self, q: np.ndarray) -> np.ndarray:
        if self.tie is None:
            return np.asarray(q, dtype=float)
        return np.linalg.lstsq(self.tie, q, rcond=None)[0]
