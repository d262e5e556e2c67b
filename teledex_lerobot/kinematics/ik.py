"""Damped least-squares IK for one frame of a `KinematicModel`, on the shared core (`least_squares.minimise`).

Residual r = [p − p_target ; −w log(R_target Rᵀ)] in base-aligned axes, w = orientation_weight (metres per radian; 0
solves position only), with the frame Jacobian rows weighted alike. The core keeps q inside the joint limits with an
active set, accepts a step only if it lowers |r|² by at least a millionth (λ then shrinks, otherwise it grows and the
step is retried shorter), and stops once both errors are within tolerance or λ is huge. So the error never
increases, and an unreachable target settles at a (locally) closest reachable pose instead of oscillating; solving
again from the settled q changes the error only negligibly.

It is a local solver: from a far initial guess it can stop in a local minimum (typically with a joint at a limit).
Warm-start it from the previous solution, as a teleoperation loop does.
"""

from dataclasses import dataclass, replace

import numpy as np
import pinocchio as pin

from .least_squares import DampedLeastSquaresSettings, minimise
from .model import KinematicModel

# λ starts at 1e-3 x the largest diagonal entry of JᵀJ; by 1e6 the steps are negligible: the solution has settled.
_IK_SETTINGS = DampedLeastSquaresSettings(step_tolerance=0.0, initial_damping=1e-3, damping_relative=True,
                                          min_damping=1e-9, max_damping=1e6, damping_decrease=0.3,
                                          sufficient_decrease=1e-6)


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

    def linearise(q):
        pose, jacobian = model.frame_pose_and_jacobian(q, frame)
        error = np.concatenate([pose[:3, 3] - target_position, -pin.log3(target_rotation @ pose[:3, :3].T)])
        return error * weights, jacobian * weights[:, None]

    def errors(residual) -> tuple[float, float]:
        rotation = residual[3:] / orientation_weight if orientation_weight else np.zeros(3)
        return float(np.linalg.norm(residual[:3])), float(np.linalg.norm(rotation))

    def done(residual) -> bool:
        position_error, rotation_error = errors(residual)
        return position_error <= position_tolerance_m and (
            orientation_weight == 0 or rotation_error <= orientation_tolerance_rad)

    settings = replace(_IK_SETTINGS, max_iterations=max_iters + 1)  # + the first pass
    result = minimise(linearise, model.clip(q_init), model.lower, model.upper, settings, done)
    position_error, rotation_error = errors(result.accepted_residual)
    if orientation_weight == 0:  # not weighted into the residual: measure it for the report
        pose = model.frame_pose(result.z, frame)
        rotation_error = float(np.linalg.norm(pin.log3(target_rotation @ pose[:3, :3].T)))
    return IkResult(result.z, position_error, rotation_error, bool(done(result.accepted_residual)),
                    result.iterations - 1)
