"""LeRobot plugin: TeleDex robots (teledex_arm, teledex_hand, teledex, teledex_followers), the teledex_render and
teledex_world simulated cameras, and teledex_realsense (LeRobot's RealSense camera, depth aligned to colour).

LeRobot imports this package because the distribution is named lerobot_robot_teledex; importing the teleoperator
package here registers our teleoperator types in the same step (one distribution, one discovery hook).
"""

import lerobot_teleoperator_teledex  # noqa: F401  (registers --teleop.type values)

from .config_render_camera import TeledexRenderCameraConfig
from .config_teledex import TeledexArmConfig, TeledexConfig, TeledexHandConfig, TeledexRobotConfig
from .config_world_camera import TeledexWorldCameraConfig
from .env_config import TeledexEnvConfig
from .followers import TeledexFollowers, TeledexFollowersConfig
from .render_camera import TeledexRenderCamera
from .teledex_robot import Teledex, TeledexArm, TeledexHand, TeledexRobotBase
from .world_camera import TeledexWorldCamera

try:  # pyrealsense2 needs libusb-1.0; without it there is no RealSense camera to configure
    from .config_realsense_camera import TeledexRealSenseCameraConfig  # noqa: F401  (registers teledex_realsense)
except ImportError:
    pass

__all__ = [
    "Teledex",
    "TeledexArm",
    "TeledexArmConfig",
    "TeledexConfig",
    "TeledexEnvConfig",
    "TeledexFollowers",
    "TeledexFollowersConfig",
    "TeledexHand",
    "TeledexHandConfig",
    "TeledexRenderCamera",
    "TeledexRenderCameraConfig",
    "TeledexRobotBase",
    "TeledexRobotConfig",
    "TeledexWorldCamera",
    "TeledexWorldCameraConfig",
]
