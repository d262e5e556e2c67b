"""What a camera tells about its image geometry: resolution, pinhole intrinsics, distortion, pose; and for a depth
stream, the unit of its values."""

from dataclasses import dataclass

import numpy as np

from ..errors import ConfigError

# Depth streams are recorded in uint16 millimetres: LeRobot's unit for integer depth maps, a RealSense D455's own.
DEPTH_SCALE_M = 0.001

# Camera placements relative to the scene centre: direction from the centre to the camera (world frame, x forward,
# z up) and the up hint used to orient the image.
VIEWS: dict[str, tuple[tuple[float, float, float], tuple[float, float, float]]] = {
    "front": ((1.0, 0.0, 0.35), (0.0, 0.0, 1.0)),
    "side": ((0.0, -1.0, 0.3), (0.0, 0.0, 1.0)),
    "top": ((0.05, 0.0, 1.0), (1.0, 0.0, 0.0)),
    "oblique": ((0.8, -0.7, 0.6), (0.0, 0.0, 1.0)),
}
# A camera on the hand's wrist, moving with it (teledex_lerobot/robot_body.py says where it sits).
WRIST_VIEW = "wrist"


def view_pose(view: str, centre_m: np.ndarray, distance_m: float) -> np.ndarray:
    """4x4 pose of a camera's optical frame (x right, y down, z forward) looking at centre_m from a view of VIEWS,
    distance_m away: where the world's and the rendered cameras stand."""
    if view not in VIEWS:
        raise ConfigError(f"Unknown camera view {view!r}: give the camera's view (--robot.cameras) one of "
                          f"{sorted([*VIEWS, WRIST_VIEW])}")
    direction, up_hint = (np.asarray(v, dtype=float) for v in VIEWS[view])
    direction /= np.linalg.norm(direction)
    forward = -direction
    right = np.cross(forward, up_hint)
    right /= np.linalg.norm(right)
    pose = np.eye(4)
    pose[:3, :3] = np.stack([right, np.cross(forward, right), forward], axis=1)
    pose[:3, 3] = np.asarray(centre_m, dtype=float) + distance_m * direction
    return pose


@dataclass(frozen=True)
class CameraInfo:
    """Pinhole intrinsics in pixels; None where the camera does not tell (they are never guessed).

    A stereo pair (stereo_baseline_m set) is one side-by-side image, width = both eyes: the left eye's (columns 0 to
    width / 2 - 1), then the right eye's. The intrinsics and the pose (world_from_camera or part_from_camera) are the
    left eye's, in the image's own pixels: used as a single camera's, they are right for the left half. The right
    eye has the same intrinsics in its half (cx + width / 2 in the image's pixels) and its optical frame is the left
    eye's moved stereo_baseline_m along the left eye's x axis (no rotation): a point at depth z shows
    fx * baseline / z pixels farther left in the right eye's half than in the left's."""

    width: int
    height: int
    fx: float | None = None
    fy: float | None = None
    cx: float | None = None
    cy: float | None = None
    distortion_model: str = "plumb_bob"
    distortion: tuple[float, ...] = (0.0, 0.0, 0.0, 0.0, 0.0)
    # 4x4 pose of a fixed camera's optical frame (x right, y down, z forward) in the rig's base frame (the arm's
    # root link), when known
    world_from_camera: list[list[float]] | None = None
    # A camera on a moving part (a wrist camera): the part ("hand") and the optical frame's 4x4 pose in that part's
    # base frame; world_from_camera is then None (the camera moves with the part).
    mounted_on: str | None = None
    part_from_camera: list[list[float]] | None = None
    # A depth stream: metres per unit of its values as recorded (DEPTH_SCALE_M, or a camera's own unit where it
    # was recorded unconverted); None for colour.
    depth_scale_m: float | None = None
    # The depth sensor's own unit before conversion to depth_scale_m (RealSense depth_units: 0.001 on a D455,
    # 0.0001 on a D405); None where depth has no sensor unit (rendered in metres).
    sensor_depth_scale_m: float | None = None
    # A stereo pair: the distance between its eyes' optical centres (m); None for one camera.
    stereo_baseline_m: float | None = None


@dataclass(frozen=True)
class PinholeIntrinsics:
    width: int
    height: int
    fx: float
    fy: float
    cx: float
    cy: float
