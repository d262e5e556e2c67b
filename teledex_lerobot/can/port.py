"""Where a CAN device is plugged in: a python-can interface and channel, and what those interfaces imply."""

import logging
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..errors import ConfigError, DeviceError

logger = logging.getLogger(__name__)

# "teledex" is the loopback bus teledex-sim serves; "virtual" reaches only buses of the same process.
CAN_INTERFACES = ("socketcan", "teledex", "virtual", "slcan", "pcan", "kvaser", "gs_usb", "udp_multicast")
# python-can's udp_multicast sends every frame to a multicast group through the network interface, and hands every
# bus its own frames back.
NETWORK_INTERFACES = frozenset({"udp_multicast"})
ECHOING_INTERFACES = frozenset({"udp_multicast"})


class PortUnavailable(DeviceError):
    """A CAN port that cannot be opened (interface missing, down, at another bitrate, or refused by python-can): the
    message is one line saying what was found and the fix, for commands to print without a traceback (a DeviceError,
    as devices.device_fault.DeviceUnavailable is)."""


@dataclass
class CanPortConfig:
    """A python-can bus: interface (python-can backend name) and channel (e.g. can0, or a channel teledex-sim
    serves on the teledex interface)."""

    interface: str = "socketcan"  # socketcan (a Linux CAN adapter), teledex (teledex-sim), virtual, slcan, pcan, ...
    channel: str = "can0"  # the interface's channel: can0, can1, ...
    bitrate: int = 1_000_000  # bit/s; the devices run at 1 Mbit/s

    def validate(self, what: str) -> None:
        if self.interface not in CAN_INTERFACES:
            raise ConfigError(f"{what}.interface must be one of {CAN_INTERFACES} (got {self.interface!r})")
        if not self.channel:
            raise ConfigError(f"{what}.channel must be set (e.g. can0)")
        if self.interface in NETWORK_INTERFACES:
            logger.warning("%s.interface=%s sends every CAN frame onto this machine's network (a multicast group "
                           "on the LAN). For simulated devices on this machine use interface=teledex (teledex-sim).",
                           what, self.interface)

    def socketcan_problem(self) -> tuple[str, str] | None:
        """(what is wrong, the fix) when this socketcan interface is missing, down or at another bitrate; None when
        it looks right, or is not socketcan (other interfaces have no such state to read)."""
        if self.interface != "socketcan":
            return None
        net = Path("/sys/class/net") / self.channel
        up = f"sudo ip link set {self.channel} up type can bitrate {self.bitrate}"
        if not net.exists():
            return (f"there is no CAN interface {self.channel!r} on this machine",
                    "plug in the USB-CAN adapter, list the CAN interfaces with `ip -br link show type can` and give "
                    "one of those as the channel")
        if (net / "operstate").read_text().strip() not in ("up", "unknown"):
            return f"the CAN interface {self.channel} is down", up
        details = subprocess.run(["ip", "-details", "link", "show", self.channel], capture_output=True,
                                 text=True).stdout
        if "bitrate" in details and f"bitrate {self.bitrate}" not in details:
            return (f"the CAN interface {self.channel} is not at {self.bitrate} bit/s",
                    f"sudo ip link set {self.channel} down && {up}")
        return None

    def check_opens(self, who: str) -> None:
        """Fail with one line saying what is wrong and the fix when the interface is missing, down or cannot be
        opened: for SDKs that swallow a failure to open their bus (piper_sdk) and then only ever hear silence."""
        import can

        problem = self.socketcan_problem()
        if problem is not None:
            raise PortUnavailable(f"{who}: {problem[0]}. Fix: {problem[1]}.")
        try:
            can.Bus(channel=self.channel, interface=self.interface, bitrate=self.bitrate).shutdown()
        except Exception as error:
            raise PortUnavailable(f"{who}: cannot open CAN {self.interface}:{self.channel}: "
                                  f"{str(error).splitlines()[0] if str(error) else type(error).__name__}") from None

    def refuse_echoing(self, who: str) -> None:
        """For drivers whose requests and replies share CAN IDs: on a bus that echoes, they would take their own
        frames for the device's replies."""
        if self.interface in ECHOING_INTERFACES:
            raise ConfigError(f"{who} cannot run on {self.interface}: every bus there hears its own frames back, "
                              "and its requests and replies share CAN IDs. Use interface=teledex (teledex-sim) or "
                              "socketcan.")
