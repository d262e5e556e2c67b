"""Settings every real device shares: where each part is plugged in and how its driver is supervised.

The registry adds one section per vendor (devices/<vendor>/config.py) to make RealHardwareConfig, so that on the
command line: --robot.real.arm.channel=can0 --robot.real.feedback_timeout_ms=50 --robot.real.agilex.speed_percent=80.
"""

from dataclasses import dataclass, field

from ..can.port import CanPortConfig
from ..errors import ConfigError


@dataclass
class SharedRealConfig:
    arm: CanPortConfig = field(default_factory=CanPortConfig)  # the arm's CAN port (--robot.real.arm.channel=can0)
    hand: CanPortConfig = field(default_factory=lambda: CanPortConfig(channel="can1"))  # the hand's CAN port
    # A device whose last measurement is older than this is in fault (feedback_timeout). The Piper streams at
    # 200 Hz, the A7 and the hands are polled at 100 and 60 Hz, so 50 ms is several missed messages, and with the
    # 10 ms watchdog period a silent device is flagged well within 100 ms.
    feedback_timeout_ms: float = 50.0
    watchdog_period_ms: float = 10.0  # how often each driver checks its device's feedback age
    connect_timeout_s: float = 3.0  # how long connecting (and re-arming) waits for the device to answer
    # A commanded target may exceed the model limits by this much (float round-off) before it is a fault.
    limit_tolerance_rad: float = 1e-6

    def validate(self) -> None:
        self.arm.validate("real.arm")
        self.hand.validate("real.hand")
        timings = {"feedback_timeout_ms": self.feedback_timeout_ms, "watchdog_period_ms": self.watchdog_period_ms,
                   "connect_timeout_s": self.connect_timeout_s}
        problems = [f"real.{name} must be > 0 (got {value})" for name, value in timings.items() if not value > 0]
        if problems:
            raise ConfigError("; ".join(problems))

    def port_for(self, role: str) -> CanPortConfig:
        return self.arm if role == "arm" else self.hand


@dataclass
class RigPorts:
    """Where one rig's parts are plugged in (a follower of several rigs: --robot.ports.<follower>)."""

    arm: CanPortConfig = field(default_factory=CanPortConfig)  # this rig's arm port
    hand: CanPortConfig = field(default_factory=lambda: CanPortConfig(channel="can1"))  # this rig's hand port


def check_distinct_ports(ports: dict[str, RigPorts], parts: dict[str, tuple[str, ...]]) -> None:
    """One line naming every port two parts share (two devices answering on one channel corrupt each other's
    feedback). parts: the roles each rig has."""
    users: dict[tuple[str, str], list[str]] = {}
    for rig, rig_ports in ports.items():
        for role in parts.get(rig, ()):
            port = getattr(rig_ports, role)
            users.setdefault((port.interface, port.channel), []).append(f"{rig}.{role}")
    shared = [f"{interface}:{channel} ({' and '.join(names)})" for (interface, channel), names in users.items()
              if len(names) > 1]
    if shared:
        raise ConfigError(f"Each part needs its own CAN port, but {'; '.join(shared)} share one: give each its own "
                          "channel in --robot.ports")


def check_ranges(section: str, checks: list[tuple[str, float, float, float]]) -> None:
    """checks: (field, value, low, high), inclusive. One error naming every field out of range."""
    problems = [f"real.{section}.{name} must be in [{low}, {high}] (got {value})"
                for name, value, low, high in checks if not low <= value <= high]
    if problems:
        raise ConfigError("; ".join(problems))
