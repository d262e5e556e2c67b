"""A dummy vendor, laid out as every vendor folder under teledex_lerobot/devices/ is: its kinematic model
(acme_gripper.urdf), CAN protocol, settings, driver and wire-protocol simulator, declared in VENDOR. Its gripper is
given by its URDF path: the test registers the vendor with register_vendor. Its hand, acme_hand, is described
(hand/acme_hand.yaml, with the folder beside it): copied into configs/hands/, the descriptor brings the vendor into
the registry by naming this module, as docs/extending.md's hand recipe says."""

from pathlib import Path

from teledex_lerobot.devices.joint_device import TactileLayout
from teledex_lerobot.devices.vendor import DeviceModel, Vendor

from .config import AcmeConfig
from .driver import PADS, AcmeGripperDevice
from .protocol import BUS_SIGNATURE
from .simulator import AcmeGripperSimulator

MODEL = str(Path(__file__).with_name("acme_gripper.urdf"))  # a model given by its URDF path


def _simulator(side: str, interface: str, channel: str) -> AcmeGripperSimulator:
    return AcmeGripperSimulator(interface, channel)


def _tactile(settings: AcmeConfig) -> TactileLayout | None:
    return TactileLayout(PADS, (2, 2)) if settings.tactile else None


HAND = "acme_hand"  # its descriptor: hand/acme_hand.yaml
HAND_FILES = Path(__file__).with_name("hand")  # what the hand recipe puts in configs/hands/

VENDOR = Vendor("acme", AcmeConfig, (DeviceModel(MODEL, AcmeGripperDevice, _simulator, tactile=_tactile),
                                     DeviceModel(HAND, AcmeGripperDevice, _simulator, tactile=_tactile)),
                BUS_SIGNATURE)
