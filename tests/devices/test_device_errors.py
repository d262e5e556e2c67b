"""What the device layer refuses, and how: a driver used before connect() and bad device settings are typed errors
(teledex_lerobot/errors.py) whose one line names the device or field and the fix."""

import pytest

from teledex_lerobot.can.port import CanPortConfig
from teledex_lerobot.devices.agilex.config import PiperConfig
from teledex_lerobot.devices.agilex.driver import PiperJointDevice
from teledex_lerobot.devices.linker_a7.protocol import motor_ids
from teledex_lerobot.devices.linkerhand.byte_map import byte_scale
from teledex_lerobot.devices.linkerhand.protocol import layout_for
from teledex_lerobot.devices.real_config import RigPorts, SharedRealConfig, check_distinct_ports
from teledex_lerobot.devices.simulated import SimDynamicsConfig
from teledex_lerobot.errors import ConfigError, DeviceError, ModelError
from teledex_lerobot.presets import PartSpec
from teledex_lerobot.rig import RigPart


def test_a_driver_not_connected_says_to_connect_it():
    device = PiperJointDevice(RigPart("arm", PartSpec("piper")), CanPortConfig(), SharedRealConfig(), PiperConfig())
    with pytest.raises(DeviceError, match=r"piper@socketcan:can0 is not connected .*call connect\(\) first"):
        device.read()
    with pytest.raises(DeviceError, match=r"not connected: call connect\(\) first"):
        _ = device.sdk


@pytest.mark.parametrize("configure, names", [
    (lambda: SharedRealConfig(feedback_timeout_ms=0, connect_timeout_s=-1).validate(),
     r"real.feedback_timeout_ms must be > 0 \(got 0\); real.connect_timeout_s must be > 0 \(got -1\)"),
    (lambda: PiperConfig(speed_percent=0).validate(), r"real.agilex.speed_percent must be in \[1, 100\]"),
    (lambda: SimDynamicsConfig(time_constant_s=0).validate(), r"sim.time_constant_s must be > 0"),
    (lambda: check_distinct_ports({"left": RigPorts(), "right": RigPorts()}, {"left": ("arm",), "right": ("arm",)}),
     r"socketcan:can0 \(left.arm and right.arm\) share one: give each its own channel in --robot.ports"),
    (lambda: motor_ids("middle"), r"A7 side must be one of \['left', 'right'\] \(got 'middle'\)"),
    (lambda: layout_for("linkerhand_l99"), r"No LinkerHand CAN layout for 'linkerhand_l99': give one of"),
], ids=["real_timings", "vendor_range", "sim_dynamics", "shared_port", "a7_side", "hand_model"])
def test_a_wrong_device_setting_is_a_config_error_naming_the_field(configure, names):
    with pytest.raises(ConfigError, match=names):
        configure()


def test_a_hand_model_with_other_joints_than_the_hand_is_a_model_error():
    with pytest.raises(ModelError, match="the linkerhand_o6 right model has 2 joints where the hand has 6"):
        byte_scale("linkerhand_o6", "right", [0.0, 0.0], [1.0, 1.0])
