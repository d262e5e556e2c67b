"""Cartesian relative arm control: the arm's mount frame follows the operator wrist's motion since an anchor.

On the first sample (or after reset) the wrist pose and the arm's current mount pose become the anchors. Afterwards
the target is the anchored mount pose moved by the wrist's displacement and rotation since its anchor (expressed in
the robot base frame), solved to joints by damped least-squares IK warm-started at the previous solution.
"""

import numpy as np
from scipy.spatial.transform import Rotation

from ..kinematics import solve_ik


def pose_matrix(pose_xyz_quat: np.ndarray) -> np.ndarray:
    """[x, y, z, qx, qy, qz, qw] -> 4x4."""
    matrix = np.eye(4)
    matrix[:3, :3] = Rotation.from_quat(pose_xyz_quat[3:7]).as_matrix()
    matrix[:3, 3] = pose_xyz_quat[:3]
    return matrix


class CartesianRelativeArm:
    def __init__(self, part, position_scale: float = 1.0, operator_to_base: np.ndarray | None = None):
        if part.mount_frame is None:
            raise ValueError(f"Arm {part.spec.model!r} has no known mount frame to control in Cartesian space.")
        self.part = part
        self.position_scale = position_scale
        self.operator_to_base = np.eye(3) if operator_to_base is None else np.asarray(operator_to_base, float)
        self.reset()

    def reset(self) -> None:
        self._wrist_anchor: np.ndarray | None = None
        self._mount_anchor: np.ndarray | None = None
        self._q_full: np.ndarray | None = None

    def __call__(self, wrist_pose: np.ndarray, q_driven: np.ndarray) -> np.ndarray:
        """Operator wrist pose [x,y,z,qx,qy,qz,qw] and the arm's current driven joints -> driven joint target."""
        wrist = pose_matrix(wrist_pose)
        model = self.part.model
        if self._wrist_anchor is None:
            self._q_full = self.part.full_configuration(q_driven)
            self._wrist_anchor = wrist
            self._mount_anchor = model.frame_pose(self._q_full, self.part.mount_frame)
            return np.asarray(q_driven, dtype=float).copy()
        to_base = self.operator_to_base
        target = np.eye(4)
        target[:3, 3] = self._mount_anchor[:3, 3] + self.position_scale * to_base @ (
            wrist[:3, 3] - self._wrist_anchor[:3, 3])
        rotation_delta = to_base @ wrist[:3, :3] @ self._wrist_anchor[:3, :3].T @ to_base.T
        target[:3, :3] = rotation_delta @ self._mount_anchor[:3, :3]
        result = solve_ik(model, self.part.mount_frame, target, self._q_full)
        self._q_full = result.q
        return result.q[self.part.indices]
