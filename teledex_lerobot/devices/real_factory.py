"""Builds the real (vendor-SDK / CAN) driver for one rig part, by model."""

from . import a7_protocol, linkerhand_protocol, piper_protocol
from .a7_driver import LinkerA7JointDevice
from .linkerhand_driver import LinkerHandCanDevice
from .o6_driver import O6JointDevice
from .piper_driver import PiperJointDevice
from .real_config import RealHardwareConfig
from .real_device import RealJointDevice

REAL_MODELS = ("piper", "linker_a7", "linkerhand_o6", "linkerhand_l10", "linkerhand_l20")
BUS_SIGNATURES = (piper_protocol.BUS_SIGNATURE, linkerhand_protocol.BUS_SIGNATURE, a7_protocol.BUS_SIGNATURE)


def make_real_joint_device(part, config: RealHardwareConfig) -> RealJointDevice:
    """part: a rig.RigPart. Its URDF joint order is the device's, its limits are the ones enforced."""
    model = part.spec.model
    port = config.port_for(part.role)
    common = dict(device_home=part.home_full, driven=part.indices, device_lower=part.model.lower,
                  device_upper=part.model.upper, port=port, config=config)
    if model == "piper":
        return PiperJointDevice(**common)
    if model == "linker_a7":
        return LinkerA7JointDevice(part.spec.side, **common)
    if model == "linkerhand_o6":
        return O6JointDevice(part.spec.side, **common)
    if model in ("linkerhand_l10", "linkerhand_l20"):
        return LinkerHandCanDevice(model, part.spec.side, **common)
    raise NotImplementedError(f"backend='real' has no driver for {model!r} (real drivers: {', '.join(REAL_MODELS)}); "
                              "use backend='sim' for it.")
