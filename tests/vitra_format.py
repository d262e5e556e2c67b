"""A checker of the published VITRA teleoperation format (per-episode HDF5 + MP4), written from its description:
every dataset it lists with its shape and dtype, masks and availability flags that agree, and every 4x4 transform a
valid rigid transform (rotation orthonormal with determinant 1, last row 0 0 0 1), absent sides included."""

from pathlib import Path

import h5py
import numpy as np

SIDES = ("left", "right")


def _rigid(matrix: np.ndarray) -> bool:
    rotation = matrix[:3, :3]
    return (matrix.shape == (4, 4) and np.allclose(matrix[3], [0, 0, 0, 1])
            and np.allclose(rotation @ rotation.T, np.eye(3), atol=1e-6) and np.isclose(np.linalg.det(rotation), 1))


def vitra_problems(path: Path) -> list[str]:
    problems = []
    with h5py.File(path) as h5:
        def need(name, shape=None, dtype_kind=None):
            if name not in h5:
                problems.append(f"missing /{name}")
                return None
            data = h5[name][()]
            if shape is not None and np.shape(data) != shape:
                problems.append(f"/{name}: shape {np.shape(data)}, expected {shape}")
            if dtype_kind is not None and np.asarray(data).dtype.kind not in dtype_kind:
                problems.append(f"/{name}: dtype {np.asarray(data).dtype}")
            return data

        frames = int(need("meta/frame_count", (), "iu"))
        need("meta/instruction")
        video = need("meta/video_path")
        need("meta/fps", (), "f")
        if video is not None and not (path.parent / (video.decode() if isinstance(video, bytes) else video)).is_file():
            problems.append(f"video {video} is not beside {path.name}")
        for side in SIDES:
            has = bool(need(f"meta/has_{side}", (), "b"))
            for name in (f"kinematics/{side}_ee_urdf_to_hand_mount", f"kinematics/head_camera_to_{side}_arm_base"):
                matrix = need(name, (4, 4), "f")
                if matrix is not None and not _rigid(matrix):
                    problems.append(f"/{name} is not a rigid transform")
            arm = need(f"state/{side}_arm_joint", None, "f")
            hand = need(f"state/{side}_hand_joint", None, "f")
            for name in (f"state/{side}_hand_mount_pose", f"state/{side}_hand_mount_pose_in_cam"):
                pose = need(name, (frames, 6), "f")
                if pose is not None and not np.isfinite(pose).all():
                    problems.append(f"/{name} is not finite")
            for name, like in ((f"action/{side}_arm_joint", arm), (f"action/{side}_hand_joint", hand)):
                action = need(name, None, "f")
                if action is not None and like is not None and action.shape != like.shape:
                    problems.append(f"/{name}: shape {action.shape} differs from its state {like.shape}")
            for part, joints in (("arm", arm), ("hand", hand)):
                mask = need(f"mask/{side}_{part}", (frames,), "b")
                if joints is not None and (joints.ndim != 2 or joints.shape[0] != frames):
                    problems.append(f"/state/{side}_{part}_joint: {joints.shape} is not (T, N)")
                if mask is not None and mask.any() and not has:
                    problems.append(f"/mask/{side}_{part} is set but has_{side} is false")
        need("observation/camera/intrinsics", (3, 3), "f")
    return problems
