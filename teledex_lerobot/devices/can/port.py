"""Where a CAN device is plugged in: a python-can interface and channel, and what those interfaces imply."""

import logging
from dataclasses import dataclass

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
