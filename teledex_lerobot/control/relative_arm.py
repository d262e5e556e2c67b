"""Cartesian relative arm control: the arm's mount frame follows the operator pose's motion since an anchor.

While engaged (a trigger held, or always for streams without one), the first sample only sets the anchors: the
operator pose and the mount pose of the reference command (the last command sent). Afterwards the target is the
anchored mount pose moved by the operator's displacement and rotation since its anchor (expressed in the robot base
frame), shaped as the Pico teleoperation guide does: a dead zone, a translation gain, then a clamp around the
anchor. Damped least-squares IK (joint limits applied at every iteration) solves it, warm-started at the previous
solution. Disengaging clears the anchors, so the next press re-anchors from wherever the robot was last commanded.
"""

import time

import numpy as np

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
            raise ValueError(f"Arm {part.spec.model!r} has no known mount frame to control in Cartesian space.")
        self.part = part
        self.config = config or RelativeArmConfig()
        self.operator_to_base = np.asarray(self.config.operator_to_base, dtype=float)
        self.last_ik_s = 0.0  # duration of the last IK solve (0 when the sample needed none)
        self.reset()

    def reset(self) -> None:
        """Clear the anchors: the next engaged sample re-anchors."""
        self._operator_anchor: np.ndarray | None = None
        self._mount_anchor: np.ndarray | None = None
        self._q_full: np.ndarray | None = None

    @property
    def anchored(self) -> bool:
        return self._operator_anchor is not None

    def __call__(self, operator_pose: np.ndarray, q_reference: np.ndarray, engaged: bool = True) -> np.ndarray:
        """Operator pose [x,y,z,qx,qy,qz,qw] and the reference driven joints (the last command) -> driven target."""
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
        c, to_base = self.config, self.operator_to_base
        displacement = shape_vector(to_base @ (operator[:3, 3] - self._operator_anchor[:3, 3]),
                                    c.translation_dead_zone_m, c.translation_scale, c.max_translation_m)
        rotation = to_base @ operator[:3, :3] @ self._operator_anchor[:3, :3].T @ to_base.T
        rotation_vector = shape_vector(matrix_to_rotvec(rotation), c.rotation_dead_zone_rad, 1.0, c.max_rotation_rad)
        target = np.eye(4)
        target[:3, 3] = self._mount_anchor[:3, 3] + displacement
        target[:3, :3] = rotvec_to_matrix(rotation_vector) @ self._mount_anchor[:3, :3]
        started = time.perf_counter()
        result = solve_ik(model, self.part.mount_frame, target, self._q_full, max_iters=c.ik_max_iterations,
                          orientation_weight=c.ik_orientation_weight_m_per_rad)
        self.last_ik_s = time.perf_counter() - started
        self._q_full = result.q
        return result.q[self.part.indices]
