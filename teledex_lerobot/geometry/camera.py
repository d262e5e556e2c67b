"""What a camera tells about its image geometry: resolution, pinhole intrinsics, distortion, pose; and for a depth
stream, the unit of its values."""

from dataclasses import dataclass

# Depth streams are recorded in uint16 millimetres: LeRobot's unit for integer depth maps, a RealSense D455's own.
DEPTH_SCALE_M = 0.001


@dataclass(frozen=True)
class CameraInfo:
    """Pinhole intrinsics in pixels; None where the camera does not tell (they are never guessed)."""

    width: int
    height: int
    fx: float | None = None
    fy: float | None = None
    cx: float | None = None
    cy: float | None = None
    distortion_model: str = "plumb_bob"
    distortion: tuple[float, ...] = (0.0, 0.0, 0.0, 0.0, 0.0)
    # 4x4 pose of the camera's optical frame in the rig's world (arm base) frame, when known
    world_from_camera: list[list[float]] | None = None
    # A depth stream: metres per unit of its values as recorded (DEPTH_SCALE_M, or a camera's own unit where it
    # was recorded unconverted); None for colour.
    depth_scale_m: float | None = None
    # The depth sensor's own unit before conversion to depth_scale_m (RealSense depth_units: 0.001 on a D455,
    # 0.0001 on a D405); None where depth has no sensor unit (rendered in metres).
    sensor_depth_scale_m: float | None = None
