"""The rig a TeleDex teleoperator drives, described the way the robot describes it, so their keys match."""

from dataclasses import dataclass

from lerobot.teleoperators import TeleoperatorConfig

from teledex_lerobot.presets import PartSpec, load_preset
from teledex_lerobot.rig import Rig


@dataclass(kw_only=True)
class TeledexRigTeleopConfig(TeleoperatorConfig):
    # Must be the robot's rig: a preset name (as --robot.type=teledex), or leave the preset and give arm_model /
    # hand_model (built-in names or URDF paths) to drive --robot.type=teledex_arm / teledex_hand.
    preset: str = "piper_linkerhand_o6_single"
    arm_model: str = ""
    hand_model: str = ""
    side: str = "right"

    def rig(self) -> Rig:
        if self.arm_model or self.hand_model:
            arm = PartSpec(self.arm_model, self.side) if self.arm_model else None
            hand = PartSpec(self.hand_model, self.side) if self.hand_model else None
            return Rig.from_parts(arm, hand)
        return Rig.from_preset(load_preset(self.preset))
