"""TeleDex robots: teledex (a preset's arm + hand + cameras rig), teledex_arm, teledex_hand, and teledex_followers
(several rigs recorded as one robot); with backend=mujoco a robot's parts share a simulated world (robot_world.py).

LeRobot builds each from its config (make_device_from_device_class): it looks for the class named as the config
without "Config" (TeledexConfig -> Teledex) in the config's package, this one.
"""

from .config_teledex import TeledexArmConfig, TeledexConfig, TeledexHandConfig, TeledexRobotConfig
from .followers import TeledexFollowers, TeledexFollowersConfig
from .robot_world import RobotWorld
from .teledex_robot import Teledex, TeledexArm, TeledexHand, TeledexRobotBase

__all__ = [
    "RobotWorld",
    "Teledex",
    "TeledexArm",
    "TeledexArmConfig",
    "TeledexConfig",
    "TeledexFollowers",
    "TeledexFollowersConfig",
    "TeledexHand",
    "TeledexHandConfig",
    "TeledexRobotBase",
    "TeledexRobotConfig",
]
