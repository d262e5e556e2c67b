"""Config of the camera that renders the MuJoCo world (--robot.backend=mujoco)."""

from dataclasses import dataclass

from lerobot.cameras import CameraConfig

from teledex_lerobot.errors import ConfigError

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

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.use_depth and self.stereo_baseline_m:
            raise ConfigError(f"camera view {self.view!r}: use_depth with stereo_baseline_m={self.stereo_baseline_m}: "
                              "a stereo pair records no depth map (its depth is in the disparity between its eyes); "
                              "set stereo_baseline_m=0 for an RGB-D camera, or use_depth=false")
