"""What a vendor folder declares for the registry: its device models (how to drive each, how to simulate it on a
bus), its settings section and how its devices are recognised on a CAN channel."""

from collections.abc import Callable
from dataclasses import dataclass

from ..can.identify import BusSignature
from .joint_device import JointDevice, TactileLayout


@dataclass(frozen=True)
class DeviceModel:
    # The model name presets and URDFs use (e.g. "piper", "linkerhand_o6").
    name: str
    # (rig part, its CAN port, the RealHardwareConfig, this vendor's settings, signatures=every vendor's
    # BusSignature, for the swapped-channel hint) -> the real driver
    driver: Callable[..., JointDevice]
    # (side, python-can interface, channel) -> a wire-protocol simulator (teledex_lerobot.can.simulator's
    # BusSimulator), for teledex-sim and the tests; None when there is none
    simulator: Callable[[str, str, str], object] | None = None
    # (side, port, every vendor's BusSignature, to name a device heard instead) -> a devices.probe.Report for
    # teledex-doctor; None: the doctor has no probe for it
    probe: Callable[..., object] | None = None
    # (this vendor's settings) -> the touch sensors the real driver reports, or None
    tactile: Callable[[object], TactileLayout | None] = lambda settings: None


@dataclass(frozen=True)
class Vendor:
    # Its folder under devices/, and its settings section: --robot.real.<name>.<setting>.
    name: str
    # A dataclass with defaults for every field, and validate().
    settings: type
    models: tuple[DeviceModel, ...]
    # How teledex-doctor and a silent driver recognise this vendor's devices on a channel.
    bus_signature: BusSignature | None = None
