"""The intrinsics of a connected LeRobot RealSenseCamera, for camera_info.json.

LeRobot's RealSenseCamera keeps the started pipeline's profile in `rs_profile`. The stream its images come from
(colour, or depth when use_rgb is off: the choice LeRobot's own _configure_capture_settings makes) carries the
device's calibration: focal lengths and principal point in pixels, a distortion model and five coefficients.
The model keeps librealsense's name (e.g. inverse_brown_conrady, whose coefficients map distorted to undistorted
points, unlike ROS's plumb_bob) with the coefficients in its order, k1 k2 p1 p2 k3; "none" is recorded as plumb_bob
with zero coefficients, which means the same. Images LeRobot rotates (config.rotation) get no intrinsics: the
distortion terms do not simply carry over, and camera_info.json never guesses.
"""

import logging

from ...geometry.camera import CameraInfo

logger = logging.getLogger(__name__)


def realsense_camera_info(camera) -> CameraInfo:
    """camera: a connected lerobot.cameras.realsense.RealSenseCamera."""
    import pyrealsense2 as rs  # only reached with a connected RealSense, so the package is there

    if camera.rs_profile is None:
        raise RuntimeError(f"{camera}: connect the camera before reading its intrinsics")
    if camera.rotation is not None:
        logger.warning("%s: images are rotated (%s); camera_info.json records no intrinsics for it", camera,
                       camera.config.rotation)
        return CameraInfo(camera.width, camera.height)
    stream = rs.stream.color if camera.use_rgb else rs.stream.depth
    k = camera.rs_profile.get_stream(stream).as_video_stream_profile().get_intrinsics()
    if k.model == rs.distortion.none:
        model, coefficients = "plumb_bob", (0.0,) * 5
    else:
        model, coefficients = k.model.name, tuple(float(c) for c in k.coeffs)
    return CameraInfo(k.width, k.height, float(k.fx), float(k.fy), float(k.ppx), float(k.ppy),
                      distortion_model=model, distortion=coefficients)
