"""One registry builds every device: a new vendor is one folder plus one registry line (here register_vendor with
tests/dummy_vendor, laid out as a vendor folder), and the robot class, teledex-sim, teledex-doctor and the channel
identification use it without a line changed; a backend that builds every part at once plugs in the same way."""

import argparse
from dataclasses import dataclass

import draccus
import dummy_vendor
import pytest
from device_harness import RELAXED_FEEDBACK_TIMEOUT_MS, unique_channel, wait_until
from lerobot.robots import RobotConfig

from lerobot_robot_teledex.config_teledex import TeledexConfig, TeledexHandConfig
from lerobot_robot_teledex.teledex_robot import Teledex, TeledexHand
from teledex_lerobot.can.port import CanPortConfig
from teledex_lerobot.cli import doctor, sim
from teledex_lerobot.devices import registry
from teledex_lerobot.devices.agilex.config import PiperConfig
from teledex_lerobot.devices.joint_device import JointDevice
from teledex_lerobot.devices.simulated import FakeJointDevice
from teledex_lerobot.presets import PartSpec


@pytest.fixture
def acme():
    registry.register_vendor(dummy_vendor.VENDOR)
    yield dummy_vendor.MODEL
    registry.unregister_vendor(dummy_vendor.VENDOR.name)


def test_a_registered_vendor_is_driven_through_the_robot_class(acme):
    channel = unique_channel("acme")
    args = argparse.Namespace(device=[(acme, "right", channel)], interface="virtual")
    [simulator] = sim.build_simulators(args)  # what teledex-sim runs for --device <model>:right:<channel>
    config = TeledexHandConfig(model=acme, backend="real")
    config.real.hand = CanPortConfig("virtual", channel)
    config.real.feedback_timeout_ms = RELAXED_FEEDBACK_TIMEOUT_MS
    robot = TeledexHand(config)
    # the driver's touch sensors are features before it connects, from the registry (no LinkerHand code involved)
    assert robot.tactile_layout.sensors == dummy_vendor.driver.PADS
    assert "hand_tactile_right_pad_r1c1" in robot.observation_features
    with simulator:
        robot.connect()
        try:
            target = {"hand_finger_left_joint.pos": 0.8, "hand_finger_right_joint.pos": 0.3}

            def reached():
                robot.send_action(target)
                observation = robot.get_observation()
                return all(abs(observation[key] - value) < 1e-3 for key, value in target.items())
            assert wait_until(reached, 5.0, period_s=0.02)
            observation = robot.get_observation()
            assert observation["hand_tactile_left_pad_r0c0"] == round(255 * observation["hand_finger_left_joint.pos"])
            assert simulator.true_positions() == pytest.approx([0.8, 0.3], abs=1e-3)
        finally:
            robot.disconnect()


def test_a_registered_vendor_is_known_to_the_channel_identification_and_the_doctor(acme):
    channel = unique_channel("acme-swapped")
    port = CanPortConfig("virtual", channel)
    with registry.device_model(acme)[1].simulator("right", "virtual", channel):
        piper_report = doctor.probe_part(PartSpec("piper", "right"), port)  # the Piper's channel holds the gripper
        gripper_report = doctor.probe_part(PartSpec(acme, "right"), port)
    [(what, fix)] = piper_report.problems
    assert "On virtual:" in fix and "there is an Acme gripper, not the Agilex Piper" in fix
    assert gripper_report.problems == [("teledex-doctor has no probe for this device", "use the vendor's tools")]


def test_registry_refusals():
    with pytest.raises(NotImplementedError, match="no driver for 'nobody_arm'.*linkerhand_o6.*piper"):
        registry.device_model("nobody_arm")
    with pytest.raises(ValueError, match="registered already"):
        registry.register_vendor(registry.VENDORS["agilex"])
    with pytest.raises(ValueError, match="Unknown backend 'warp'"):
        registry.build_devices("warp", None, None)


class _SharedWorld:
    """One object behind every part, as one physics world holds the arm and the hand."""

    def __init__(self, rig):
        self.rig = rig
        self.devices = {role: FakeJointDevice(part.home) for role, part in rig.parts.items()}
        self.connected: set[str] = set()


class _WorldDevice(JointDevice):
    def __init__(self, world: _SharedWorld, role: str):
        super().__init__(world.rig.parts[role].home)
        self.world, self.role = world, role

    def connect(self) -> None:
        self.world.connected.add(self.role)

    def disconnect(self) -> None:
        self.world.connected.discard(self.role)

    def read(self):
        return self.world.devices[self.role].read()

    def command(self, positions) -> None:
        self.world.devices[self.role].command(positions)


def test_a_backend_that_builds_the_whole_rig_at_once(monkeypatch):
    built = []

    def build_rig(rig, robot_config) -> dict[str, JointDevice]:
        world = _SharedWorld(rig)
        built.append(world)
        return {role: _WorldDevice(world, role) for role in rig.parts}
    monkeypatch.setitem(registry.BACKENDS, "shared_world", registry.Backend(build_rig))
    robot = Teledex(TeledexConfig(preset="piper_linkerhand_o6_single", backend="shared_world", cameras={}))
    robot.connect()
    try:
        [world] = built
        assert world.connected == {"arm", "hand"}
        action = {key: value for key, value in robot.get_observation().items() if key in robot.action_features}
        action["hand_index_mcp_pitch.pos"] += 0.01  # within one safety step
        robot.send_action(action)
        assert world.devices["hand"].read().positions[robot.rig.parts["hand"].keys.index("hand_index_mcp_pitch.pos")] \
            == pytest.approx(action["hand_index_mcp_pitch.pos"])
    finally:
        robot.disconnect()
    assert world.connected == set()
    with pytest.raises(ValueError, match="builds whole rigs only"):
        registry.build_part_device("shared_world", robot.rig.parts["arm"], None, None)


def test_each_vendor_has_its_settings_section_on_the_command_line():
    @dataclass
    class Command:
        robot: RobotConfig

    args = ["--robot.type=teledex", "--robot.backend=real", "--robot.real.arm.interface=teledex",
            "--robot.real.arm.channel=can5", "--robot.real.feedback_timeout_ms=40",
            "--robot.real.agilex.speed_percent=80", "--robot.real.linkerhand.tactile=true",
            "--robot.real.linker_a7.poll_hz=50"]
    real = draccus.parse(Command, args=args).robot.real
    assert (real.arm.interface, real.arm.channel, real.feedback_timeout_ms) == ("teledex", "can5", 40)
    assert (real.agilex.speed_percent, real.linkerhand.tactile, real.linker_a7.poll_hz) == (80, True, 50)
    with pytest.raises(ValueError, match=r"real\.agilex\.speed_percent must be in \[1, 100\] \(got 800\)"):
        TeledexConfig(backend="real", real=registry.RealHardwareConfig(agilex=PiperConfig(speed_percent=800)))
