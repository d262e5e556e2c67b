"""Linker Bot's Linker Arm A7, driven through the unmodified linkerbot A7 class (driver.py), its CAN register
protocol (protocol.py), a wire-protocol simulator (simulator.py), teledex-doctor's probe (probe.py) and its settings
(config.py)."""

from ..vendor import DeviceModel, Vendor
from .config import LinkerA7Config
from .driver import LinkerA7JointDevice
from .probe import probe_linker_a7
from .protocol import BUS_SIGNATURE
from .simulator import A7SimConfig, A7Simulator


def _simulator(side: str, interface: str, channel: str) -> A7Simulator:
    return A7Simulator(A7SimConfig(side=side, interface=interface, channel=channel))


VENDOR = Vendor("linker_a7", LinkerA7Config,
                (DeviceModel("linker_a7", LinkerA7JointDevice, _simulator, probe_linker_a7),), BUS_SIGNATURE)
