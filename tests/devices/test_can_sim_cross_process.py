"""teledex-sim as its own process on the teledex loopback CAN bus, reached the way a vendor demo program would:
the unmodified piper_sdk, linkerbot's O6 and linkerbot's A7 each enable, move and read back their simulated device.
Killing teledex-sim is a cable pull our drivers see within the feedback timeout; swapped arm/hand channels fail at
connect saying so, and teledex-doctor says so too; a channel no teledex-sim serves fails naming it; a second
teledex-sim joins the bus the first one runs, but not with a device already answering on its channel."""

import subprocess
import sys

import numpy as np
import pytest
from device_harness import (
    TeledexSimProcess,
    bus_config,
    piper_firmware_reads,
    rearm_until_healthy,
    wait_for_fault,
    wait_until,
)
from piper_sdk import C_PiperInterface_V2

from lerobot_robot_teledex.robots.config_teledex import TeledexConfig
from lerobot_robot_teledex.robots.teledex_robot import Teledex
from teledex_lerobot.can.port import CanPortConfig
from teledex_lerobot.cli import doctor
from teledex_lerobot.clock import now_ns
from teledex_lerobot.devices import device_fault as df
from teledex_lerobot.devices.linkerhand.probe import probe_linkerhand
from teledex_lerobot.devices.registry import build_part_device
from teledex_lerobot.devices.simulated import SimDynamicsConfig
from teledex_lerobot.presets import PartSpec
from teledex_lerobot.rig import RigPart

pytestmark = pytest.mark.filterwarnings("ignore:The .bustype. argument is deprecated:DeprecationWarning")

DEVICES = ("--device", "piper:right:arm", "--device", "linkerhand_o6:right:hand", "--device", "linker_a7:right:a7")
PARTS = {"arm": RigPart("arm", PartSpec("piper", "right", None, {"joint2": 1.0, "joint3": -1.0})),
         "hand": RigPart("hand", PartSpec("linkerhand_o6", "right")),
         "a7": RigPart("arm", PartSpec("linker_a7", "right"))}


@pytest.fixture(scope="module")
def teledex_sim():
    with TeledexSimProcess(*DEVICES) as sim:
        yield sim


@pytest.fixture
def piper_sdk():
    C_PiperInterface_V2._instances.clear()
    piper = C_PiperInterface_V2("arm", judge_flag=False, can_auto_init=False)
    yield piper
    piper.DisconnectPort()
    C_PiperInterface_V2._instances.clear()


def _driver(name: str, strict: bool = False, **overrides):
    config = bus_config(arm_channel="a7" if name == "a7" else "arm", hand_channel="hand", strict=strict,
                        interface="teledex", **overrides)
    return build_part_device("real", PARTS[name], SimDynamicsConfig(), config)


def test_piper_sdk(teledex_sim, piper_sdk):
    piper_sdk.CreateCanBus("arm", bustype="teledex", judge_flag=False)
    piper_sdk.ConnectPort()
    assert wait_until(piper_sdk.EnablePiper, 3.0, period_s=0.01)
    assert piper_firmware_reads(piper_sdk, "S-V1.6-3")
    target = [10000, 20000, -30000, 5000, -10000, 15000]

    def moved():
        piper_sdk.MotionCtrl_2(1, 1, 100, 0)
        piper_sdk.JointCtrl(*target)
        state = piper_sdk.GetArmJointMsgs().joint_state
        return [state.joint_1, state.joint_2, state.joint_3, state.joint_4, state.joint_5, state.joint_6] == target
    assert wait_until(moved, 5.0, period_s=0.01)
    # as on a real socketcan port (local_loopback=False), the SDK's receive bus never hears its own send bus: the
    # "control" getters only show a leader arm's commands, and there is none
    assert piper_sdk.GetArmJointCtrl().joint_ctrl.joint_1 == 0


def test_linkerbot_o6(teledex_sim):
    from linkerbot.hand.o6 import O6

    with O6("right", "hand", interface_type="teledex") as hand:
        assert hand.angle.get_blocking(timeout_ms=1000).angles.to_list() == [100.0] * 6  # starts open
        hand.angle.set_angles([10.0, 20.0, 30.0, 40.0, 50.0, 60.0])
        # the simulated hand's replies, quantised to its 0-255 steps (never our own command read back)
        assert wait_until(lambda: hand.angle.get_blocking(timeout_ms=1000).angles.to_list() == pytest.approx(
            [10.2, 20.0, 29.8, 40.0, 50.2, 60.0], abs=0.01), 3.0, period_s=0.02)


def test_linkerbot_a7(teledex_sim):
    from teledex_lerobot.devices.linker_a7.driver import open_a7

    arm = open_a7("right", "a7", "teledex", 5.0)  # linkerbot's A7, its 20 ms handshakes retried
    try:
        arm.enable()
        arm.set_velocities([3.0] * 7)
        target = [0.3, -0.2, 0.1, 0.5, -0.1, 0.2, 0.0]
        arm.move_j(target, blocking=True)
        assert wait_until(lambda: np.allclose(arm.get_angles(), target, atol=1e-3), 5.0, period_s=0.02), \
            arm.get_angles()
    finally:
        arm.close()


def test_killing_teledex_sim_is_a_cable_pull_every_driver_sees(monkeypatch, tmp_path):
    """Each driver under the production 50 ms feedback timeout, on its own teledex-sim (its own bus socket)."""
    monkeypatch.setenv("TELEDEX_CAN_BROKER", str(tmp_path / "can.sock"))
    sim = TeledexSimProcess(*DEVICES)
    devices = {name: _driver(name, strict=True) for name in PARTS}
    try:
        for device in devices.values():
            device.connect()
        assert all(rearm_until_healthy(device, 5.0) for device in devices.values())
        killed_ns = now_ns()
        sim.kill()
        assert all(wait_for_fault(d, lambda fault: fault.detected_ns >= killed_ns, 2.0) for d in devices.values())
        for name, device in devices.items():
            fault = device.fault()
            assert fault.kind == df.FEEDBACK_TIMEOUT, (name, fault)
            # how soon: benchmarks/fault_timeouts.py (wall-clock latency is no test's business)
            assert "by the bus's receive times" in fault.message, (name, fault)
    finally:
        for device in devices.values():
            device.disconnect()
        sim.stop()


@pytest.mark.parametrize("name, wrong_channel, heard", [
    ("arm", "hand", "a right LinkerHand (CAN ID 0x27), not the Agilex Piper"),
    ("hand", "arm", "an Agilex Piper (its feedback frames 0x2a1-0x2a8), not the LinkerHand"),
    ("a7", "hand", "a right LinkerHand (CAN ID 0x27), not the Linker Arm A7")])
def test_a_driver_on_the_wrong_channel_says_so(teledex_sim, name, wrong_channel, heard):
    config = bus_config(arm_channel=wrong_channel, hand_channel=wrong_channel, interface="teledex",
                        connect_timeout_s=0.5)
    device = build_part_device("real", PARTS[name], SimDynamicsConfig(), config)
    with pytest.raises(ConnectionError, match="channels look swapped") as failed:
        device.connect()
    assert heard in str(failed.value)


def test_swapped_arm_and_hand_channels_fail_at_connect(teledex_sim):
    config = TeledexConfig(preset="piper_linkerhand_o6_single", backend="real", cameras={})
    config.real.arm, config.real.hand = CanPortConfig("teledex", "hand"), CanPortConfig("teledex", "arm")
    config.real.connect_timeout_s = 0.5
    robot = Teledex(config)
    with pytest.raises(ConnectionError, match="On teledex:hand there is a right LinkerHand.*channels look swapped"):
        robot.connect()
    assert not robot.is_connected


# linkerbot's O6.__del__ fails on the half-built object its constructor leaves: its business, not this test's
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_channel_no_teledex_sim_serves(teledex_sim, monkeypatch, tmp_path):
    with pytest.raises(ConnectionError, match=r"teledex CAN channel 'can9'.*start `teledex-sim`"):
        build_part_device("real", PARTS["arm"], SimDynamicsConfig(),
                          bus_config(arm_channel="can9", interface="teledex")).connect()
    monkeypatch.setenv("TELEDEX_CAN_BROKER", str(tmp_path / "nobody.sock"))
    from linkerbot.hand.o6 import O6

    with pytest.raises(Exception, match="Start `teledex-sim`"):
        O6("right", "hand", interface_type="teledex")


def test_doctor_finds_the_devices_and_names_swapped_channels(teledex_sim):
    arm, hand = CanPortConfig("teledex", "arm"), CanPortConfig("teledex", "hand")
    reports = doctor.run("piper_linkerhand_o6_single", arm, hand, [])
    assert [r.problems for r in reports] == [[], []], [r.render() for r in reports]
    swapped = doctor.run("piper_linkerhand_o6_single", hand, arm, [])
    assert all("channels look swapped" in fix for report in swapped for _, fix in report.problems), \
        [r.render() for r in swapped]
    assert [len(report.problems) for report in swapped] == [1, 1]


def test_a_second_teledex_sim_joins_the_running_bus(teledex_sim):
    with TeledexSimProcess("--device", "linkerhand_l10:left:hand2") as second:
        assert "(joined)" in "".join(second.lines)
        report = probe_linkerhand("linkerhand_l10", "left", CanPortConfig("teledex", "hand2"))
        assert report.problems == [] and any("LHL10-01-001-L" in fact for fact in report.facts), report.render()
    assert "(started)" in "".join(teledex_sim.lines)


def test_a_second_simulator_of_the_same_device_on_its_channel_is_refused(teledex_sim):
    """Two right O6 hands on one channel would answer every request twice (every feedback frame doubled); a left
    hand, or the same hand on another channel, is welcome."""
    done = subprocess.run([sys.executable, "-m", "teledex_lerobot.cli.sim", "--device", "linkerhand_o6:right:hand"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.strip().splitlines() == [
        "teledex-sim: teledex CAN channel 'hand': a simulated device already answers on CAN ID 0x27 of channel 'hand' "
        f"(pid {teledex_sim.process.pid}): a second one would answer every request twice. Stop the other teledex-sim, "
        "or put this device on another channel"]
    with TeledexSimProcess("--device", "linkerhand_o6:left:hand", "--device", "linkerhand_o6:right:hand3") as other:
        assert "(joined)" in "".join(other.lines)
