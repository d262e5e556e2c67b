"""The rig a TeleDex teleoperator drives: the robot's own, given once to the robot, unless the teleoperator is told
otherwise."""

from dataclasses import dataclass

from lerobot.teleoperators import TeleoperatorConfig

from teledex_lerobot.errors import ConfigError
from teledex_lerobot.presets import PartSpec, load_preset
from teledex_lerobot.rig import Rig
from teledex_lerobot.station import describe, find_station


@dataclass(kw_only=True)
class TeledexRigTeleopConfig(TeleoperatorConfig):
    # The rig driven. Empty (default): the TeleDex robot's own rig (lerobot-record, lerobot-teleoperate and
    # teledex-record build the robot first, and it announces its rig), so the rig is given once, to the robot.
    # Otherwise a preset name (as --robot.preset), or arm_model / hand_model (built-in names or URDF paths) as
    # --robot.type=teledex_arm / teledex_hand; a rig that differs from the robot's is refused with both named.
    preset: str = ""
    arm_model: str = ""  # the arm driven: a built-in model name (piper, linker_a7) or a URDF path; "" = none
    hand_model: str = ""  # the hand driven: a built-in model name (linkerhand_o6, ...) or a URDF path; "" = none
    side: str = "right"  # the side of arm_model / hand_model (right or left)
    # Where this teleoperator finds its robot (its rig, measured pose, world, live view): the robot's --robot.station.
    # "" = the process's default. With no robot there, it drives only the rig it is given, from what send_feedback
    # tells it.
    station: str = ""

    def rigs(self) -> dict[str, Rig]:
        """The rig(s) driven, by the prefix of their keys ("" for one rig; "<follower>_" for a robot's followers)."""
        if self.arm_model or self.hand_model:
            arm = PartSpec(self.arm_model, self.side) if self.arm_model else None
            hand = PartSpec(self.hand_model, self.side) if self.hand_model else None
            return {"": Rig.from_parts(arm, hand)}
        if self.preset:
            return {"": Rig.from_preset(load_preset(self.preset))}
        station = find_station(self.station)
        if station is None or station.rigs is None:
            raise ConfigError(f"No rig to drive: no TeleDex robot in {describe(self.station)}. Build the robot first "
                              "(lerobot-record, lerobot-teleoperate and teledex-record do; the teleoperator then "
                              "drives the robot's rig) with the same --robot.station as --teleop.station, or give the "
                              "teleoperator one: --teleop.preset=<preset> or --teleop.arm_model / hand_model.")
        return {prefix: Rig.from_parts(parts.arm, parts.hand, parts.hand_mount)
                for prefix, parts in station.rigs.items()}

    def rig(self) -> Rig:
        """The single rig driven; several followers need `rigs()`."""
        rigs = self.rigs()
        if list(rigs) != [""]:
            raise ConfigError(f"The robot has several followers ({', '.join(p.rstrip('_') for p in rigs)}); this "
                              "teleoperator drives one rig: give it --teleop.preset or --teleop.arm_model/hand_model.")
        return rigs[""]
