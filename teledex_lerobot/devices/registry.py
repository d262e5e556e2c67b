"""The one registry of what can be built: every vendor's device models, and the backends that build a rig's devices.

Adding a vendor: a folder under devices/ whose __init__.py declares VENDOR (vendor.Vendor: its models with their
driver, wire-protocol simulator and doctor probe, its settings class and CAN signature), plus its name in the
vendor line below (imported and listed). Its settings become --robot.real.<vendor>.<setting>, its models
teledex-sim's --device choices, its probe teledex-doctor's. register_vendor() adds one at run time (tests, plugins).

Adding a backend: register_backend(name, Backend(build_rig, build_part)). A backend builds every part of a rig at
once, build_rig(rig, robot_config) -> {role: JointDevice}, so one physics world can hold the arm and the hand
(the MuJoCo backend does); backends whose parts are independent also build one part on its own, build_part(part,
sim, real), which the per-part rig builder and the leader-arm teleoperator use.
"""

from collections.abc import Callable
from dataclasses import MISSING, Field, dataclass, field, fields, make_dataclass

from draccus.wrappers import docstring

from ..can.identify import BusSignature
from . import agilex, linker_a7, linkerhand  # the vendor folders
from .joint_device import JointDevice, TactileLayout
from .real_config import SharedRealConfig
from .simulated import SimDynamicsConfig, build_fake, build_sim
from .vendor import DeviceModel, Vendor

VENDORS: dict[str, Vendor] = {vendor.name: vendor for vendor in (agilex.VENDOR, linkerhand.VENDOR, linker_a7.VENDOR)}


def _models() -> dict[str, tuple[Vendor, DeviceModel]]:
    return {model.name: (vendor, model) for vendor in VENDORS.values() for model in vendor.models}


def register_vendor(vendor: Vendor) -> None:
    """Make a vendor's models buildable (its settings default: they are not on the command line)."""
    taken = set(_models()) & {model.name for model in vendor.models}
    if vendor.name in VENDORS or taken:
        raise ValueError(f"vendor {vendor.name!r} or models {sorted(taken)} are registered already")
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
        raise NotImplementedError(f"backend='real' has no driver for {model!r} (real drivers: "
                                  f"{', '.join(real_models())}); use backend='sim' for it.")
    return found


def bus_signatures() -> list[BusSignature]:
    """How every registered vendor's devices are recognised on a channel: given to the drivers the registry builds
    and to teledex-doctor's probes (they never import the registry, which imports them)."""
    return [vendor.bus_signature for vendor in VENDORS.values() if vendor.bus_signature is not None]


# --- the real backend's settings: what every device shares, plus one section per vendor ---
def _validate(self) -> None:
    SharedRealConfig.validate(self)
    for name in VENDORS:
        settings = self.settings_for(name)
        if hasattr(settings, "validate"):
            settings.validate()


def _settings_for(self, vendor: str):
    """The settings of a vendor: its --robot.real.<vendor> section (defaults for a vendor registered at run time)."""
    return getattr(self, vendor, None) or VENDORS[vendor].settings()


def _with_help(name: str, kind: type, declared: Field | None, help_text: str) -> tuple:
    """A field of RealHardwareConfig carrying its flag's help: draccus reads help from comments in the source, and a
    class made at run time has none."""
    if declared is None:
        default = {"default_factory": kind}
    elif declared.default_factory is not MISSING:
        default = {"default_factory": declared.default_factory}
    else:
        default = {"default": declared.default}
    return name, kind, field(**default, metadata={"custom_args": {"help": help_text}})


RealHardwareConfig = make_dataclass(
    "RealHardwareConfig",
    [_with_help(f.name, f.type, f, docstring.get_preferred_help_text(
        docstring.get_attribute_docstring(SharedRealConfig, f.name))) for f in fields(SharedRealConfig)]
    + [_with_help(name, vendor.settings, None, f"{name} devices' settings (--robot.real.{name}.*)")
       for name, vendor in VENDORS.items()],
    bases=(SharedRealConfig,), module=__name__,
    namespace={"validate": _validate, "settings_for": _settings_for, "__doc__": (
        "backend='real': where each part is plugged in (arm, hand), how drivers are supervised, and each vendor's "
        "settings (" + ", ".join(f"{name}: {vendor.settings.__name__}" for name, vendor in VENDORS.items()) + ").")})


def build_real(part, sim: SimDynamicsConfig, real: "RealHardwareConfig") -> JointDevice:
    """The `real` backend for one rig part: its vendor's driver on the part's CAN port, told every vendor's bus
    signatures (to name the device it hears instead of its own)."""
    vendor, model = device_model(part.spec.model)
    return model.driver(part, real.port_for(part.role), real, real.settings_for(vendor.name),
                        signatures=bus_signatures())


def tactile_layout(part, real: "RealHardwareConfig") -> TactileLayout | None:
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
        raise ValueError(f"Unknown backend {name!r}; choose one of {sorted(BACKENDS)}")
    return BACKENDS[name]


def build_devices(backend: str, rig, robot_config) -> dict[str, JointDevice]:
    """Every part's device, not yet connected."""
    return _backend(backend).build_rig(rig, robot_config)


def build_part_device(backend: str, part, sim: SimDynamicsConfig, real: "RealHardwareConfig") -> JointDevice:
    """One part on its own (e.g. a leader arm), for backends whose parts are independent."""
    build_part = _backend(backend).build_part
    if build_part is None:
        raise ValueError(f"backend {backend!r} builds whole rigs only, not one part on its own")
    return build_part(part, sim, real)
