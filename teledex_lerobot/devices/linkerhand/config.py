"""LinkerHand settings (O6, L10, L20): --robot.real.linkerhand.<setting>."""

from dataclasses import dataclass

from ..real_config import check_ranges


@dataclass
class LinkerHandConfig:
    # Position polling rate (the vendor SDK polls at 60 Hz).
    poll_hz: float = 60.0
    # Motor speed and torque limit, 0-255, set at connect.
    speed_raw: int = 200
    torque_raw: int = 200  # the torque limit, 0-255
    # Poll the tactile matrices and observe every taxel (costs bus bandwidth; off: the features equal backend=sim's).
    tactile: bool = False

    def validate(self) -> None:
        check_ranges("linkerhand", [("poll_hz", self.poll_hz, 1, 1000), ("speed_raw", self.speed_raw, 0, 255),
                                    ("torque_raw", self.torque_raw, 0, 255)])
