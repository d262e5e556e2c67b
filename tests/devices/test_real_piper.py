"""The Piper real driver (through the unmodified piper_sdk) against the Piper simulator: motion, units, faults."""

import struct
import threading
import time

import can
import numpy as np
import pytest
from device_harness import bus_config, rearm_until_healthy, unique_channel, wait_for_fault, wait_until
from piper_sdk import C_PiperInterface_V2

from teledex_lerobot.clock import now_ns
from teledex_lerobot.devices import device_fault as df
from teledex_lerobot.devices.agilex import protocol as pp
from teledex_lerobot.devices.agilex.config import PiperConfig
from teledex_lerobot.devices.agilex.driver import PiperJointDevice
from teledex_lerobot.devices.agilex.simulator import PiperSimConfig, PiperSimulator
from teledex_lerobot.devices.registry import build_part_device
from teledex_lerobot.devices.simulated import SimDynamicsConfig
from teledex_lerobot.presets import PartSpec
from teledex_lerobot.rig import RigPart

pytestmark = pytest.mark.filterwarnings("ignore:The .bustype. argument is deprecated:DeprecationWarning")


def _rig(strict: bool):
    """(simulator, connected driver, rig part) on a fresh virtual channel; everything shut down afterwards."""
    C_PiperInterface_V2._instances.clear()
    channel = unique_channel("piper")
    sim = PiperSimulator(PiperSimConfig(channel=channel, initial_positions=(0.0, 0.5, -0.5, 0, 0, 0, 0.0))).start()
    part = RigPart("arm", PartSpec("piper", "right", None, {"joint2": 1.0, "joint3": -1.0}))
    config = bus_config(arm_channel=channel, strict=strict, agilex=PiperConfig(speed_percent=100))
    device = build_part_device("real", part, SimDynamicsConfig(), config)
    device.connect()
    yield sim, device, part
    device.disconnect()
    sim.stop()
    C_PiperInterface_V2._instances.clear()


@pytest.fixture
def piper_rig():
    yield from _rig(strict=False)


@pytest.fixture
def strict_piper_rig():
    """The production 50 ms feedback timeout: for the fault-detection tests."""
    yield from _rig(strict=True)


def _reach(device, target, timeout_s=3.0):
    def reached():
        device.command(target)
        return np.allclose(device.read().positions, target, atol=2e-5)
    return wait_until(reached, timeout_s, period_s=0.01)


def test_connect_enables_and_starts_where_the_arm_is(piper_rig):
    sim, device, part = piper_rig
    assert isinstance(device, PiperJointDevice) and device.firmware == "S-V1.6-3"
    assert sim.motor_enabled == [True] * 6 and sim.gripper_enabled
    assert sim.ctrl_mode == pp.CTRL_MODE_CAN and sim.move_mode == pp.MOVE_MODE_J
    state = device.read()
    np.testing.assert_allclose(state.positions, [0, 0.5, -0.5, 0, 0, 0, 0], atol=1e-5)
    # the capture time is the CAN frame's, on our monotonic clock: recent, never in the future
    assert 0 <= now_ns() - state.capture_ns < 50_000_000
    assert device.fault() is None


def test_joint_and_gripper_targets_reach_the_arm(piper_rig):
    sim, device, part = piper_rig
    target = np.array([0.4, 1.2, -0.8, 0.3, -0.6, 1.0, 0.035])
    assert _reach(device, target), device.read().positions
    # what the arm got is the target rounded to device units (0.001 deg, 0.001 mm)
    np.testing.assert_allclose(sim.target()[:6], target[:6], atol=0.5 / pp.MILLIDEG_PER_RAD + 1e-12)
    assert abs(sim.target()[6] - 0.035) <= 0.5e-6 + 1e-12
    assert device.fault() is None


def test_driving_a_subset_holds_the_other_joints():
    C_PiperInterface_V2._instances.clear()
    channel = unique_channel("piper-subset")
    with PiperSimulator(PiperSimConfig(channel=channel)) as sim:
        part = RigPart("arm", PartSpec("piper", "right", ("joint1", "joint2", "joint3", "joint4", "joint5",
                                                            "joint6"), {"joint2": 1.0}))
        device = build_part_device("real", part, SimDynamicsConfig(), bus_config(arm_channel=channel))
        device.connect()
        try:
            assert device.dof == 6
            assert _reach(device, np.array([0.2, 0.3, -0.2, 0, 0, 0]))
            assert sim.true_positions()[6] == 0.0  # the gripper was never commanded
        finally:
            device.disconnect()


def test_feedback_silence_is_a_fault_and_the_target_holds(strict_piper_rig):
    sim, device, part = strict_piper_rig
    target = np.array([0.1, 0.6, -0.5, 0, 0, 0, 0.0])
    assert _reach(device, target) and rearm_until_healthy(device)
    silenced_at = now_ns()
    sim.silence()
    assert wait_for_fault(device, lambda fault: fault.detected_ns >= silenced_at)
    fault = device.fault()
    assert fault.kind == df.FEEDBACK_TIMEOUT
    assert fault.detected_ns >= silenced_at  # how soon: test_device_liveness.py, benchmarks/fault_timeouts.py
    device.command(np.array([0.5, 1.0, -1.0, 0, 0, 0, 0.0]))  # not forwarded while in fault
    np.testing.assert_allclose(sim.true_positions(), target, atol=1e-5)
    np.testing.assert_allclose(device.last_safe_target, target)
    np.testing.assert_allclose(device.held_target(), target)  # what a recording stores as the action
    sim.silence(False)
    assert wait_until(lambda: (device.clear_fault(), device.fault())[1] is None, 0.5)


def test_a_rearm_after_a_power_cycle_enables_the_motors_the_sdk_still_thinks_enabled(strict_piper_rig):
    """The arm power-cycles while silent: the SDK still holds its last motor status (enabled). The re-arm must judge
    the enable bits from frames sent after it began, or it clears the fault on stale bits and the next episode stops
    at once on "motors no longer enabled" (CI, 2026-12-04)."""
    sim, device, part = strict_piper_rig
    assert rearm_until_healthy(device)
    sim.silence()
    assert wait_for_fault(device, lambda fault: fault.kind == df.FEEDBACK_TIMEOUT)
    assert all(device._sdk.GetArmEnableStatus())  # the stale bits
    sim.motor_enabled[:] = [False] * 6  # powered back up disabled
    back = threading.Timer(0.1, sim.silence, (False,))
    back.start()
    device.clear_fault()  # pressed before the arm speaks again
    back.join()
    assert device.fault() is None and sim.motor_enabled == [True] * 6


def test_joint_error_bit_is_a_fault(strict_piper_rig):
    sim, device, part = strict_piper_rig
    assert rearm_until_healthy(device)
    raised_at = now_ns()
    sim.set_joint_error(3, "comm")
    assert wait_for_fault(device, lambda fault: fault.kind == df.JOINT_ERROR)
    assert "communication error on joints [3]" in device.fault().message
    assert device.fault().detected_ns >= raised_at  # how soon: benchmarks/fault_flags.py
    sim.clear_joint_errors()
    assert wait_until(lambda: (device.clear_fault(), device.fault())[1] is None, 0.5)


@pytest.mark.parametrize("bit, named", [(1, "motor over-temperature"), (4, "collision"), (5, "driver error"),
                                        (3, "driver over-temperature")])
def test_motor_driver_status_bits_are_faults(strict_piper_rig, bit, named):
    sim, device, part = strict_piper_rig
    assert rearm_until_healthy(device)
    raised_at = now_ns()
    sim.set_motor_status(4, 1 << bit)
    assert wait_for_fault(device, lambda fault: fault.kind == df.JOINT_ERROR)
    assert f"joint 4 motor driver: {named}" in device.fault().message
    assert device.fault().detected_ns >= raised_at  # how soon: benchmarks/fault_flags.py
    sim.set_motor_status(4, 0)
    assert wait_until(lambda: (device.clear_fault(), device.fault())[1] is None, 0.5)


def test_a_single_frame_communication_error_is_counted_not_latched(piper_rig):
    sim, device, part = piper_rig
    assert rearm_until_healthy(device)
    sim.set_joint_error(2, single_frame=True)
    assert wait_until(lambda: device.health()["comm_error_frames"] == 1)
    assert device.health()["comm_error_joints"] == {2: 1}
    frames = sim.frames_sent
    assert wait_until(lambda: sim.frames_sent > frames + 10 * 15)  # ten more status ticks of 15 frames each
    assert device.fault() is None and device.health()["comm_error_frames"] == 1


def test_arm_status_communication_error_is_judged_by_consecutive_frames(piper_rig):
    """The SDK keeps the last status frame until the next (5 ms later): one frame with arm status 5 (joint
    communication error) must not be a fault while it is the SDK's latest (the single-frame test above failed by
    chance on a loaded host); two consecutive ones are."""
    sim, device, part = piper_rig
    assert rearm_until_healthy(device)
    sim.silence()  # no more status frames from the arm: the SDK holds what the test injects
    assert wait_until(lambda: sim.frames_sent == (time.sleep(0.2) or sim.frames_sent), 5.0)  # none in flight
    flagged = can.Message(arbitration_id=pp.STATUS, is_extended_id=False, data=struct.pack(
        ">BBBBBBH", 1, pp.ARM_STATUS_COMM_ERROR, 1, 0, 0, 0, pp.err_code_bits(set(), {2})))
    receive = device._sdk.GetCanBus().callback_function  # the SDK's parser, with the driver watching
    receive(flagged)
    assert device._sdk.GetArmStatus().arm_status.arm_status == pp.ARM_STATUS_COMM_ERROR
    assert device._device_error() is None and device.health()["comm_error_frames"] == 1
    receive(flagged)
    assert "communication error on joints [2]" in device._device_error()


def test_emergency_stop_on_the_arm_is_a_fault(piper_rig):
    sim, device, part = piper_rig
    device._sdk.EmergencyStop(pp.ESTOP_STOP)  # e.g. from another program on the bus
    assert wait_until(lambda: device.fault() is not None, 0.5)
    assert "emergency stop" in device.fault().message


def test_out_of_range_command_is_never_sent(piper_rig):
    sim, device, part = piper_rig
    start = sim.true_positions()
    for bad in ([3.0, 0.5, -0.5, 0, 0, 0, 0], [0, 0.5, -0.5, 0, 0, 0, 0.2], [np.nan, 0.5, -0.5, 0, 0, 0, 0]):
        device.command(np.array(bad))
        assert device.fault().kind == df.COMMAND_OUT_OF_RANGE
        device.clear_fault()
    time.sleep(0.05)
    np.testing.assert_allclose(sim.true_positions(), start, atol=1e-6)
    assert device.fault() is None


def test_unplugged_mid_episode(strict_piper_rig):
    sim, device, part = strict_piper_rig
    assert rearm_until_healthy(device)
    unplugged_at = now_ns()
    sim.unplug()
    assert wait_for_fault(device, lambda fault: fault.detected_ns >= unplugged_at)
    assert device.fault().kind == df.FEEDBACK_TIMEOUT
    for _ in range(5):  # the control loop keeps running
        device.command(part.home)
        device.read()


def test_no_arm_on_the_bus_is_a_clear_connection_error():
    C_PiperInterface_V2._instances.clear()
    part = RigPart("arm", PartSpec("piper"))
    config = bus_config(arm_channel=unique_channel("empty"))
    config.connect_timeout_s = 0.2
    device = build_part_device("real", part, SimDynamicsConfig(), config)
    with pytest.raises(ConnectionError, match="no feedback"):
        device.connect()
    assert not C_PiperInterface_V2._instances  # a failed connect leaves no cached SDK instance behind
