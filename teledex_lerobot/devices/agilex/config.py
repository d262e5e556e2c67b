"""Agilex Piper settings: --robot.real.agilex.<setting>."""

from dataclasses import dataclass

from ..real_config import check_ranges


@dataclass
class PiperConfig:
    # MotionCtrl_2 speed percentage: the arm's own trajectory speed toward each target.
    speed_percent: int = 50
    # Gripper effort for GripperCtrl, N*m (0-5).
    gripper_effort_nm: float = 1.0
    # Send DisableArm on disconnect. Off by default: a disabled Piper goes limp and drops under gravity.
    disable_on_disconnect: bool = False

    def validate(self) -> None:
        check_ranges("agilex", [("speed_percent", self.speed_percent, 1, 100),
                                ("gripper_effort_nm", self.gripper_effort_nm, 0, 5)])
