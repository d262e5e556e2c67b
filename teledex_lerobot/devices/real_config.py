"""Settings of the real-hardware backend: where each device is plugged in and how it is supervised."""

import logging
from dataclasses import dataclass, field

logger = logging.getLogger(__name__)

# "teledex" is the loopback bus teledex-sim serves; "virtual" reaches only buses of the same process.
CAN_INTERFACES = ("socketcan", "teledex", "virtual", "slcan", "pcan", "kvaser", "gs_usb", "udp_multicast")
# python-can's udp_multicast sends every frame to a multicast group through the network interface, and hands every
# bus its own frames back.
NETWORK_INTERFACES = frozenset({"udp_multicast"})
ECHOING_INTERFACES = frozenset({"udp_multicast"})


@dataclass
class CanPortConfig:
    """A python-can bus: interface (python-can backend name) and channel (e.g. can0, or a channel teledex-sim
    serves on the teledex interface)."""

    interface: str = "socketcan"
    channel: str = "can0"
    bitrate: int = 1_000_000

    def validate(self, what: str) -> None:
        if self.interface not in CAN_INTERFACES:
            raise ValueError(f"{what}.interface must be one of {CAN_INTERFACES} (got {self.interface!r})")
        if not self.channel:
            raise ValueError(f"{what}.channel must be set (e.g. can0)")
        if self.interface in NETWORK_INTERFACES:
            logger.warning("%s.interface=%s sends every CAN frame onto this machine's network (a multicast group "
                           "on the LAN). For simulated devices on this machine use interface=teledex (teledex-sim).",
                           what, self.interface)

    def check_opens(self, who: str) -> None:
        """Open and close the bus once, for SDKs that swallow a failure to open it (piper_sdk) and then only
        ever hear silence."""
        import can

        try:
            can.Bus(channel=self.channel, interface=self.interface, bitrate=self.bitrate).shutdown()
        except Exception as error:
            raise ConnectionError(f"{who}: cannot open CAN {self.interface}:{self.channel}: {error}") from error

    def refuse_echoing(self, who: str) -> None:
        """For drivers whose requests and replies share CAN IDs: on a bus that echoes, they would take their own
        frames for the device's replies."""
        if self.interface in ECHOING_INTERFACES:
            raise ValueError(f"{who} cannot run on {self.interface}: every bus there hears its own frames back, "
                             "and its requests and replies share CAN IDs. Use interface=teledex (teledex-sim) or "
                             "socketcan.")


@dataclass
class RealHardwareConfig:
    """Per-part CAN ports plus the supervision thresholds shared by every real driver."""

    arm: CanPortConfig = field(default_factory=CanPortConfig)
    hand: CanPortConfig = field(default_factory=lambda: CanPortConfig(channel="can1"))
    # A device whose last measurement is older than this is in fault (feedback_timeout). The Piper streams at
    # 200 Hz, the A7 is polled at a7_poll_hz and hands at hand_poll_hz, so 50 ms is several missed messages, and
    # with the 10 ms watchdog period a silent device is flagged well within 100 ms.
    feedback_timeout_ms: float = 50.0
    watchdog_period_ms: float = 10.0
    connect_timeout_s: float = 3.0
    # Piper: MotionCtrl_2 speed percentage (the arm's own trajectory speed, 0-100).
    piper_speed_percent: int = 50
    # Piper gripper effort for GripperCtrl, N*m (0-5).
    piper_gripper_effort_nm: float = 1.0
    # Piper: send DisableArm on disconnect. Off by default: a disabled Piper goes limp and drops under gravity.
    piper_disable_on_disconnect: bool = False
    # LinkerHand: position polling rate (the vendor SDK polls at 60 Hz), motor speed 0-255 and torque limit 0-255
    # set at connect, and whether to poll the tactile matrices (optional observation; costs bus bandwidth).
    hand_poll_hz: float = 60.0
    hand_speed_raw: int = 200
    hand_torque_raw: int = 200
    hand_tactile: bool = False
    # Linker Arm A7: position/velocity polling rate (linkerbot's default is 100 Hz) and the motors' profile speed and
    # acceleration (their own trapezoidal trajectory toward each target), set at connect. linkerbot accepts speeds in
    # [0, 50] and accelerations in [1, 50].
    a7_poll_hz: float = 100.0
    a7_speed_rad_s: float = 3.0
    a7_acceleration_rad_s2: float = 10.0
    # A commanded target may exceed the model limits by this much (float round-off) before it is a fault.
    limit_tolerance_rad: float = 1e-6

    def validate(self) -> None:
        self.arm.validate("real.arm")
        self.hand.validate("real.hand")
        problems = []
        if self.feedback_timeout_ms <= 0 or self.watchdog_period_ms <= 0 or self.connect_timeout_s <= 0:
            problems.append("real.feedback_timeout_ms, real.watchdog_period_ms and real.connect_timeout_s must be > 0")
        if not 1 <= self.piper_speed_percent <= 100:
            problems.append(f"real.piper_speed_percent must be in [1, 100] (got {self.piper_speed_percent})")
        if not 0 <= self.piper_gripper_effort_nm <= 5:
            problems.append(f"real.piper_gripper_effort_nm must be in [0, 5] (got {self.piper_gripper_effort_nm})")
        if self.hand_poll_hz <= 0:
            problems.append(f"real.hand_poll_hz must be > 0 (got {self.hand_poll_hz})")
        if self.a7_poll_hz <= 0:
            problems.append(f"real.a7_poll_hz must be > 0 (got {self.a7_poll_hz})")
        if not 0 < self.a7_speed_rad_s <= 50:
            problems.append(f"real.a7_speed_rad_s must be in (0, 50] (got {self.a7_speed_rad_s})")
        if not 1 <= self.a7_acceleration_rad_s2 <= 50:
            problems.append(f"real.a7_acceleration_rad_s2 must be in [1, 50] (got {self.a7_acceleration_rad_s2})")
        for name in ("hand_speed_raw", "hand_torque_raw"):
            if not 0 <= getattr(self, name) <= 255:
                problems.append(f"real.{name} must be in [0, 255]")
        if problems:
            raise ValueError("; ".join(problems))

    def port_for(self, role: str) -> CanPortConfig:
        return self.arm if role == "arm" else self.hand
