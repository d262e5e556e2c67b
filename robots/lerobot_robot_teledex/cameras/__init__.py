"""TeleDex cameras: teledex_render (the rig drawn as a stick figure), teledex_world (the MuJoCo world rendered, with
its depth map) and teledex_realsense (LeRobot's RealSense camera, depth aligned to colour); what camera_info.json
records of each (camera_info.py), and their depth streams (depth_streams.py).

LeRobot builds each from its config (make_device_from_device_class): it finds the class in the config's module with
"config_" dropped (config_render_camera -> render_camera).
"""

from .config_render_camera import TeledexRenderCameraConfig
from .config_world_camera import TeledexWorldCameraConfig
from .render_camera import TeledexRenderCamera
from .world_camera import TeledexWorldCamera

try:  # pyrealsense2 needs libusb-1.0; without it there is no RealSense camera to configure
    from .config_realsense_camera import TeledexRealSenseCameraConfig  # noqa: F401  (registers teledex_realsense)
except ImportError:
    pass

__all__ = [
    "TeledexRenderCamera",
    "TeledexRenderCameraConfig",
    "TeledexWorldCamera",
    "TeledexWorldCameraConfig",
]
