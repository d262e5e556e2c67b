"""`KinematicModel`: forward kinematics and Jacobians of a URDF over its actuated joints (pinocchio inside).

The pinocchio model comes from `pinocchio_model.build_pinocchio_model` (every moving joint an independent 1-DoF
joint); mimic joints are expanded here: `q_full = A @ q + b` maps the actuated configuration q (command order) to
pinocchio's. Jacobians are folded back through A, so their columns are actuated joints.

Not thread-safe: one pinocchio Data buffer per model. Use one model per thread.
"""

from collections.abc import Sequence
from os import PathLike
from pathlib import Path

import numpy as np
import pinocchio as pin

from .errors import UrdfError
from .pinocchio_model import build_pinocchio_model
from .urdf import UrdfDescription, load_urdf


class KinematicModel:
    def __init__(self, description: UrdfDescription):
        self.description = description
        self.name: str = description.name
        actuated = description.actuated_joints
        self.joint_names: list[str] = [joint.name for joint in actuated]
        limits = [joint.limits for joint in actuated if joint.limits is not None]  # all: only fixed joints have none
        self.lower = np.array([limit.lower for limit in limits])
        self.upper = np.array([limit.upper for limit in limits])
        self.velocity_limits = np.array([limit.velocity for limit in limits])
        self.frame_names: list[str] = list(description.links)

        self._model, joint_ids, _ = build_pinocchio_model(description)
        self._data = self._model.createData()
        self._mimic_map = _mimic_map(description, self._model, joint_ids, self.joint_names)
        self._q_full = np.zeros(self._model.nq)
        self._frame_ids: dict[str, int] = {
            name: self._model.getFrameId(name, pin.FrameType.BODY) for name in self.frame_names}
        self._frame_id_cache: dict[tuple[str, ...], list[int]] = {}
        # For link_segments: (frame id of the parent link, frame id of the child link) per joint.
        self._segment_frame_ids = [(self._frame_ids[j.parent], self._frame_ids[j.child]) for j in description.joints]

    @classmethod
    def from_urdf(cls, path: str | PathLike) -> "KinematicModel":
        """Load a URDF file. Raises UrdfError naming the problem."""
        return cls(load_urdf(Path(path)))

    def __repr__(self) -> str:
        return f"KinematicModel({self.name!r}, {len(self.joint_names)} joints, {len(self.frame_names)} frames)"

    # ---- names and limits -------------------------------------------------------------------------------------

    def require_joints(self, names: Sequence[str]) -> None:
        """Raise UrdfError if any name is not an actuated joint of this model."""
        _require(names, self.joint_names, "actuated joint", self)

    def require_frames(self, names: Sequence[str]) -> None:
        """Raise UrdfError if any name is not a frame (link) of this model."""
        _require(names, self.frame_names, "frame", self)

    def clip(self, q) -> np.ndarray:
        """q clipped into [lower, upper] (a new array)."""
        return np.clip(self._checked(q), self.lower, self.upper)

    # ---- kinematics -------------------------------------------------------------------------------------------

    def frame_positions(self, q, frames: Sequence[str]) -> np.ndarray:
        """(k, 3) origins of `frames` in the base (root link) frame, metres."""
        ids = self._frame_id_cache.get(tuple(frames))
        if ids is None:
            self.require_frames(frames)
            ids = self._frame_id_cache[tuple(frames)] = [self._frame_ids[name] for name in frames]
        pin.forwardKinematics(self._model, self._data, self._full(q))
        update, model, data = pin.updateFramePlacement, self._model, self._data
        return np.array([update(model, data, frame_id).translation for frame_id in ids])

    def frame_pose(self, q, frame: str) -> np.ndarray:
        """4x4 pose of `frame` in the base frame."""
        frame_id = self._frame_id(frame)
        pin.forwardKinematics(self._model, self._data, self._full(q))
        return pin.updateFramePlacement(self._model, self._data, frame_id).homogeneous

    def frame_poses(self, q, frames: Sequence[str]) -> np.ndarray:
        """(k, 4, 4) poses of `frames` in the base frame, from one kinematics pass."""
        self.require_frames(frames)
        pin.forwardKinematics(self._model, self._data, self._full(q))
        update, model, data = pin.updateFramePlacement, self._model, self._data
        return np.array([update(model, data, self._frame_ids[name]).homogeneous for name in frames])

    def frame_jacobian(self, q, frame: str) -> np.ndarray:
        """(6, n) Jacobian [linear; angular] of `frame`'s origin, in base-aligned axes; columns = actuated joints."""
        return self.frame_pose_and_jacobian(q, frame)[1]

    def frame_pose_and_jacobian(self, q, frame: str) -> tuple[np.ndarray, np.ndarray]:
        """(frame_pose, frame_jacobian) from a single kinematics pass (what iterative solvers need)."""
        frame_id = self._frame_id(frame)
        pin.computeJointJacobians(self._model, self._data, self._full(q))
        pose = pin.updateFramePlacement(self._model, self._data, frame_id).homogeneous
        jacobian = pin.getFrameJacobian(self._model, self._data, frame_id, pin.LOCAL_WORLD_ALIGNED)
        return pose, jacobian @ self._mimic_map[0]

    def link_segments(self, q) -> np.ndarray:
        """(m, 2, 3) [parent link origin, child link origin] for every joint (document order), base frame, metres."""
        pin.forwardKinematics(self._model, self._data, self._full(q))
        pin.updateFramePlacements(self._model, self._data)
        origins = self._data.oMf
        return np.array([[origins[a].translation, origins[b].translation] for a, b in self._segment_frame_ids])

    # ---- internals --------------------------------------------------------------------------------------------

    def _frame_id(self, frame: str) -> int:
        if frame not in self._frame_ids:
            self.require_frames([frame])  # raises
        return self._frame_ids[frame]

    def _checked(self, q) -> np.ndarray:
        q = np.asarray(q, dtype=float)
        if q.shape != (len(self.joint_names),):
            raise ValueError(f"{self.name}: expected q of shape ({len(self.joint_names)},) in joint order "
                             f"{self.joint_names}; got shape {q.shape}")
        return q

    def _full(self, q) -> np.ndarray:
        """Actuated q -> pinocchio configuration with mimic joints filled in (reuses one buffer)."""
        matrix, offset = self._mimic_map
        np.matmul(matrix, self._checked(q), out=self._q_full)
        self._q_full += offset
        return self._q_full


def _require(names: Sequence[str], valid: list[str], kind: str, model: KinematicModel) -> None:
    if isinstance(names, str):
        names = [names]
    missing = [name for name in names if name not in valid]
    if missing:
        raise UrdfError(f"{model.name} ({model.description.source}) has no {kind}(s) {missing}. "
                        f"Valid {kind}s: {valid}")


def _mimic_map(description: UrdfDescription, model: pin.Model, joint_ids: dict[str, int], joint_names: list[str]):
    """(A, b) with q_full = A @ q + b; q_full is pinocchio's configuration (tree order), q is in command order."""
    matrix = np.zeros((model.nq, len(joint_names)))
    offset = np.zeros(model.nq)
    column = {name: index for index, name in enumerate(joint_names)}
    for joint in description.joints:
        if not joint.is_moving:
            continue
        row = model.joints[joint_ids[joint.name]].idx_q
        if joint.name in column:
            matrix[row, column[joint.name]] = 1.0
        else:
            mimic = description.resolved_mimics[joint.name]
            matrix[row, column[mimic.joint]] = mimic.multiplier
            offset[row] = mimic.offset
    return matrix, offset
