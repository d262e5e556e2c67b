"""The one damped least-squares (Levenberg-Marquardt) core inside a box of joint limits, used by IK and retargeting.

The caller gives `linearise(z) -> (r, J)`: a residual vector and its Jacobian at z. Each iteration solves the damped
normal equations (JᵀJ + λI) dz = −Jᵀr of the last accepted linearisation and moves inside the limits with an active
set: a variable whose step would leave the box (at a limit and pushed outward, or crossing one) stops at the limit,
and the others are solved again given that move (clipping instead would leave them moved as if it had gone on,
which often raises the cost). A new point is accepted when its cost ‖r‖² is at most (1 − `sufficient_decrease`)
times the last accepted cost; λ then shrinks, otherwise the step is undone and retried with λ ten times larger. So
the cost never increases, and an unreachable target settles instead of oscillating.

It stops when `done(r)` says the accepted residual is good enough, when a step moved less than `step_tolerance`
(2-norm; that last step is taken without evaluating its result), when λ exceeds `max_damping`, or after
`max_iterations` linearisations. Symmetric systems go to LAPACK's Cholesky solver (dposv) directly.
"""

import functools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.linalg import lapack

_PINNED = 1e12  # diagonal entry that pins a variable's step (the costs' curvatures are far below it)


@functools.cache
def _identity(size: int) -> np.ndarray:
    """The identity of a size, made once (a solve runs per control tick; np.eye costs as much as a step's solve)."""
    identity = np.eye(size)
    identity.flags.writeable = False
    return identity


@dataclass(frozen=True)
class DampedLeastSquaresSettings:
    max_iterations: int = 6  # linearisations (kinematics passes)
    step_tolerance: float = 1e-3  # stop after a step shorter than this (2-norm); 0 = never
    initial_damping: float = 1e-7  # λ; times the largest diagonal entry of JᵀJ when damping_relative
    damping_relative: bool = False
    min_damping: float = 1e-7
    max_damping: float = 1e3
    damping_decrease: float = 0.1  # λ factor after an accepted step
    sufficient_decrease: float = 0.0  # a step must lower the cost by this fraction to be accepted


@dataclass
class LeastSquaresResult:
    z: np.ndarray  # the solution: the last accepted point, or one step beyond it after a step-tolerance stop
    accepted_z: np.ndarray  # the last accepted (linearised) point
    accepted_residual: np.ndarray  # r there
    normal_matrix: np.ndarray  # JᵀJ there
    iterations: int  # linearisations made
    converged_by_step: bool  # stopped by the step tolerance (z is one step beyond accepted_z)
    last_linearised_accepted: bool  # the last linearisation made is the accepted one (nothing rejected after it)


def minimise(linearise: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]], z_start, lower, upper,
             settings: DampedLeastSquaresSettings, done: Callable[[np.ndarray], bool] | None = None
             ) -> LeastSquaresResult:
    """Minimise ‖r(z)‖² over lower <= z <= upper from z_start (clipped into the box). Raises LinAlgError on a
    normal matrix that is not positive definite (no damping and a rank-deficient Jacobian)."""
    lower, upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    z = np.minimum(np.maximum(np.asarray(z_start, dtype=float), lower), upper)
    identity = _identity(len(z))
    tolerance_squared = settings.step_tolerance ** 2
    damping = 0.0  # λ, set by the first linearisation (always accepted)
    accepted: tuple[np.ndarray, float, np.ndarray, np.ndarray, np.ndarray] | None = None  # (z, cost, r, JᵀJ, Jᵀr)
    last_accepted = False
    iterations = 0
    while iterations < settings.max_iterations:
        residual, jacobian = linearise(z)
        iterations += 1
        cost = float(residual @ residual)
        if accepted is not None and cost > (1.0 - settings.sufficient_decrease) * accepted[1]:
            z = accepted[0]  # undo the step; retry with more damping
            damping *= 10.0
            last_accepted = False
            if damping > settings.max_damping:
                break
        else:
            hessian = jacobian.T @ jacobian
            if accepted is None:
                scale = float(np.max(np.diag(hessian), initial=0.0)) if settings.damping_relative else 1.0
                damping = settings.initial_damping * max(scale, 1e-12)
            else:
                damping = max(damping * settings.damping_decrease, settings.min_damping)
            accepted = (z, cost, residual, hessian, residual @ jacobian)
            last_accepted = True
            if done is not None and done(residual):
                break
        if iterations == settings.max_iterations:
            break  # a step beyond the last linearisation would go unchecked
        z_next = box_damped_step(z, accepted[3], accepted[4], damping, lower, upper, identity)
        moved = z_next - z
        if moved @ moved < tolerance_squared:
            return LeastSquaresResult(z_next, accepted[0], accepted[2], accepted[3], iterations, True, last_accepted)
        z = z_next
    if accepted is None:
        raise ValueError(f"max_iterations must be at least 1, got {settings.max_iterations}")
    return LeastSquaresResult(accepted[0], accepted[0], accepted[2], accepted[3], iterations, False, last_accepted)


def box_damped_step(z, hessian, gradient, damping, lower, upper, identity=None) -> np.ndarray:
    """z after one damped Gauss-Newton step inside [lower, upper] (an active-set solve of the local model).

    Symmetric systems: their transpose is the Fortran-ordered matrix LAPACK takes without a copy.
    """
    identity = _identity(len(z)) if identity is None else identity
    pinned, inside = None, z  # pinned variables stay where the last step clipped them: at `inside`
    for _ in range(len(z) + 1):
        if pinned is None:
            system, rhs = hessian + damping * identity, -gradient
        else:  # a huge diagonal entry and its multiple of the pinned move on the right-hand side fix a variable
            system = hessian + identity * np.where(pinned, _PINNED, damping)
            rhs = np.where(pinned, _PINNED * (inside - z), -gradient)
        _, step, info = lapack.dposv(system.T, rhs, overwrite_a=True, overwrite_b=True)
        if info != 0:
            raise np.linalg.LinAlgError(f"damped normal equations not positive definite (LAPACK info {info})")
        target = z + step if pinned is None else np.where(pinned, inside, z + step)
        inside = np.minimum(np.maximum(target, lower), upper)
        leaving = inside != target
        if not np.count_nonzero(leaving):  # (ndarray.any() costs several times more at this size)
            return target
        pinned = leaving if pinned is None else pinned | leaving
    return inside
