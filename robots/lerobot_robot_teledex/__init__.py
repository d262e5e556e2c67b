"""LeRobot plugin: TeleDex robots (teledex_arm, teledex_hand, teledex, teledex_followers), the teledex_render and
teledex_world simulated cameras, teledex_realsense (LeRobot's RealSense camera, depth aligned to colour) and the
teledex env (the MuJoCo world's tasks), laid out as LeRobot keeps them: robots/, cameras/, envs/; beside them the
sync-validation wrapper any robot is recorded through (sync_validated.py).

LeRobot imports this package because the distribution is named lerobot_robot_teledex: importing it imports every
config class, which registers each --robot.type, camera type and --env.type. Importing the teleoperator package here
registers our teleoperator types in the same step (one distribution, one discovery hook), and an error of ours in
LeRobot's commands then ends in one line, exit code 2, as in ours (teledex_lerobot/errors.py).
"""

import lerobot_teleoperator_teledex  # noqa: F401  (registers --teleop.type values)
from teledex_lerobot.errors import end_lerobot_commands_in_one_line

from .cameras import TeledexRenderCamera, TeledexRenderCameraConfig, TeledexWorldCamera, TeledexWorldCameraConfig
from .envs import TeledexEnvConfig
from .robots import (
    Teledex,
    TeledexArm,
    TeledexArmConfig,
    TeledexConfig,
    TeledexFollowers,
    TeledexFollowersConfig,
    TeledexHand,
    TeledexHandConfig,
    TeledexRobotBase,
    TeledexRobotConfig,
)

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

end_lerobot_commands_in_one_line()
