"""The Linker Arm A7 real driver (through the unmodified linkerbot A7 class) against the A7 simulator: motion,
units, limits, faults."""

import re
import threading
import time
from contextlib import contextmanager

import numpy as np
import pytest
from device_harness import bus_config, rearm_until_healthy, unique_channel, wait_for_fault, wait_until

from teledex_lerobot.can.port import ECHOING_INTERFACES, NETWORK_INTERFACES, CanPortConfig
from teledex_lerobot.clock import now_ns
from teledex_lerobot.devices import device_fault as df
from teledex_lerobot.devices.linker_a7 import protocol as ap
from teledex_lerobot.devices.linker_a7.driver import LinkerA7JointDevice
from teledex_lerobot.devices.linker_a7.simulator import A7SimConfig, A7Simulator
from teledex_lerobot.devices.registry import build_part_device
from teledex_lerobot.devices.simulated import SimDynamicsConfig
from teledex_lerobot.errors import ConfigError
from teledex_lerobot.presets import PartSpec
from teledex_lerobot.rig import RigPart

START = (0.4, 0.0, 0.0, 1.2, 0.0, 0.0, 0.0)  # rad, shoulder pitch first


def _part(side: str = "right", joints=None) -> RigPart:
    return RigPart("arm", PartSpec("linker_a7", side, joints))


@contextmanager
def _rig(side: str, strict: bool, joints=None):
    """(simulator, connected driver, rig part) on a fresh virtual channel; everything shut down afterwards."""
    channel = unique_channel(f"a7-{side}")
    sim = A7Simulator(A7SimConfig(side=side, channel=channel, initial_positions=START)).start()
    part = _part(side, joints)
    device = build_part_device("real", part, SimDynamicsConfig(), bus_config(arm_channel=channel, strict=strict))
    try:
        device.connect()
        yield sim, device, part
    finally:
        device.disconnect()
        sim.stop()


@pytest.fixture
def a7_rig():
    with _rig("right", strict=False) as rig:
        yield rig


@pytest.fixture
def strict_a7_rig():
    """The production 50 ms feedback timeout: for the fault-detection tests."""
    with _rig("right", strict=True) as rig:
        yield rig


def _reach(device, target, timeout_s=5.0) -> bool:
    def reached():
        device.command(target)
        return np.all(np.abs(device.read().positions - target) <= ap.device_unit_rad(target))
    return wait_until(reached, timeout_s, period_s=0.01)


def test_connect_enables_and_starts_where_the_arm_is(a7_rig):
    sim, device, part = a7_rig
    assert isinstance(device, LinkerA7JointDevice) and device.dof == 7
    assert wait_until(lambda: sim.enabled == [True] * 7 and sim.mode == [ap.MODE_PROFILE_POSITION] * 7)
    assert sim.error_resets >= 7  # A7.enable() resets errors first (its frames precede the enable frames)
    settings = device.settings
    # linkerbot queues its writes for its send thread: they reach the bus shortly after connect() returns
    assert wait_until(lambda: np.all(sim.profile_speed_rad_s == settings.speed_rad_s)
                      and np.all(sim.acceleration_rad_s2 == settings.acceleration_rad_s2)
                      and np.all(sim.deceleration_rad_s2 == settings.acceleration_rad_s2))
    state = device.read()
    np.testing.assert_array_equal(state.positions, ap.as_device_float(START))
    assert 0 <= now_ns() - state.capture_ns < 1_000_000_000  # the SDK's receive time, on our monotonic clock
    np.testing.assert_array_equal(device.device_target, state.positions)  # the first command must not jump


@pytest.mark.parametrize("side", ["right", "left"])
def test_targets_round_trip_within_one_device_unit(side):
    with _rig(side, strict=False) as (sim, device, part):
        target = part.lower + np.linspace(0.2, 0.8, 7) * (part.upper - part.lower)
        assert _reach(device, target), device.read().positions - target
        # the motors got the nearest float32, and the measurement reads it back within one float32 step
        np.testing.assert_array_equal(sim.target(), ap.as_device_float(target))
        assert {motor_id for motor_id, _ in sim.targets_received} == set(ap.motor_ids(side))


def test_velocities_are_measured_while_moving(a7_rig):
    sim, device, part = a7_rig
    target = np.array(START) + np.array([0.6, 0, 0, 0, 0, 0, 0])
    moving = []

    def arrived():
        device.command(target)
        state = device.read()
        if state.velocities[0] > 0.1:
            moving.append(state.velocities[0])
        return np.all(np.abs(state.positions - target) <= ap.device_unit_rad(target))
    assert wait_until(arrived, 5.0, period_s=0.005)
    assert moving and max(moving) > 0.5, moving  # it moved, and the driver measured it
    # a loaded machine stamps a reading late now and then, and that one difference spikes: the typical one must not
    assert np.median(moving) <= device.settings.speed_rad_s * 1.5
    # at rest the readings keep coming unchanged: the velocity falls back to zero
    assert wait_until(lambda: device.read().velocities[0] == 0.0, 2.0, period_s=0.005)


def test_driving_a_subset_holds_the_other_joints():
    joints = ("Right_Shoulder_Pitch_Joint", "Right_Shoulder_Roll_Joint", "Right_Shoulder_Yaw_Joint",
              "Right_Elbow_Pitch_Joint")
    with _rig("right", strict=False, joints=joints) as (sim, device, part):
        assert device.dof == 4
        assert _reach(device, np.array([0.3, -0.2, 0.1, 1.0]))
        np.testing.assert_array_equal(sim.target()[4:], ap.as_device_float(START[4:]))  # held where they were


def test_out_of_range_command_is_never_sent(a7_rig):
    sim, device, part = a7_rig
    start, sent = sim.true_positions(), len(sim.targets_received)
    for bad in (part.upper + 0.1, np.where(np.arange(7) == 3, part.lower[3] - 0.01, START),
                np.array([np.nan, *START[1:]]), np.zeros(6)):
        device.command(bad)
        assert device.fault().kind == df.COMMAND_OUT_OF_RANGE
        device.clear_fault()
    time.sleep(0.05)
    assert len(sim.targets_received) == sent
    np.testing.assert_allclose(sim.true_positions(), start, atol=1e-6)
    # at a limit exactly is fine, and reaches the motor as the limit
    assert _reach(device, part.upper.copy())
    assert np.all(sim.target() <= ap.as_device_float(part.upper))


def test_feedback_silence_is_a_fault_within_100ms_and_the_target_holds(strict_a7_rig):
    sim, device, part = strict_a7_rig
    target = np.array([0.6, -0.3, 0.2, 1.0, 0.1, 0.2, -0.1])
    assert _reach(device, target)
    assert rearm_until_healthy(device)
    silenced_at = now_ns()
    sim.silence()
    assert wait_for_fault(device, lambda fault: fault.detected_ns >= silenced_at)
    fault = device.fault()
    assert fault.kind == df.FEEDBACK_TIMEOUT
    assert fault.detected_ns >= silenced_at  # how soon: test_device_liveness.py, benchmarks/fault_timeouts.py
    sent = len(sim.targets_received)
    device.command(np.array(START))  # not forwarded while in fault
    time.sleep(0.05)
    assert len(sim.targets_received) == sent
    np.testing.assert_allclose(sim.true_positions(), ap.as_device_float(target), atol=1e-6)
    sim.silence(silent=False)
    assert rearm_until_healthy(device)


def test_one_silent_motor_is_named(strict_a7_rig):
    sim, device, part = strict_a7_rig
    assert rearm_until_healthy(device)
    sim.silence([3])
    assert wait_for_fault(device, lambda fault: "54" in fault.message)
    assert re.search(r"motors \[[0-9, ]*54[0-9, ]*\] do not answer", device.fault().message)


def test_over_temperature_is_a_joint_error(strict_a7_rig):
    sim, device, part = strict_a7_rig
    assert rearm_until_healthy(device)
    raised_at = now_ns()
    sim.set_temperature(2, 82.0)
    assert wait_for_fault(device, lambda fault: fault.kind == df.JOINT_ERROR)
    assert "motors [53]" in device.fault().message
    assert device.fault().detected_ns >= raised_at  # how soon: benchmarks/fault_flags.py
    sim.set_temperature(2, 40.0)
    assert rearm_until_healthy(device)


def test_unplugged_mid_episode(strict_a7_rig):
    sim, device, part = strict_a7_rig
    assert rearm_until_healthy(device)
    unplugged_at = now_ns()
    sim.unplug()
    assert wait_for_fault(device, lambda fault: fault.detected_ns >= unplugged_at)
    assert device.fault().kind == df.FEEDBACK_TIMEOUT
    for _ in range(5):  # the control loop keeps running
        device.command(part.home)
        device.read()


def test_no_arm_on_the_bus_is_a_clear_connection_error():
    threads_before = {t.ident for t in threading.enumerate()}
    config = bus_config(arm_channel=unique_channel("a7-empty"))
    config.connect_timeout_s = 0.2
    device = build_part_device("real", _part(), SimDynamicsConfig(), config)
    with pytest.raises(ConnectionError, match="no feedback.*CAN IDs 51-57"):
        device.connect()
    # every failed attempt's CAN dispatcher was stopped
    assert wait_until(lambda: not [t for t in threading.enumerate()
                                   if t.ident not in threads_before and "CANMessageDispatcher" in t.name], 2.0)


@pytest.mark.parametrize("interface", sorted(NETWORK_INTERFACES & ECHOING_INTERFACES))
@pytest.mark.parametrize("model", ["linker_a7", "linkerhand_o6", "linkerhand_l10", "piper"])
def test_a_network_bus_warns_it_reaches_the_network_and_echoing_drivers_refuse_it(model, interface, caplog):
    """python-can's multicast bus reaches the network and every bus hears its own frames: a warning names the
    loopback bus, and the drivers whose requests and replies share CAN IDs refuse it (linkerbot's A7 would fail, the
    hands would read their own commands as feedback); piper_sdk copes. Nothing is opened: the refusals come first."""
    port = CanPortConfig(interface, "239.74.1.1")
    port.validate("real.arm")
    assert "sends every CAN frame onto this machine's network" in caplog.text and "interface=teledex" in caplog.text
    part = RigPart("hand", PartSpec(model, "right")) if model.startswith("linkerhand") else RigPart(
        "arm", PartSpec(model, "right"))
    config = bus_config()
    config.arm = config.hand = port
    if model == "piper":
        build_part_device("real", part, SimDynamicsConfig(), config)  # built; nothing is opened until connect
    else:
        with pytest.raises(ConfigError, match="hears its own frames back.*Use interface=teledex"):
            build_part_device("real", part, SimDynamicsConfig(), config)
