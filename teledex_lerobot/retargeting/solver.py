"""Levenberg-Marquardt on the stacked residuals of the cost terms, inside the joint limits.

One iteration = one kinematics pass (`KeypointKinematics.positions_and_jacobians`) + one 16x16 Cholesky solve.
Box constraints by projection with an active set: a joint at a limit whose gradient pushes it outward is frozen for
the step, the others take the damped Gauss-Newton step, and the result is clipped into the limits. A step that
raises the cost is undone and retried with more damping (no kinematics needed: the retry reuses the last accepted
linearisation). Warm-started from the previous frame, a few iterations converge.

Optionally the joints are tied linearly, q = tie @ z (e.g. DexPilot's distal = medial joint): the solver then works
on z and the cost terms still see q.
"""

from dataclasses import dataclass

import numpy as np
from scipy.linalg import lapack

from .costs import KinematicState, ResidualTerm
from .keypoint_kinematics import KeypointKinematics


@dataclass(frozen=True)
class SolverSettings:
    max_iterations: int = 6
    step_tolerance_rad: float = 1e-3  # stop when no joint moved more than this in the last step
    initial_damping: float = 1e-7  # λ in (JᵀJ + λI); the costs are in m² and rad²
    max_damping: float = 1e3


@dataclass
class SolveReport:
    iterations: int = 0
    cost_before_last_step: float = float("nan")  # the returned q itself is not re-evaluated (that costs a pass)


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
        self._identity = np.eye(len(self.lower_z))

    def state(self, q: np.ndarray) -> KinematicState:
        positions, jacobians = self.kinematics.positions_and_jacobians(q)
        return KinematicState(q, positions, jacobians)

    def cost(self, q: np.ndarray) -> float:
        state = self.state(q)
        return sum(term.value(state) for term in self.terms)

    def solve(self, q_start: np.ndarray) -> tuple[np.ndarray, SolveReport]:
        """Minimise the summed terms from q_start (clipped into the limits). Raises on a singular system."""
        settings, tie = self.settings, self.tie
        z = np.clip(self._to_z(q_start), self.lower_z, self.upper_z)
        damping = settings.initial_damping
        accepted = None  # (z, cost, JᵀJ, Jᵀr) of the last accepted iterate
        report = SolveReport()
        for iteration in range(settings.max_iterations):
            q = z if tie is None else tie @ z
            state = self.state(q)
            residual = np.concatenate([term.residual(state) for term in self.terms])
            cost = float(residual @ residual)
            if accepted is not None and cost > accepted[1]:
                z, cost, hessian, gradient = accepted  # undo the step; retry with more damping
                damping *= 10.0
                if damping > settings.max_damping:
                    break
            else:
                jacobian = np.concatenate([term.residual_jacobian(state) for term in self.terms])
                if tie is not None:
                    jacobian = jacobian @ tie
                hessian, gradient = jacobian.T @ jacobian, jacobian.T @ residual
                accepted = (z, cost, hessian, gradient)
                damping = max(damping * 0.1, settings.initial_damping)
            report.iterations, report.cost_before_last_step = iteration + 1, cost
            step = self._step(z, hessian, gradient, damping)
            z_next = np.minimum(np.maximum(z + step, self.lower_z), self.upper_z)
            moved = np.abs(z_next - z).max()
            z = z_next
            if moved < settings.step_tolerance_rad:
                break
        return (z if tie is None else tie @ z), report

    def _step(self, z, hessian, gradient, damping) -> np.ndarray:
        system = hessian + damping * self._identity
        rhs = -gradient
        blocked = ((z <= self.lower_z) & (gradient > 0)) | ((z >= self.upper_z) & (gradient < 0))
        if blocked.any():
            system[blocked, :] = 0.0
            system[:, blocked] = 0.0
            system[blocked, blocked] = 1.0
            rhs = np.where(blocked, 0.0, rhs)
        _, step, info = lapack.dposv(system, rhs)
        if info != 0:
            raise np.linalg.LinAlgError(f"retargeting normal equations not positive definite (LAPACK info {info})")
        return step

    def _to_z(self, q: np.ndarray) -> np.ndarray:
        if self.tie is None:
            return np.asarray(q, dtype=float)
        return np.linalg.lstsq(self.tie, q, rcond=None)[0]
