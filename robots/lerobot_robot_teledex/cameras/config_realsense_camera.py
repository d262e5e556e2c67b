"""Config of LeRobot's RealSense camera with depth aligned to colour, and recordings played back in its place."""

from dataclasses import dataclass
from pathlib import Path

from lerobot.cameras import CameraConfig
from lerobot.cameras.realsense import RealSenseCameraConfig

from teledex_lerobot.errors import ConfigError


@CameraConfig.register_subclass("teledex_realsense")
@dataclass
class TeledexRealSenseCameraConfig(RealSenseCameraConfig):
    """LeRobot's intelrealsense settings, the same camera; with use_depth its depth map is aligned to the colour
    image (rs.align: the colour's pixels and intrinsics) and in millimetres whatever the sensor's unit."""

    # A RealSense recording played in place of the camera (looping, at its recorded rate): a ROS2 .db3, as
    # librealsense's recorder writes, or a ROS1 .bag. serial_number_or_name is then the recorded camera's serial.
    playback_file: str | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.playback_file is None:
            return
        if not Path(self.playback_file).is_file():
            raise ConfigError(f"playback_file {self.playback_file!r} is not a file: give the path of a RealSense "
                              "recording (.db3 or .bag)")
        if not self.serial_number_or_name.isdigit():
            raise ConfigError(f"serial_number_or_name {self.serial_number_or_name!r}: with playback_file give the "
                              "recorded camera's serial number (digits); names are looked up on connected cameras")
