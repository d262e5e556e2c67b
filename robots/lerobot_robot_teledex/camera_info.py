"""What camera_info.json records for a LeRobot camera: resolution, intrinsics and pose where the camera knows them."""

from teledex_lerobot.storage.native import CameraInfo

from .render_camera import TeledexRenderCamera


def camera_info(camera) -> CameraInfo:
    if isinstance(camera, TeledexRenderCamera) and camera.renderer is not None:
        k = camera.renderer.intrinsics
        return CameraInfo(k.width, k.height, k.fx, k.fy, k.cx, k.cy,
                          world_from_camera=camera.renderer.world_from_camera.tolist())
    intrinsics = getattr(camera, "intrinsics", None)  # cameras that expose a CameraInfo themselves
    if isinstance(intrinsics, CameraInfo):
        return intrinsics
    return CameraInfo(camera.width, camera.height)
