"""Damped least-squares (Levenberg-Marquardt) IK for one frame of a `KinematicModel`.

Error e = [p_target - p ; w * log(R_target R^T)] in base-aligned axes, w = orientation_weight (metres per radian;
0 solves position only). Each iteration solves (J^T J + lambda I) dq = J^T e over the free joints, clips q to the
joint limits, and takes the step only if it lowers |e|^2 by at least a millionth: lambda then shrinks, otherwise it
grows and the step is retried shorter. So the error never increases, and an unreachable target settles at a
(locally) closest reachable pose (the search ends once lambda is huge) instead of oscillating; solving again from
the settled q changes the error only negligibly. Joints at a limit that the descent direction pushes further out
are frozen for that iteration.

It is a local solver: from a far initial guess it can stop in a local minimum (typically with a joint at a limit).
Warm-start it from the previous solution, as a teleoperation loop does.
"""

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from .model import KinematicModel

_DAMPING_INITIAL = 1e-3  # relative to the largest diagonal entry of J^T J
_DAMPING_MIN = 1e-9
_DAMPING_MAX = 1e6  # steps are negligible by then: the solution has settled
_DAMPING_UP, _DAMPING_DOWN = 10.0, 0.3
_SUFFICIENT_DECREASE = 1e-6  # a step must lower |e|^2 by this fraction to be taken
_LIMIT_EPSILON = 1e-9


@dataclass(frozen=True)
class IkResult:
    q: np.ndarray  # actuated joints, within limits
    position_error_m: float
    orientation_error_rad: float
    converged: bool  # both errors within tolerance (orientation ignored when orientation_weight == 0)
    iterations: int


def solve_ik(model: KinematicModel, frame: str, target_pose, q_init, *, max_iters: int = 100,
             position_tolerance_m: float = 1e-3, orientation_tolerance_rad: float = 1e-2,
             orientation_weight: float = 0.1) -> IkResult:
    """Joint angles that bring `frame` to `target_pose` (4x4, base frame), starting from `q_init`."""
    target = np.asarray(target_pose, dtype=float)
    if target.shape != (4, 4):
        raise ValueError(f"target_pose must be a 4x4 matrix, got shape {target.shape}")
    model.require_frames([frame])
    target_position, target_rotation = target[:3, 3], target[:3, :3]
    weights = np.array([1.0, 1.0, 1.0] + [orientation_weight] * 3)

    def evaluate(q):
        pose, jacobian = model.frame_pose_and_jacobian(q, frame)
        position_error = target_position - pose[:3, 3]
        rotation_error = pin.log3(target_rotation @ pose[:3, :3].T)
        error = np.concatenate([position_error, rotation_error]) * weights
        return error, jacobian * weights[:, None], np.linalg.norm(position_error), np.linalg.norm(rotation_error)

    def done(position_error, rotation_error):
        return position_error <= position_tolerance_m and (
            orientation_weight == 0 or rotation_error <= orientation_tolerance_rad)

    q = model.clip(q_init)
    error, jacobian, position_error, rotation_error = evaluate(q)
    cost = error @ error
    damping = _DAMPING_INITIAL * max(np.max(np.sum(jacobian**2, axis=0)), _DAMPING_MIN)
    iterations = 0
    while iterations < max_iters and not done(position_error, rotation_error) and damping < _DAMPING_MAX:
        iterations += 1
        gradient = jacobian.T @ error  # steepest-descent direction in joint space
        # Joints at a limit that the descent direction pushes further out stay put this iteration.
        pushing_out = ((q <= model.lower + _LIMIT_EPSILON) & (gradient < 0)) | (
            (q >= model.upper - _LIMIT_EPSILON) & (gradient > 0))
        free = ~pushing_out
        step = np.zeros_like(q)
        j_free = jacobian[:, free]
        step[free] = np.linalg.solve(j_free.T @ j_free + damping * np.eye(j_free.shape[1]), gradient[free])
        q_new = np.clip(q + step, model.lower, model.upper)
        new = evaluate(q_new)
        new_cost = new[0] @ new[0]
        if new_cost < (1.0 - _SUFFICIENT_DECREASE) * cost:
            q, (error, jacobian, position_error, rotation_error), cost = q_new, new, new_cost
            damping = max(damping * _DAMPING_DOWN, _DAMPING_MIN)
        else:
            damping *= _DAMPING_UP
    return IkResult(q, float(position_error), float(rotation_error), bool(done(position_error, rotation_error)),
                    iterations)

