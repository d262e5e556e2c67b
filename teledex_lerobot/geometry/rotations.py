"""Rotation conversions for the control loop, on pinocchio: scipy's Rotation costs ~0.3 ms per call here, which
alone would eat the loop's latency budget. Quaternions are [qx, qy, qz, qw] as everywhere in the project."""

import numpy as np
import pinocchio as pin


def quat_to_matrix(quat_xyzw) -> np.ndarray:
    x, y, z, w = (float(v) for v in quat_xyzw)
    return pin.Quaternion(w, x, y, z).normalized().toRotationMatrix()


def matrix_to_quat(rotation: np.ndarray) -> np.ndarray:
    return pin.Quaternion(np.asarray(rotation, dtype=float)).normalized().coeffs().copy()


def matrix_to_rotvec(rotation: np.ndarray) -> np.ndarray:
    return pin.log3(np.asarray(rotation, dtype=float))


def rotvec_to_matrix(rotation_vector: np.ndarray) -> np.ndarray:
    return pin.exp3(np.asarray(rotation_vector, dtype=float))
