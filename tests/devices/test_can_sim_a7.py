"""The A7 simulator against the unmodified linkerbot A7 class and raw frames. The class is built through open_a7,
which retries its 20 ms handshakes (a loaded host can miss one; these tests judge what the simulator answers)."""

import can
import numpy as np
import pytest
from device_harness import unique_channel, wait_until

from teledex_lerobot.devices.linker_a7 import protocol as ap
from teledex_lerobot.devices.linker_a7.driver import open_a7
from teledex_lerobot.devices.linker_a7.simulator import A7SimConfig, A7Simulator

START = (0.4, 0.0, 0.0, 1.2, 0.0, 0.0, 0.0)


@pytest.fixture
def sim_and_channel():
    channel = unique_channel("a7-sim")
    with A7Simulator(A7SimConfig(channel=channel, initial_positions=START)) as sim:
        yield sim, channel


@pytest.fixture
def raw_bus(sim_and_channel):
    sim, channel = sim_and_channel
    bus = can.Bus(channel=channel, interface="virtual")
    yield bus
    bus.shutdown()


def _ask(bus: can.BusABC, motor_id: int, register: int, timeout_s: float = 0.2) -> bytes | None:
    """Send a read request and return the reply payload (after the register byte), or None."""
    bus.send(can.Message(arbitration_id=motor_id, data=[register], is_extended_id=False))
    deadline = timeout_s
    while (message := bus.recv(timeout=deadline)) is not None:
        if message.arbitration_id == motor_id and message.data[0] == register:
            return bytes(message.data[1:])
    return None


def _write(bus: can.BusABC, motor_id: int, register: int, payload: bytes) -> None:
    bus.send(can.Message(arbitration_id=motor_id, data=bytes([register]) + payload, is_extended_id=False))


def test_linkerbot_connects_enables_moves_and_reads_back(sim_and_channel):
    sim, channel = sim_and_channel
    with open_a7("right", channel, "virtual", 5.0) as arm:  # handshake + 11 registers per motor + polling
        assert arm.get_angles() == pytest.approx(START, abs=1e-7)
        assert arm.get_temperatures() == [35.0] * 7
        assert not any(sim.enabled)
        arm.enable()
        assert wait_until(lambda: sim.enabled == [True] * 7 and sim.mode == [ap.MODE_PROFILE_POSITION] * 7)
        arm.set_velocities([2.0] * 7)
        arm.set_accelerations([20.0] * 7)
        target = [0.6, -0.4, 0.3, 1.0, 0.2, -0.1, 0.3]
        arm.move_j(target)
        assert wait_until(lambda: np.allclose(arm.get_angles(), target, atol=1e-6), 3.0), arm.get_angles()
        # the profile speed caps the motion: the profile never exceeds 2 rad/s (the joints follow it with first-order
        # dynamics, whose measured speed depends on when the host ran the simulator), and the joint did move fast
        profile, measured = [], []
        arm.move_j([0.0, -0.4, 0.3, 1.0, 0.2, -0.1, 0.3], blocking=False)
        assert wait_until(lambda: (profile.append(abs(sim.profile_velocity()[0])),
                                   measured.append(abs(arm.get_velocities()[0])),
                                   abs(arm.get_angles()[0]) < 1e-6)[-1], 3.0, period_s=0.005)
        assert 1.0 < max(profile) <= 2.0 + 1e-9 and max(measured) > 1.0
        arm.set_position_kps([30.0] * 7)
        assert wait_until(lambda: all(g[ap.POSITION_KP] == 30.0 for g in sim.gains))
        arm.disable()
        assert wait_until(lambda: not any(sim.enabled))


def test_targets_need_enable_and_profile_position_mode(sim_and_channel, raw_bus):
    sim, channel = sim_and_channel
    first = ap.motor_ids("right")[0]
    _write(raw_bus, first, ap.SET_POSITION, ap.pack_float(1.0))
    _write(raw_bus, first, ap.SET_ENABLE, b"\x01")
    _write(raw_bus, first, ap.SET_POSITION, ap.pack_float(1.0))  # enabled, but not in profile position mode
    assert wait_until(lambda: sim.requests_received == 3)
    assert sim.target()[0] == pytest.approx(0.4)
    _write(raw_bus, first, ap.SET_MODE, bytes([ap.MODE_PROFILE_POSITION]))
    _write(raw_bus, first, ap.SET_POSITION, ap.pack_float(1.0))
    assert wait_until(lambda: sim.target()[0] == 1.0)
    assert _ask(raw_bus, first, ap.ENABLED) == b"\x01"


def test_registers_limits_and_ids(sim_and_channel, raw_bus):
    sim, channel = sim_and_channel
    right, left = ap.motor_ids("right"), ap.motor_ids("left")
    assert all(_ask(raw_bus, motor_id, ap.HANDSHAKE) == b"\x01" for motor_id in right)
    assert _ask(raw_bus, left[0], ap.HANDSHAKE, timeout_s=0.05) is None  # a right arm: nobody on 61-67
    assert ap.unpack_float(_ask(raw_bus, right[3], ap.POSITION)) == pytest.approx(1.2)
    assert ap.unpack_float(_ask(raw_bus, right[0], ap.TEMPERATURE)) == 35.0
    # gains are written on one register and read back on another
    _write(raw_bus, right[1], ap.SET_VELOCITY_KI, ap.pack_float(0.25))
    assert ap.unpack_float(_ask(raw_bus, right[1], ap.VELOCITY_KI)) == 0.25
    _write(raw_bus, right[1], ap.SET_ACCELERATION, ap.pack_float(7.5))
    assert ap.unpack_float(_ask(raw_bus, right[1], ap.ACCELERATION)) == 7.5
    # a target beyond the URDF limit is clamped to it
    elbow = right[3]
    _write(raw_bus, elbow, ap.SET_ENABLE, b"\x01")
    _write(raw_bus, elbow, ap.SET_MODE, bytes([ap.MODE_PROFILE_POSITION]))
    _write(raw_bus, elbow, ap.SET_POSITION, ap.pack_float(9.0))
    assert wait_until(lambda: sim.target()[3] == sim.model.upper[3])


def test_silenced_motors_stop_answering_but_obey(sim_and_channel, raw_bus):
    sim, channel = sim_and_channel
    motor = ap.motor_ids("right")[2]
    sim.silence([2])
    assert _ask(raw_bus, motor, ap.POSITION, timeout_s=0.05) is None
    assert _ask(raw_bus, ap.motor_ids("right")[1], ap.POSITION) is not None
    _write(raw_bus, motor, ap.SET_ENABLE, b"\x01")
    assert wait_until(lambda: sim.enabled[2])
    sim.silence([2], silent=False)
    assert _ask(raw_bus, motor, ap.ENABLED) == b"\x01"


def test_left_arm_answers_on_61_to_67():
    channel = unique_channel("a7-left")
    with A7Simulator(A7SimConfig(side="left", channel=channel)) as sim, \
            open_a7("left", channel, "virtual", 5.0) as arm:
        assert arm.get_angles() == [0.0] * 7
        assert sim.model.joint_names[0] == "Left_Shoulder_Pitch_Joint"
