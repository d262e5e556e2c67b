"""What the headset page draws besides the camera: the robot at its measured pose, the pose commanded ghosted over
it, and the world's task objects as boxes. Everything is in the rig's base frame (x forward, y left, z up, metres),
which the page places in front of the operator; matrices are row-major lists of 16 numbers."""

from collections.abc import Mapping

import numpy as np

from ..rig import Rig


def _segments(rig: Rig, q_by_role: Mapping[str, np.ndarray]) -> list[list[float]]:
    drawn = np.concatenate([segments for _, segments in rig.drawing_segments(q_by_role)])
    return np.round(drawn.reshape(-1, 6), 5).tolist()


def _matrix(pose: np.ndarray) -> list[float]:
    return np.round(np.asarray(pose, dtype=float).reshape(16), 6).tolist()


def headset_scene(rig: Rig, measured: Mapping[str, np.ndarray] | None, commanded: Mapping[str, np.ndarray],
                  objects: Mapping[str, tuple]) -> dict:
    """The scene message: link segments [x0, y0, z0, x1, y1, z1] measured and commanded, the hand's base pose as
    measured, and each object's pose with its box (half extents, centre in its frame)."""
    scene = {"type": "scene", "commanded": _segments(rig, commanded),
             "objects": [{"name": name, "pose": _matrix(pose), "half": list(half), "centre": list(centre)}
                         for name, (pose, half, centre) in objects.items()]}
    if measured is not None:
        scene["measured"] = _segments(rig, measured)
        if "hand" in rig.parts:
            scene["hand"] = _matrix(rig.base_poses(measured)["hand"])
    return scene
