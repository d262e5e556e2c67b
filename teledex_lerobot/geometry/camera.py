"""What a camera tells about its image geometry: resolution, pinhole intrinsics, distortion, pose."""

from dataclasses import dataclass


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
