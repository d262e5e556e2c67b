"""Config of the replay teleoperator: plays a recorded operator stream in real time."""

from dataclasses import dataclass

from lerobot.teleoperators import TeleoperatorConfig


@TeleoperatorConfig.register_subclass("teledex_replay")
@dataclass(kw_only=True)
class TeledexReplayConfig(TeleoperatorConfig):
    # A stream name in configs/streams/ (e.g. demo_grasp, open_close, pinches) or a path to a .npz operator stream.
    stream: str = "demo_grasp"
    # The rig driven; must be the robot's rig. A preset name, or leave the preset and give arm_model / hand_model
    # (built-in names or URDF paths) to drive --robot.type=teledex_arm / teledex_hand.
    preset: str = "piper_linkerhand_o6_single"
    arm_model: str = ""
    hand_model: str = ""
    side: str = "right"
    # Joint map file for the hand; empty = configs/joint_maps/<hand model>[_<side>].yaml.
    joint_map: str = ""
    # Replay speed factor and whether to start over at the end (otherwise the last sample is held).
    speed: float = 1.0
    loop: bool = True

    def __post_init__(self):
        if self.speed <= 0:
            raise ValueError(f"speed must be > 0 (got {self.speed})")
