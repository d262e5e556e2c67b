"""What camera_info.json records for a LeRobot camera: resolution, intrinsics and pose where the camera knows them."""

from teledex_lerobot.devices.realsense.camera_info import realsense_camera_info
from teledex_lerobot.geometry.camera import CameraInfo

from .render_camera import TeledexRenderCamera


def _is_realsense(camera) -> bool:
    try:  # imported here: the module imports pyrealsense2, which fails without libusb
        from lerobot.cameras.realsense import RealSenseCamera
    except ImportError:
        return False  # then no RealSenseCamera can exist either
    return isinstance(camera, RealSenseCamera)


def camera_info(camera) -> CameraInfo:
    if isinstance(camera, TeledexRenderCamera) and camera.renderer is not None:
        k = camera.renderer.intrinsics
        return CameraInfo(k.width, k.height, k.fx, k.fy, k.cx, k.cy,
                          world_from_camera=camera.renderer.world_from_camera.tolist())
    if _is_realsense(camera) and camera.is_connected:
        return realsense_camera_info(camera)
    intrinsics = getattr(camera, "intrinsics", None)  # cameras that expose a CameraInfo themselves
    if isinstance(intrinsics, CameraInfo):
        return intrinsics
    return CameraInfo(camera.width, camera.height)
