"""The intrinsics of a connected LeRobot RealSenseCamera, for camera_info.json.

LeRobot's RealSenseCamera keeps the started pipeline's profile in `rs_profile`. The stream its images come from
(colour, or depth when use_rgb is off: the choice LeRobot's own _configure_capture_settings makes) carries the
device's calibration: focal lengths and principal point in pixels, a distortion model and five coefficients.
The model keeps librealsense's name (e.g. inverse_brown_conrady, whose coefficients map distorted to undistorted
points, unlike ROS's plumb_bob) with the coefficients in its order, k1 k2 p1 p2 k3; "none" is recorded as plumb_bob
with zero coefficients, which means the same. Images LeRobot rotates (config.rotation) get no intrinsics: the
distortion terms do not simply carry over, and camera_info.json never guesses.

A depth stream records its depth scale too: metres per unit of its values as stored, and the sensor's own unit
(librealsense's depth scale, the depth_units option: 0.001 on a D455, 0.0001 on a D405).
"""

import logging
from dataclasses import replace

import numpy as np

from ...errors import DeviceError
from ...geometry.camera import DEPTH_SCALE_M, CameraInfo

logger = logging.getLogger(__name__)


def realsense_camera_info(camera) -> CameraInfo:
    """camera: a connected lerobot.cameras.realsense.RealSenseCamera."""
    import pyrealsense2 as rs  # only reached with a connected RealSense, so the package is there

    return _stream_info(camera, rs.stream.color if camera.use_rgb else rs.stream.depth)


def realsense_depth_info(camera, aligned: bool, millimetres: bool) -> CameraInfo:
    """The depth stream of a connected RealSenseCamera with use_depth. aligned: reprojected onto the colour image
    (rs.align), so it has the colour stream's intrinsics; else the depth stream's own. millimetres: its values were
    converted from the sensor's unit to millimetres; else they are in the sensor's unit."""
    import pyrealsense2 as rs  # as above

    sensor_scale_m = sensor_depth_scale_m(camera.rs_profile.get_device())
    info = _stream_info(camera, rs.stream.color if aligned else rs.stream.depth)
    return replace(info, depth_scale_m=DEPTH_SCALE_M if millimetres else sensor_scale_m,
                   sensor_depth_scale_m=sensor_scale_m)


def sensor_depth_scale_m(device) -> float:
    """Metres per unit of a librealsense device's depth values (its float32, to that precision: 0.001, not
    0.0010000000474974513)."""
    return float(f"{device.first_depth_sensor().get_depth_scale():.7g}")


def depth_in_millimetres(raw, depth_scale_m: float):
    """A z16 depth map in the sensor's unit (depth_scale_m metres each) as uint16 millimetres (rounded; 0 stays 0,
    the sensor's "no depth")."""
    if depth_scale_m == DEPTH_SCALE_M:
        return raw
    millimetres = np.rint(raw.astype(np.float64) * (depth_scale_m / DEPTH_SCALE_M))
    return np.minimum(millimetres, np.iinfo(np.uint16).max).astype(np.uint16)


def _stream_info(camera, stream) -> CameraInfo:
    import pyrealsense2 as rs  # as above

    if camera.rs_profile is None:
        raise DeviceError(f"{camera} is not connected: call connect() before reading its intrinsics")
    if camera.rotation is not None:
        logger.warning("%s: images are rotated (%s); camera_info.json records no intrinsics for it", camera,
                       camera.config.rotation)
        return CameraInfo(camera.width, camera.height)
    k = camera.rs_profile.get_stream(stream).as_video_stream_profile().get_intrinsics()
    coefficients: tuple[float, ...]
    if k.model == rs.distortion.none:
        model, coefficients = "plumb_bob", (0.0,) * 5
    else:
        model, coefficients = k.model.name, tuple(float(c) for c in k.coeffs)
    return CameraInfo(k.width, k.height, float(k.fx), float(k.fy), float(k.ppx), float(k.ppy),
                      distortion_model=model, distortion=coefficients)
