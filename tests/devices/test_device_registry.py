"""One registry builds every device: a new vendor is one folder plus one registry line (here register_vendor with
tests/dummy_vendor, laid out as a vendor folder), and the robot class, teledex-sim, teledex-doctor and the channel
identification use it without a line changed; a backend that builds every part at once plugs in the same way. A new
hand is one descriptor and its folder in configs/hands/ (docs/extending.md), its vendor named there."""

import argparse
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import draccus
import dummy_vendor
import pytest
from device_harness import RELAXED_FEEDBACK_TIMEOUT_MS, unique_channel, wait_until
from lerobot.robots import RobotConfig

from lerobot_robot_teledex.robots.config_teledex import TeledexConfig, TeledexHandConfig
from lerobot_robot_teledex.robots.teledex_robot import Teledex, TeledexHand
from teledex_lerobot.can.port import CanPortConfig
from teledex_lerobot.cli import doctor, sim
from teledex_lerobot.devices import registry
from teledex_lerobot.devices.agilex.config import PiperConfig
from teledex_lerobot.devices.joint_device import JointDevice
from teledex_lerobot.devices.simulated import FakeJointDevice
from teledex_lerobot.errors import ConfigError
from teledex_lerobot.kinematics.hands import load_hand
from teledex_lerobot.paths import CONFIGS_DIR
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
    with pytest.raises(ConfigError, match="no driver for 'nobody_arm'.*linkerhand_o6.*piper"):
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


# What a program sees once the hand recipe is followed: every table of hands, from the one descriptor.
_HAND_TABLES = """
import json
from dataclasses import fields

from teledex_lerobot.control.hand_grasps import GRASP_SHAPES, KNOWN_GRASPS, grasp_paths
from teledex_lerobot.devices import registry
from teledex_lerobot.kinematics.catalogue import BUILTIN_MODELS, resolve_urdf
from teledex_lerobot.presets import PartSpec
from teledex_lerobot.retargeting.joint_mapping import joint_map_path, load_joint_map
from teledex_lerobot.rig import Rig
from teledex_lerobot.world.grasps import grasp_for

hand = Rig.from_parts(None, PartSpec("acme_hand", "left")).parts["hand"]
vendor, model = registry.device_model("acme_hand")
preshape, closed = grasp_paths(["two_finger_pinch"], "acme_hand", hand.joints, hand.lower, hand.upper)[
    "two_finger_pinch"]
grasp = grasp_for("acme_hand", "cube_assembly")
load_joint_map(joint_map_path("acme_hand", "left"), hand.joints, hand.lower, hand.upper)
print(json.dumps({
    "catalogue": BUILTIN_MODELS["acme_hand"].kind, "urdf": str(resolve_urdf("acme_hand", "left")),
    "joints": hand.joints, "joint_map": str(joint_map_path("acme_hand", "left")),
    "registry": [vendor.name, model.driver.__name__, "acme" in {f.name for f in fields(registry.RealHardwareConfig)}],
    "grasp_shape": GRASP_SHAPES["acme_hand"]["two_finger_pinch"].human, "known_grasps": list(KNOWN_GRASPS),
    "grasp_path": [preshape.tolist(), closed.tolist()],
    "world_grasp": [grasp.name, grasp.closed, list(grasp.object_in_hand_m)],
    "hands": sorted(name for name, info in BUILTIN_MODELS.items() if info.kind == "hand"),
}))
"""


def test_a_new_hand_is_one_descriptor_and_its_folder(tmp_path):
    """docs/extending.md's hand recipe, followed with the Acme hand: its descriptor and folder copied into
    configs/hands/ (a copy of configs/, TELEDEX_CONFIGS_DIR), its driver the dummy vendor's; nothing else changes."""
    configs = tmp_path / "configs"
    configs.mkdir()
    for entry in CONFIGS_DIR.iterdir():
        if entry.name != "hands":
            (configs / entry.name).symlink_to(entry)
    shutil.copytree(CONFIGS_DIR / "hands", configs / "hands")
    shutil.copytree(dummy_vendor.HAND_FILES, configs / "hands", dirs_exist_ok=True)
    tests_dir = Path(dummy_vendor.__file__).parents[1]  # the dummy vendor's module is importable from there
    env = {**os.environ, "TELEDEX_CONFIGS_DIR": str(configs),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(tests_dir), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-c", _HAND_TABLES], env=env, capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-4000:]
    tables = json.loads(done.stdout)
    described = configs / "hands" / "acme_hand"
    assert tables["catalogue"] == "hand"
    assert tables["urdf"] == str(described / "acme_hand_left.urdf")
    assert tables["joints"] == ["finger_left_joint", "finger_right_joint"]
    assert tables["joint_map"] == str(described / "joint_map.yaml")
    assert tables["registry"] == ["acme", "AcmeGripperDevice", True]  # and its settings: --robot.real.acme.*
    assert tables["grasp_shape"] == "pinch" and "two_finger_pinch" in tables["known_grasps"]
    assert tables["grasp_path"] == [[0.2, 0.2], [0.9, 0.9]]
    assert tables["world_grasp"] == ["two_finger_pinch", {"_joint": 0.9}, [0.0, 0.0, 0.07]]
    assert tables["hands"] == ["acme_hand", "linkerhand_l10", "linkerhand_l20", "linkerhand_o6"]


def test_a_hand_descriptor_names_a_vendor_that_declares_its_driver(tmp_path):
    shutil.copytree(dummy_vendor.HAND_FILES, tmp_path, dirs_exist_ok=True)
    path = tmp_path / "acme_hand.yaml"
    assert registry.hand_vendor(load_hand(path)) is dummy_vendor.VENDOR
    path.write_text(path.read_text().replace("vendor: dummy_vendor", "vendor: linkerhand"))
    with pytest.raises(ConfigError, match=r"acme_hand\.yaml, key `vendor`: vendor 'linkerhand' .* has no device model "
                                          r"'acme_hand' \(its models: linkerhand_o6, .*\); add DeviceModel"):
        registry.hand_vendor(load_hand(path))
    path.write_text(path.read_text().replace("vendor: linkerhand", "vendor: acme_robotics"))
    with pytest.raises(ConfigError, match=r"key `vendor`: no vendor package 'acme_robotics' \(neither a folder "
                                          r"teledex_lerobot/devices/acme_robotics/ nor an importable module\)"):
        registry.hand_vendor(load_hand(path))
    path.write_text(path.read_text().replace("vendor: acme_robotics", "vendor: dummy_vendor.config"))
    with pytest.raises(ConfigError, match=r"dummy_vendor\.config declares no VENDOR"):
        registry.hand_vendor(load_hand(path))
