"""Agilex: the Piper arm, driven through the unmodified piper_sdk (driver.py), its CAN protocol (protocol.py), a
wire-protocol simulator (simulator.py), teledex-doctor's probe (probe.py) and its settings (config.py)."""

from ..vendor import DeviceModel, Vendor
from .config import PiperConfig
from .driver import PiperJointDevice
from .probe import probe_piper
from .protocol import BUS_SIGNATURE
from .simulator import PiperSimConfig, PiperSimulator


def _simulator(side: str, interface: str, channel: str) -> PiperSimulator:
    return PiperSimulator(PiperSimConfig(interface=interface, channel=channel))


VENDOR = Vendor("agilex", PiperConfig, (DeviceModel("piper", PiperJointDevice, _simulator, probe_piper),),
                BUS_SIGNATURE)
