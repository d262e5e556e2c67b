"""What camera_info.json records for a LeRobot camera: resolution, intrinsics and pose where the camera knows them;
for its depth stream, the same of the depth map as recorded and its depth scale."""

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from teledex_lerobot.devices.realsense.camera_info import realsense_camera_info, realsense_depth_info
from teledex_lerobot.geometry.camera import DEPTH_SCALE_M, CameraInfo

from .depth_streams import depth_key, reads_depth
from .render_camera import TeledexRenderCamera
from .world_camera import TeledexWorldCamera

if TYPE_CHECKING:
    from lerobot.cameras.realsense import RealSenseCamera

    from .realsense_camera import TeledexRealSenseCamera


def _realsense_classes() -> "tuple[type[RealSenseCamera], type[TeledexRealSenseCamera]] | None":
    """(LeRobot's RealSenseCamera, ours), or None without pyrealsense2."""
    try:  # imported here: the modules import pyrealsense2, which fails without libusb
        from lerobot.cameras.realsense import RealSenseCamera

        from .realsense_camera import TeledexRealSenseCamera
    except ImportError:
        return None  # then no RealSense camera can exist either
    return RealSenseCamera, TeledexRealSenseCamera


def camera_info(camera) -> CameraInfo:
    if isinstance(camera, TeledexWorldCamera) and camera.world_renderer is not None:
        renderer = camera.world_renderer
        k, mount = renderer.intrinsics, renderer.mount
        # a stereo pair: the left eye's intrinsics and pose, in its frame of both eyes side by side
        stereo_baseline_m = renderer.baseline_m or None
        if mount is not None:
            return CameraInfo(camera.width, k.height, k.fx, k.fy, k.cx, k.cy, mounted_on=mount[0],
                              part_from_camera=mount[1].tolist(), stereo_baseline_m=stereo_baseline_m)
        return CameraInfo(camera.width, k.height, k.fx, k.fy, k.cx, k.cy,
                          world_from_camera=renderer.base_from_camera.tolist(), stereo_baseline_m=stereo_baseline_m)
    if isinstance(camera, TeledexRenderCamera) and camera.renderer is not None:
        k = camera.renderer.intrinsics
        return CameraInfo(k.width, k.height, k.fx, k.fy, k.cx, k.cy,
                          world_from_camera=camera.renderer.world_from_camera.tolist())
    realsense = _realsense_classes()
    if realsense and isinstance(camera, realsense[0]) and camera.is_connected:
        return realsense_camera_info(camera)
    intrinsics = getattr(camera, "intrinsics", None)  # cameras that expose a CameraInfo themselves
    if isinstance(intrinsics, CameraInfo):
        return intrinsics
    return CameraInfo(camera.width, camera.height)


def depth_info(camera) -> CameraInfo:
    """The depth stream of a camera with use_depth, as recorded."""
    if isinstance(camera, TeledexWorldCamera):  # rendered by the same camera at the same instant
        return replace(camera_info(camera), depth_scale_m=DEPTH_SCALE_M)
    realsense = _realsense_classes()
    if realsense and isinstance(camera, realsense[0]) and camera.is_connected:
        ours = isinstance(camera, realsense[1])  # LeRobot's own: unaligned, in the sensor's unit
        return realsense_depth_info(camera, aligned=ours and camera.aligns_depth, millimetres=ours)
    return CameraInfo(camera.width, camera.height)


def stream_infos(cameras: Mapping) -> dict[str, CameraInfo]:
    """camera_info.json's entries: each camera's colour stream by its name, its depth stream as <name>_depth."""
    infos = {}
    for name, camera in cameras.items():
        infos[name] = camera_info(camera)
        if reads_depth(camera):
            infos[depth_key(name)] = depth_info(camera)
    return infos
