"""Linker Arm A7 settings: --robot.real.linker_a7.<setting>."""

from dataclasses import dataclass

from ..real_config import check_ranges


@dataclass
class LinkerA7Config:
    # Position polling rate (linkerbot's default is 100 Hz).
    poll_hz: float = 100.0
    # The motors' profile speed and acceleration (their own trapezoidal trajectory toward each target), set at
    # connect. linkerbot accepts speeds in (0, 50] and accelerations in [1, 50].
    speed_rad_s: float = 3.0
    acceleration_rad_s2: float = 10.0  # the profile's acceleration

    def validate(self) -> None:
        check_ranges("linker_a7", [("poll_hz", self.poll_hz, 1, 1000), ("speed_rad_s", self.speed_rad_s, 1e-3, 50),
                                   ("acceleration_rad_s2", self.acceleration_rad_s2, 1, 50)])
