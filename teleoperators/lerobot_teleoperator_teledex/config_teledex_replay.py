"""Config of the replay teleoperator: plays a recorded operator stream in real time."""

from dataclasses import dataclass

from lerobot.teleoperators import TeleoperatorConfig

from .config_rig import TeledexRigTeleopConfig

RETARGETING_CHOICES = ("auto", "joint_mapping", "teledex", "dexpilot")


@TeleoperatorConfig.register_subclass("teledex_replay")
@dataclass(kw_only=True)
class TeledexReplayConfig(TeledexRigTeleopConfig):
    # A stream name in configs/streams/ (e.g. demo_grasp, open_close, pinches) or a path to a .npz operator stream.
    stream: str = "demo_grasp"
    # How the hand is driven: "teledex" / "dexpilot" retarget hand keypoints (keypoint streams only);
    # "joint_mapping" maps canonical hand angles (any stream); "auto" = teledex for keypoint streams (unless
    # joint_map is given), joint_mapping otherwise.
    retargeting: str = "auto"
    # Retargeting config YAML (see teledex_lerobot/retargeting/config.py); empty = defaults.
    retargeting_config: str = ""
    # The operator's calibration file from teledex-calibrate-hand; empty = the average adult hand.
    hand_calibration: str = ""
    # Joint map file for the hand (joint_mapping); empty = configs/joint_maps/<hand model>[_<side>].yaml.
    joint_map: str = ""
    # Replay speed factor and whether to start over at the end (otherwise the last sample is held).
    speed: float = 1.0
    loop: bool = True

    def __post_init__(self):
        if self.speed <= 0:
            raise ValueError(f"speed must be > 0 (got {self.speed})")
        if self.retargeting not in RETARGETING_CHOICES:
            raise ValueError(f"retargeting must be one of {RETARGETING_CHOICES} (got {self.retargeting!r})")
