"""The one registry of what can be built: every vendor's device models, and the backends that build a rig's devices.

Adding a vendor: a folder under devices/ whose __init__.py declares VENDOR (vendor.Vendor: its models with their
driver, wire-protocol simulator and doctor probe, its settings class and CAN signature). A hand's vendor is the one
its descriptor names (configs/hands/<hand>.yaml `vendor`: kinematics/hands.py), imported from there; an arm's is in
the arm vendor line below. Its settings become --robot.real.<vendor>.<setting>, its models teledex-sim's --device
choices, its probe teledex-doctor's. register_vendor() adds one at run time (tests, plugins). docs/extending.md
walks through both.

Adding a backend: register_backend(name, Backend(build_rig, build_part)). A backend builds every part of a rig at
once, build_rig(rig, robot_config) -> {role: JointDevice}, so one physics world can hold the arm and the hand
(the MuJoCo backend does); backends whose parts are independent also build one part on its own, build_part(part,
sim, real), which the per-part rig builder and the leader-arm teleoperator use.
"""

from collections.abc import Callable
from dataclasses import MISSING, Field, dataclass, field, fields, make_dataclass
from importlib import import_module
from importlib.util import find_spec
from types import ModuleType
from typing import TYPE_CHECKING, Any

from draccus.wrappers import docstring

from ..can.identify import BusSignature
from ..errors import ConfigError
from ..kinematics.hands import HANDS, HandDescriptor
from . import agilex, linker_a7  # the arm vendors (the arms are listed in kinematics/catalogue.py, not described)
from .joint_device import JointDevice, TactileLayout
from .real_config import SharedRealConfig
from .simulated import SimDynamicsConfig, build_fake, build_sim
from .vendor import DeviceModel, Vendor


def _vendor_package(hand: HandDescriptor) -> ModuleType:
    """The package a hand descriptor's `vendor` names: a folder under devices/, else an importable module."""
    for name in (f"{__package__}.{hand.vendor}", hand.vendor):
        try:
            found = find_spec(name) is not None
        except (ModuleNotFoundError, ValueError):  # a dotted name whose parent package is missing; an empty name
            found = False
        if found:
            return import_module(name)
    raise ConfigError(f"{hand.where('vendor')}: no vendor package {hand.vendor!r} (neither a folder "
                      f"teledex_lerobot/devices/{hand.vendor}/ nor an importable module); name the folder or module "
                      "whose VENDOR declares this hand's driver (docs/extending.md)")


def hand_vendor(hand: HandDescriptor) -> Vendor:
    """The vendor whose driver runs a described hand: its package's VENDOR, which must declare a model of the hand's
    name."""
    package = _vendor_package(hand)
    vendor = getattr(package, "VENDOR", None)
    if not isinstance(vendor, Vendor):
        raise ConfigError(f"{hand.where('vendor')}: {package.__name__} declares no VENDOR (a devices/vendor.py "
                          "Vendor); declare it in the package's __init__.py (docs/extending.md)")
    models = [model.name for model in vendor.models]
    if hand.name not in models:
        raise ConfigError(f"{hand.where('vendor')}: vendor {vendor.name!r} ({package.__name__}) has no device model "
                          f"{hand.name!r} (its models: {', '.join(models)}); add DeviceModel({hand.name!r}, <driver>) "
                          "to its VENDOR")
    return vendor


VENDORS: dict[str, Vendor] = {vendor.name: vendor for vendor in (
    agilex.VENDOR, linker_a7.VENDOR, *(hand_vendor(hand) for hand in HANDS.values()))}


def _models() -> dict[str, tuple[Vendor, DeviceModel]]:
    return {model.name: (vendor, model) for vendor in VENDORS.values() for model in vendor.models}


def register_vendor(vendor: Vendor) -> None:
    """Make a vendor's models buildable (its settings default: they are not on the command line)."""
    taken = set(_models()) & {model.name for model in vendor.models}
    if vendor.name in VENDORS or taken:
        raise ConfigError(f"vendor {vendor.name!r} or models {sorted(taken)} are registered already: give the vendor "
                          "and its models names no registered vendor uses")
    VENDORS[vendor.name] = vendor


def unregister_vendor(name: str) -> None:
    VENDORS.pop(name, None)


def real_models() -> list[str]:
    return sorted(_models())


def find_device_model(model: str) -> tuple[Vendor, DeviceModel] | None:
    return _models().get(model)


def device_model(model: str) -> tuple[Vendor, DeviceModel]:
    found = find_device_model(model)
    if found is None:
        raise ConfigError(f"backend='real' has no driver for {model!r} (real drivers: {', '.join(real_models())}); "
                          "use backend='sim' for it.")
    return found


def bus_signatures() -> list[BusSignature]:
    """How every registered vendor's devices are recognised on a channel: given to the drivers the registry builds
    and to teledex-doctor's probes (they never import the registry, which imports them)."""
    return [vendor.bus_signature for vendor in VENDORS.values() if vendor.bus_signature is not None]


# --- the real backend's settings: what every device shares, plus one section per vendor ---
@dataclass
class RealHardware(SharedRealConfig):
    """What RealHardwareConfig has whichever vendors are registered: the settings every device shares, and a vendor's
    section by its name."""

    def validate(self) -> None:
        super().validate()
        for name in VENDORS:
            settings = self.settings_for(name)
            if hasattr(settings, "validate"):
                settings.validate()

    def settings_for(self, vendor: str) -> object:
        """The settings of a vendor: its --robot.real.<vendor> section (defaults for a vendor registered at run
        time)."""
        return getattr(self, vendor, None) or VENDORS[vendor].settings()


def _with_help(name: str, kind: Any, declared: Field[Any] | None, help_text: str | None) -> tuple[str, Any, Any]:
    """A field of RealHardwareConfig carrying its flag's help: draccus reads help from comments in the source, and a
    class made at run time has none."""
    metadata = {"custom_args": {"help": help_text}}
    if declared is None:
        return name, kind, field(default_factory=kind, metadata=metadata)
    if declared.default_factory is not MISSING:
        return name, kind, field(default_factory=declared.default_factory, metadata=metadata)
    return name, kind, field(default=declared.default, metadata=metadata)


if TYPE_CHECKING:
    RealHardwareConfig = RealHardware  # the vendors' sections are made at run time: read through settings_for
else:
    RealHardwareConfig = make_dataclass(
        "RealHardwareConfig",
        [_with_help(f.name, f.type, f, docstring.get_preferred_help_text(
            docstring.get_attribute_docstring(SharedRealConfig, f.name))) for f in fields(SharedRealConfig)]
        + [_with_help(name, vendor.settings, None, f"{name} devices' settings (--robot.real.{name}.*)")
           for name, vendor in VENDORS.items()],
        bases=(RealHardware,), module=__name__,
        namespace={"__doc__": (
            "backend='real': where each part is plugged in (arm, hand), how drivers are supervised, and each vendor's "
            "settings (" + ", ".join(f"{name}: {vendor.settings.__name__}" for name, vendor in VENDORS.items())
            + ").")})


def build_real(part, sim: SimDynamicsConfig, real: RealHardwareConfig) -> JointDevice:
    """The `real` backend for one rig part: its vendor's driver on the part's CAN port, told every vendor's bus
    signatures (to name the device it hears instead of its own)."""
    vendor, model = device_model(part.spec.model)
    return model.driver(part, real.port_for(part.role), real, real.settings_for(vendor.name),
                        signatures=bus_signatures())


def tactile_layout(part, real: RealHardwareConfig) -> TactileLayout | None:
    """The touch sensors the real driver of this part reports (known before it connects, for the features)."""
    vendor, model = device_model(part.spec.model)
    return model.tactile(real.settings_for(vendor.name))


# --- backends ---
@dataclass(frozen=True)
class Backend:
    # (rig.Rig, robot config with .sim / .real / whatever the backend reads) -> {role: JointDevice}
    build_rig: Callable[..., dict[str, JointDevice]]
    # (rig.RigPart, SimDynamicsConfig, RealHardwareConfig) -> JointDevice; None: parts only exist together
    build_part: Callable[..., JointDevice] | None = None


def per_part(build_part: Callable[..., JointDevice]) -> Backend:
    """A backend whose parts are independent devices."""
    def build_rig(rig, robot_config) -> dict[str, JointDevice]:
        return {role: build_part(part, robot_config.sim, robot_config.real) for role, part in rig.parts.items()}
    return Backend(build_rig, build_part)


BACKENDS: dict[str, Backend] = {"fake": per_part(build_fake), "sim": per_part(build_sim), "real": per_part(build_real)}


def register_backend(name: str, backend: Backend) -> None:
    BACKENDS[name] = backend


def _backend(name: str) -> Backend:
    if name not in BACKENDS:
        raise ConfigError(f"Unknown backend {name!r}; choose one of {sorted(BACKENDS)}")
    return BACKENDS[name]


def build_devices(backend: str, rig, robot_config) -> dict[str, JointDevice]:
    """Every part's device, not yet connected."""
    return _backend(backend).build_rig(rig, robot_config)


def build_part_device(backend: str, part, sim: SimDynamicsConfig, real: RealHardwareConfig) -> JointDevice:
    """One part on its own (e.g. a leader arm), for backends whose parts are independent."""
    build_part = _backend(backend).build_part
    if build_part is None:
        part_backends = sorted(name for name, known in BACKENDS.items() if known.build_part is not None)
        raise ConfigError(f"backend {backend!r} builds whole rigs only, not one part on its own: give this part a "
                          f"backend that builds parts ({', '.join(part_backends)})")
    return build_part(part, sim, real)
