"""Config of the camera that renders the MuJoCo world (--robot.backend=mujoco)."""

from dataclasses import dataclass

from lerobot.cameras import CameraConfig

from .config_render_camera import TeledexRenderCameraConfig


@CameraConfig.register_subclass("teledex_world")
@dataclass(kw_only=True)
class TeledexWorldCameraConfig(TeledexRenderCameraConfig):
    """Same settings as teledex_render (view, size, fps, latency); the view names where the camera stands around
    the task's workspace."""

    view: str = "oblique"
    # Record the depth map too (<name>_depth: uint16 millimetres, aligned to the colour by construction), as
    # LeRobot's intelrealsense camera does with use_depth.
    use_depth: bool = False
