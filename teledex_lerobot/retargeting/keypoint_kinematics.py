"""Positions and position Jacobians of many keypoint frames at once, for the retargeting solvers.

`KinematicModel` answers one frame per call; a retargeter needs ~20 frames several times per control tick, and
pinocchio's Python bindings hand out placements one SE3 object at a time (2-3 µs each on our 2-core machine). So
this module adds a zero-valued spherical *probe* joint at every keypoint of the model's pinocchio tree and reads
everything from the one matrix `computeJointJacobians` fills:

- at zero angles the probe's three world-frame Jacobian columns are [p × a_i; a_i], rotations about the axes a_i of
  the link it sits on (the columns of its rotation R); their top rows form [p]× R, so [p]× = Σ_i (p × a_i) a_iᵀ,
  whose entries (2,1), (0,2), (1,0) are p's coordinates;
- the velocity of keypoint p from joint j is v_j + ω_j × p, for the joints that support it.

The tree itself comes from the one model builder, `kinematics.pinocchio_model`.

On this machine a numpy call costs 1-2 µs whatever its size, so the pass is a fixed handful of calls on
precomputed gather indices (one `take` per quantity, one batched matmul for every keypoint's Jacobian) writing
into caller-owned buffers: ~15 calls per pass, whatever the number of keypoints.

Mimic joints are independent joints for pinocchio, driven by q_full = A q + b (chains resolved by the URDF parser);
Jacobians are folded back through A, so their columns are the model's actuated joints. Positions are expressed in
the operator wrist frame placed by the layout (`hand_layout`): the tree starts at the layout's palm link, placed so
that the wrist point is the origin and the base rotation gives the axes; joints above the palm link (a robot wrist)
are not in this model, so their Jacobian columns are zero. A keypoint frame is a link name, "<link>#tip" (a point at
the layout's offset from that link) or `WRIST_FRAME` (the wrist point itself).
"""

import numpy as np
import pinocchio as pin

from ..errors import ModelError
from ..kinematics import KinematicModel
from ..kinematics.pinocchio_model import build_pinocchio_model
from .hand_layout import TIP_SUFFIX, HandKeypointLayout

WRIST_FRAME = "#wrist"
_ONES_3 = np.ones(3)
_NEXT, _AFTER_NEXT = (1, 2, 0), (2, 0, 1)  # (ω × p)_c = ω_{c+1} p_{c+2} − ω_{c+2} p_{c+1}


class KeypointKinematics:
    """Forward kinematics of a fixed list of frames. Not thread-safe (one pinocchio Data); one per thread.

    The fast entry point is `evaluate`, which writes coordinate-major results (all x, then all y, then all z) into
    buffers the caller owns; `positions` and `positions_and_jacobians` return keypoint-major copies.
    """

    def __init__(self, model: KinematicModel, frames, layout: HandKeypointLayout | None = None):
        """`layout` None: positions in the URDF root frame (no palm link, wrist offset or tip offsets)."""
        model.require_frames([f.removesuffix(TIP_SUFFIX) for f in frames if f != WRIST_FRAME])
        self.frames = tuple(frames)
        self.joint_names = list(model.joint_names)
        self.num_joints = len(self.joint_names)
        self._model, joint_ids, keypoint_parents = _build_pinocchio_model(model, self.frames, layout)
        self._data = self._model.createData()
        nv = self._model.nv
        count = len(self.frames)

        # q_full = A q + b over pinocchio's velocity indices (probe joints stay at zero).
        description = model.description
        column = {name: i for i, name in enumerate(self.joint_names)}
        self._mimic_matrix = np.zeros((nv, self.num_joints))
        self._mimic_offset = np.zeros(nv)
        moving = [joint for joint in description.joints if joint.is_moving and joint.name in joint_ids]
        for joint in moving:
            row = self._model.joints[joint_ids[joint.name]].idx_v
            mimic = description.resolved_mimics.get(joint.name)
            if mimic is None:
                self._mimic_matrix[row, column[joint.name]] = 1.0
            else:
                self._mimic_matrix[row, column[mimic.joint]] = mimic.multiplier
                self._mimic_offset[row] = mimic.offset
        self._has_offsets = bool(self._mimic_offset.any())
        real_rows = np.array(sorted(self._model.joints[joint_ids[j.name]].idx_v for j in moving), dtype=int)
        self._fold = self._mimic_matrix[real_rows]  # (m, n)

        # Which real joints move each keypoint (its pinocchio ancestors): (K, m).
        row_of_joint = {self._model.joints[joint_id].idx_v: joint_id for joint_id in joint_ids.values()}
        self._support = np.array([[row_of_joint[row] in set(self._model.supports[parent]) for row in real_rows]
                                  for parent in keypoint_parents], dtype=float)

        # Gather indices into data.J (6, nv) flattened row-major.
        probes = np.array([self._model.joints[self._model.getJointId(_probe_name(k))].idx_v + np.arange(3)
                           for k in range(count)])  # (K, 3): the probe's three columns
        # p_c = Σ_i J[top_c, probe_i] J[3 + bottom_c, probe_i] with (top, bottom) = (2,1), (0,2), (1,0).
        top, bottom = np.array([2, 0, 1]), np.array([4, 5, 3])
        self._position_gather = np.stack([top[:, None, None] * nv + probes[None],
                                          bottom[:, None, None] * nv + probes[None]]).reshape(2, 3 * count, 3)
        # Per coordinate c, the rows [v_c; ω_{c+1}; ω_{c+2}] of the real joints: (3, 3, m).
        rows = np.array([[c, 3 + _NEXT[c], 3 + _AFTER_NEXT[c]] for c in range(3)])
        self._motion_gather = rows[:, :, None] * nv + real_rows[None, None, :]
        # Per coordinate c and keypoint k, the factors [1, p_{c+2}, −p_{c+1}] from the buffer [p; −p; 1] (p
        # coordinate-major): (3, K, 3).
        self._lever_gather = np.array([[[6 * count, _AFTER_NEXT[c] * count + k, (3 + _NEXT[c]) * count + k]
                                        for k in range(count)] for c in range(3)])
        self._levers = np.zeros(6 * count + 1)
        self._levers[-1] = 1.0
        self._q_full = np.zeros(self._model.nq)

    @property
    def num_keypoints(self) -> int:
        return len(self.frames)

    def evaluate(self, q, positions_out: np.ndarray, jacobian_out: np.ndarray | None = None) -> None:
        """Write the positions (3K,) and, if asked, the Jacobian (3K, n), coordinate-major, for joint vector q."""
        q_full = self._q_full
        np.matmul(self._mimic_matrix, q, out=q_full)
        if self._has_offsets:
            q_full += self._mimic_offset
        jacobian = pin.computeJointJacobians(self._model, self._data, q_full).ravel()
        factors = jacobian.take(self._position_gather)
        count = len(self.frames)
        np.matmul(factors[0] * factors[1], _ONES_3, out=positions_out)  # the Σ_i (a summing matmul is 5x faster)
        if jacobian_out is None:
            return
        levers = self._levers
        levers[:3 * count] = positions_out
        np.negative(positions_out, out=levers[3 * count:6 * count])
        # v_c + ω_{c+1} p_{c+2} − ω_{c+2} p_{c+1} for every (c, k, joint) in one batched product, then the support.
        full = np.matmul(levers.take(self._lever_gather), jacobian.take(self._motion_gather))  # (3, K, m)
        full *= self._support
        np.matmul(full.reshape(3 * count, -1), self._fold, out=jacobian_out)

    def positions(self, q) -> np.ndarray:
        """(K, 3) keypoint positions in the operator wrist frame, metres."""
        positions = np.empty(3 * len(self.frames))
        self.evaluate(q, positions)
        return positions.reshape(3, -1).T.copy()

    def positions_and_jacobians(self, q) -> tuple[np.ndarray, np.ndarray]:
        """(K, 3) positions and (K, 3, n) position Jacobians w.r.t. the actuated joints, from one pass."""
        count = len(self.frames)
        positions, jacobian = np.empty(3 * count), np.empty((3 * count, self.num_joints))
        self.evaluate(q, positions, jacobian)
        return (positions.reshape(3, count).T.copy(),
                jacobian.reshape(3, count, -1).transpose(1, 0, 2).copy())


def _probe_name(keypoint: int) -> str:
    return f"__keypoint_probe_{keypoint}"


def _build_pinocchio_model(model: KinematicModel, frames, layout: HandKeypointLayout | None):
    """The model's pinocchio tree below the palm link (`kinematics.build_pinocchio_model`) plus a probe joint at
    every keypoint; returns (model, joint ids, keypoint parents)."""
    palm, root_placement, offsets = model.description.root_link, pin.SE3.Identity(), {}
    if layout is not None:
        rotation = np.asarray(layout.base_rotation, dtype=float)
        palm, offsets = layout.palm_link, layout.frame_offsets_m
        root_placement = pin.SE3(rotation, -rotation @ np.asarray(layout.wrist_offset_m, dtype=float))
    pin_model, joint_ids, link_anchor = build_pinocchio_model(model.description, palm, root_placement)
    keypoint_parents = []
    for k, frame in enumerate(frames):
        link, offset = frame.removesuffix(TIP_SUFFIX), np.asarray(offsets.get(frame, np.zeros(3)), dtype=float)
        if frame == WRIST_FRAME:
            link, offset = palm, np.asarray(layout.wrist_offset_m if layout is not None else np.zeros(3))
        if link not in link_anchor:
            raise ModelError(f"{model.name}: keypoint frame {frame!r} is not below the palm link {palm!r}; name a link "
                             "of the hand in keypoint_frames (retargeting config), or fix the URDF")
        parent_id, placement = link_anchor[link]
        keypoint_parents.append(parent_id)
        # ZYX Euler angles: nq = nv = 3, and zero angles are the identity (unlike a quaternion joint)
        pin_model.addJoint(parent_id, pin.JointModelSphericalZYX(), pin.SE3(np.eye(3), placement.act(offset)),
                           _probe_name(k))
    return pin_model, joint_ids, keypoint_parents
