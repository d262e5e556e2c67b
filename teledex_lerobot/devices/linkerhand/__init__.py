"""LinkerHand dexterous hands: the O6 through the unmodified linkerbot O6 class (o6_driver.py), the L10 and L20
through our own CAN driver (can_driver.py: the vendor's L10/L20 code is not usable as a library), their CAN protocol
(protocol.py), a wire-protocol simulator for all three (simulator.py), teledex-doctor's probe (probe.py) and their
settings (config.py)."""

from functools import partial

from ..joint_device import TactileLayout
from ..vendor import DeviceModel, Vendor
from . import protocol as lp
from .can_driver import LinkerHandCanDevice
from .config import LinkerHandConfig
from .o6_driver import O6JointDevice
from .probe import probe_linkerhand
from .simulator import LinkerHandSimConfig, LinkerHandSimulator


def _simulator(model: str, side: str, interface: str, channel: str) -> LinkerHandSimulator:
    return LinkerHandSimulator(LinkerHandSimConfig(model=model, side=side, interface=interface, channel=channel))


def _tactile(model: str, settings: LinkerHandConfig) -> TactileLayout | None:
    shape = lp.layout_for(model).tactile_shape
    return TactileLayout(lp.FINGERS, shape) if settings.tactile and shape is not None else None


def _model(name: str, driver) -> DeviceModel:
    return DeviceModel(name, driver, simulator=partial(_simulator, name), probe=partial(probe_linkerhand, name),
                       tactile=partial(_tactile, name))


VENDOR = Vendor("linkerhand", LinkerHandConfig, (_model("linkerhand_o6", O6JointDevice),
                                                 _model("linkerhand_l10", LinkerHandCanDevice),
                                                 _model("linkerhand_l20", LinkerHandCanDevice)), lp.BUS_SIGNATURE)
