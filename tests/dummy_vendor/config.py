"""The Acme gripper's settings (--robot.real.acme.* once it is in the registry's VENDORS line)."""

from dataclasses import dataclass


@dataclass
class AcmeConfig:
    # the gripper's fingertip pads, reported as 2x2 pressure matrices
    tactile: bool = True

    def validate(self) -> None:
        pass
