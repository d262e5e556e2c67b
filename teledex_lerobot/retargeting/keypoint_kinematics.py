"""Positions and position Jacobians of many keypoint frames at once, for the retargeting solvers.

`KinematicModel` answers one frame per call; a retargeter needs ~20 frames several times per control tick, and
pinocchio's Python bindings hand out placements one SE3 object at a time (2-3 µs each on our 2-core machine). So
this module builds its own pinocchio model from the parsed URDF, with three extra zero-valued revolute *probe* joints
at every keypoint (about the axes of the link it sits on), and reads everything from the one matrix
`computeJointJacobians` fills:

- the world-frame Jacobian column of a revolute joint about unit axis a through point p is [p × a; a], and for
  three orthonormal axes p = ½ Σ_i a_i × (p × a_i): the probes' columns give each keypoint position;
- the velocity of keypoint p from joint j is v_j + ω_j × p = v_j - [p]× ω_j, for the joints that support it.

Mimic joints are independent joints for pinocchio, driven by q_full = A q + b (chains resolved by the URDF parser);
Jacobians are folded back through A, so their columns are the model's actuated joints. Positions are expressed in
the operator wrist frame: the layout's base rotation is the placement of the root.
"""

import numpy as np
import pinocchio as pin
from scipy.spatial.transform import Rotation

from ..kinematics import KinematicModel

# p @ _SKEW_3x9 reshaped to (3, 3) is [p]×, the matrix of p × (·); and (b ⊗ a).ravel() @ _SKEW_3x9.T == a × b.
_SKEW_3x9 = np.zeros((3, 9))
for _row, _col, _component, _sign in ((0, 1, 2, -1), (0, 2, 1, 1), (1, 0, 2, 1), (1, 2, 0, -1), (2, 0, 1, -1),
                                      (2, 1, 0, 1)):
    _SKEW_3x9[_component, 3 * _row + _col] = _sign
_CROSS_9x3 = np.ascontiguousarray(0.5 * _SKEW_3x9.T)  # with the ½ of the probe formula folded in
_PROBE_AXES = (("x", pin.JointModelRX), ("y", pin.JointModelRY), ("z", pin.JointModelRZ))


class KeypointKinematics:
    """Forward kinematics of a fixed list of frames. Not thread-safe (one pinocchio Data); one per thread."""

    def __init__(self, model: KinematicModel, frames, base_rotation=None):
        model.require_frames(list(frames))
        self.frames = tuple(frames)
        self.joint_names = list(model.joint_names)
        self.num_joints = len(self.joint_names)
        self._model, joint_ids, keypoint_parents = _build_pinocchio_model(model, self.frames, base_rotation)
        self._data = self._model.createData()
        nv = self._model.nv
        count = len(self.frames)

        # q_full = A q + b over pinocchio's velocity indices (probe joints stay at zero).
        description = model.description
        column = {name: i for i, name in enumerate(self.joint_names)}
        self._mimic_matrix = np.zeros((nv, self.num_joints))
        self._mimic_offset = np.zeros(nv)
        moving = [joint for joint in description.joints if joint.is_moving]
        for joint in moving:
            row = self._model.joints[joint_ids[joint.name]].idx_v
            mimic = description.resolved_mimics.get(joint.name)
            if mimic is None:
                self._mimic_matrix[row, column[joint.name]] = 1.0
            else:
                self._mimic_matrix[row, column[mimic.joint]] = mimic.multiplier
                self._mimic_offset[row] = mimic.offset
        self._has_offsets = bool(self._mimic_offset.any())
        real_rows = sorted(self._model.joints[joint_ids[j.name]].idx_v for j in moving)
        self._real_rows = np.array(real_rows)
        self._fold = self._mimic_matrix[self._real_rows]  # (m, n)

        # Which real joints move each keypoint (its pinocchio ancestors).
        row_of_joint = {self._model.joints[joint_id].idx_v: joint_id for joint_id in joint_ids.values()}
        support = np.zeros((count, len(real_rows)))
        for k, parent in enumerate(keypoint_parents):
            ancestors = set(self._model.supports[parent])
            support[k] = [row_of_joint[row] in ancestors for row in real_rows]
        self._support = support[:, None, :]  # (K, 1, m)

        # Columns of data.J of the probes, keypoint-major: (K*3,).
        self._probe_columns = np.array([self._model.joints[self._model.getJointId(_probe_name(k, axis))].idx_v
                                        for k in range(count) for axis, _ in _PROBE_AXES])
        self._q_full = np.zeros(self._model.nq)

    def positions(self, q) -> np.ndarray:
        """(K, 3) keypoint positions in the operator wrist frame, metres."""
        return self._points(self._compute(q))

    def positions_and_jacobians(self, q) -> tuple[np.ndarray, np.ndarray]:
        """(K, 3) positions and (K, 3, n) position Jacobians w.r.t. the actuated joints, from one pass."""
        jacobian = self._compute(q)
        points = self._points(jacobian)
        real = jacobian[:, self._real_rows]  # (6, m): [v; ω] of every real joint
        count = len(self.frames)
        # v_j - [p_k]× ω_j for every (keypoint, joint) pair as 2-D products (batched tiny matmuls cost more here).
        skew = (points @ _SKEW_3x9).reshape(count * 3, 3)
        full = (real[:3] - (skew @ real[3:]).reshape(count, 3, -1)) * self._support
        return points, (full.reshape(count * 3, -1) @ self._fold).reshape(count, 3, -1)

    def _points(self, jacobian: np.ndarray) -> np.ndarray:
        probes = jacobian[:, self._probe_columns]  # (6, 3K): [p × a_i; a_i]
        outer = probes[:3].T[:, :, None] * probes[3:].T[:, None, :]  # (p × a_i) ⊗ a_i
        return (outer.reshape(-1, 9) @ _CROSS_9x3).reshape(-1, 3, 3).sum(axis=1)

    def _compute(self, q) -> np.ndarray:
        q_full = self._q_full
        np.matmul(self._mimic_matrix, q, out=q_full)
        if self._has_offsets:
            q_full += self._mimic_offset
        return pin.computeJointJacobians(self._model, self._data, q_full)


def _probe_name(keypoint: int, axis: str) -> str:
    return f"__keypoint_probe_{keypoint}_{axis}"


def _build_pinocchio_model(model: KinematicModel, frames, base_rotation):
    """A pinocchio model of the URDF's moving joints plus probe joints; returns (model, joint ids, keypoint parents).

    Fixed joints are folded into placements. Continuous joints become plain revolute joints (one coordinate, the
    model's [-pi, pi] limits apply), prismatic joints stay prismatic.
    """
    description = model.description
    children: dict[str, list] = {}
    for joint in description.joints:
        children.setdefault(joint.parent, []).append(joint)
    root_placement = pin.SE3.Identity()
    if base_rotation is not None:
        root_placement = pin.SE3(np.asarray(base_rotation, dtype=float), np.zeros(3))

    pin_model = pin.Model()
    joint_ids: dict[str, int] = {}
    link_anchor = {description.root_link: (0, root_placement)}  # link -> (pinocchio parent joint, placement in it)
    stack = [description.root_link]
    while stack:
        link = stack.pop()
        parent_id, placement = link_anchor[link]
        for joint in children.get(link, []):
            origin = placement * _se3(joint.origin_xyz, joint.origin_rpy)
            if joint.is_moving:
                axis = np.asarray(joint.axis, dtype=float)
                joint_model = (pin.JointModelPrismaticUnaligned(axis) if joint.type == "prismatic"
                               else pin.JointModelRevoluteUnaligned(axis))
                joint_ids[joint.name] = pin_model.addJoint(parent_id, joint_model, origin, joint.name)
                link_anchor[joint.child] = (joint_ids[joint.name], pin.SE3.Identity())
            else:
                link_anchor[joint.child] = (parent_id, origin)
            stack.append(joint.child)

    keypoint_parents = []
    for k, frame in enumerate(frames):
        parent_id, placement = link_anchor[frame]
        keypoint_parents.append(parent_id)
        probe_parent, probe_placement = parent_id, pin.SE3(np.eye(3), placement.translation)
        for axis, joint_model in _PROBE_AXES:  # a chain of three: they stay at zero, so their axes stay orthonormal
            probe_parent = pin_model.addJoint(probe_parent, joint_model(), probe_placement, _probe_name(k, axis))
            probe_placement = pin.SE3.Identity()
    return pin_model, joint_ids, keypoint_parents


def _se3(xyz, rpy) -> pin.SE3:
    return pin.SE3(Rotation.from_euler("xyz", rpy).as_matrix(), np.asarray(xyz, dtype=float))
