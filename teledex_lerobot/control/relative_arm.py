"""Cartesian relative arm control: the arm's mount frame follows the operator pose's motion since an anchor.

While engaged (a trigger held, or always for streams without one), the first sample only sets the anchors: the
operator pose and the mount pose of the reference command (the last command sent). Afterwards the target is the
anchored mount pose moved by the operator's displacement and rotation since its anchor (expressed in the robot base
frame), shaped as the Pico teleoperation guide does: a dead zone, a translation gain, then a clamp around the
anchor. Damped least-squares IK (joint limits applied at every iteration) solves it, warm-started at the previous
solution. Disengaging clears the anchors, so the next press re-anchors from wherever the robot was last commanded.

Near a singular configuration (the Piper's straight wrist aligns joints 4 and 6) part of the target cannot be reached
without a large joint motion: an 8 cm sideways move spun joints 4 and 6 by 1.5 rad in opposite directions. So before
IK, the target's step from the previous solution is filtered along the Jacobian's singular directions: a direction
whose singular value is below `ik_singular_value_threshold` keeps only σ²/(σ² + μ²) of its share, μ growing to
`ik_singular_damping` at the singularity (damped least squares, damping only where it is needed; elsewhere the
target is untouched). What is left unreached there is a small orientation error, not a spin. Then each tick's step
is scaled so that no joint moves faster than `ik_max_speed_fraction` of its URDF velocity limit.
"""

import time

import numpy as np

from ..errors import ModelError
from ..geometry.rotations import matrix_to_rotvec, quat_to_matrix, rotvec_to_matrix
from ..kinematics import solve_ik
from .config import RelativeArmConfig


def pose_matrix(pose_xyz_quat: np.ndarray) -> np.ndarray:
    """[x, y, z, qx, qy, qz, qw] -> 4x4."""
    matrix = np.eye(4)
    matrix[:3, :3] = quat_to_matrix(pose_xyz_quat[3:7])
    matrix[:3, 3] = pose_xyz_quat[:3]
    return matrix


def shape_vector(vector: np.ndarray, dead_zone: float, scale: float, limit: float) -> np.ndarray:
    """Shrink the vector's length by the dead zone (continuous: no step at its edge), scale it, cap its length."""
    length = float(np.linalg.norm(vector))
    if length <= dead_zone:
        return np.zeros_like(vector)
    shaped = min((length - dead_zone) * scale, limit)
    return vector * (shaped / length)


class CartesianRelativeArm:
    def __init__(self, part, config: RelativeArmConfig | None = None):
        if part.mount_frame is None:
            raise ModelError(f"Arm {part.spec.model!r} has no known mount frame for strategy 'hybrid' to move in "
                             "Cartesian space: give a built-in arm (piper, linker_a7), or drive it by a leader arm "
                             "with strategy 'direct'")
        self.part = part
        self.config = config or RelativeArmConfig()
        self.operator_to_base = np.asarray(self.config.operator_to_base, dtype=float)
        self.last_ik_s = 0.0  # duration of the last IK solve (0 when the sample needed none)
        self._operator_anchor: np.ndarray | None = None
        self.reset()

    def reset(self, resuming: bool = False) -> None:
        """Clear the anchors: the next engaged sample re-anchors. `resuming`: the input paused while the operator
        was mid-motion (a stale gap), so from the next anchor the motion is followed without the dead zones, which
        would otherwise swallow the first centimetre and a half of every resumed motion."""
        self._dead_zones = not (resuming and self._operator_anchor is not None)
        self._operator_anchor = None
        self._mount_anchor: np.ndarray | None = None
        self._q_full: np.ndarray | None = None

    @property
    def anchored(self) -> bool:
        return self._operator_anchor is not None

    def __call__(self, operator_pose: np.ndarray, q_reference: np.ndarray, engaged: bool = True,
                 dt_s: float | None = None) -> np.ndarray:
        """Operator pose [x,y,z,qx,qy,qz,qw] and the reference driven joints (the last command) -> driven target.
        `dt_s`, the time since the previous tick, bounds the joint speed of the step (None: unbounded)."""
        self.last_ik_s = 0.0
        if not engaged:
            self.reset()
            return np.asarray(q_reference, dtype=float).copy()
        operator = pose_matrix(operator_pose)
        model = self.part.model
        if self._operator_anchor is None:
            self._q_full = self.part.full_configuration(q_reference)
            self._operator_anchor = operator
            self._mount_anchor = model.frame_pose(self._q_full, self.part.mount_frame)
            return np.asarray(q_reference, dtype=float).copy()
        c, to_base, mount_anchor = self.config, self.operator_to_base, self._mount_anchor
        assert mount_anchor is not None  # anchored with the operator's pose
        dead_zones = self._dead_zones
        displacement = shape_vector(to_base @ (operator[:3, 3] - self._operator_anchor[:3, 3]),
                                    c.translation_dead_zone_m * dead_zones, c.translation_scale, c.max_translation_m)
        rotation = to_base @ operator[:3, :3] @ self._operator_anchor[:3, :3].T @ to_base.T
        rotation_vector = shape_vector(matrix_to_rotvec(rotation), c.rotation_dead_zone_rad * dead_zones, 1.0,
                                       c.max_rotation_rad)
        target = np.eye(4)
        target[:3, 3] = mount_anchor[:3, 3] + displacement
        target[:3, :3] = rotvec_to_matrix(rotation_vector) @ mount_anchor[:3, :3]
        started = time.perf_counter()
        result = solve_ik(model, self.part.mount_frame, self._damped_near_singularity(target), self._q_full,
                          max_iters=c.ik_max_iterations, orientation_weight=c.ik_orientation_weight_m_per_rad)
        self._q_full = self._speed_bounded(result.q, dt_s)
        self.last_ik_s = time.perf_counter() - started
        return self._q_full[self.part.indices]

    def _damped_near_singularity(self, target: np.ndarray) -> np.ndarray:
        """The target moved back toward the current pose along the ill-conditioned directions (module docstring)."""
        c = self.config
        if c.ik_singular_value_threshold == 0 or c.ik_singular_damping == 0:
            return target
        pose, jacobian = self.part.model.frame_pose_and_jacobian(self._q_full, self.part.mount_frame)
        weights = np.array([1.0, 1.0, 1.0] + [c.ik_orientation_weight_m_per_rad] * 3)
        solved = weights > 0  # a zero orientation weight solves position only: orientation is not part of it
        u, sigma, _ = np.linalg.svd(jacobian[solved] * weights[solved, None], full_matrices=False)
        closeness = np.clip(1.0 - (sigma / c.ik_singular_value_threshold) ** 2, 0.0, None)
        if not np.any(closeness):
            return target
        kept = sigma ** 2 / (sigma ** 2 + c.ik_singular_damping ** 2 * closeness)  # 0 exactly at the singularity
        step = np.concatenate([target[:3, 3] - pose[:3, 3], matrix_to_rotvec(target[:3, :3] @ pose[:3, :3].T)])
        weighted = weights[solved] * step[solved]
        step[solved] = u @ (kept * (u.T @ weighted)) / weights[solved]
        damped = np.eye(4)
        damped[:3, 3] = pose[:3, 3] + step[:3]
        damped[:3, :3] = rotvec_to_matrix(step[3:]) @ pose[:3, :3]
        return damped

    def _speed_bounded(self, q_full: np.ndarray, dt_s: float | None) -> np.ndarray:
        """The step from the previous solution, scaled so no driven joint exceeds its share of the velocity limit."""
        if dt_s is None:
            return q_full
        step = q_full - self._q_full
        indices = self.part.indices
        allowed = self.config.ik_max_speed_fraction * self.part.velocity_limits * dt_s
        ratio = float(np.max(np.abs(step[indices]) / allowed, initial=0.0)) if dt_s > 0 else np.inf
        return q_full if ratio <= 1.0 else self._q_full + step / ratio
