"""LeRobot plugin: TeleDex teleoperators (teledex_replay, teledex_glove, teledex_xr, teledex_keypoints,
teledex_leader_arm, teledex_world_expert). With `followers`, one input leads several rigs (the teledex_followers
robot)."""

from .config_teledex_input import (
                                   TeledexGloveConfig,
                                   TeledexInputConfig,
                                   TeledexKeypointsConfig,
                                   TeledexLeaderArmConfig,
                                   TeledexXRConfig,
)
from .config_teledex_replay import TeledexReplayConfig
from .teledex_input import TeledexGlove, TeledexInputTeleop, TeledexKeypoints, TeledexXR
from .teledex_leader_arm import TeledexLeaderArm
from .teledex_replay import TeledexReplay
from .world_expert import TeledexWorldExpert, TeledexWorldExpertConfig

__all__ = [
    "TeledexGlove",
    "TeledexGloveConfig",
    "TeledexInputConfig",
    "TeledexInputTeleop",
    "TeledexKeypoints",
    "TeledexKeypointsConfig",
    "TeledexLeaderArm",
    "TeledexLeaderArmConfig",
    "TeledexReplay",
    "TeledexReplayConfig",
    "TeledexXR",
    "TeledexWorldExpert",
    "TeledexWorldExpertConfig",
    "TeledexXRConfig",
]
