"""Property tests over random A7 targets: the 0x0A frames on the bus never exceed the model's limits, and each is
the commanded angle within one device unit (one float32 step)."""

import numpy as np
import pytest
from device_harness import bus_config, unique_channel, wait_until
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from teledex_lerobot.devices.linker_a7 import protocol as ap
from teledex_lerobot.devices.linker_a7.simulator import A7SimConfig, A7Simulator
from teledex_lerobot.devices.registry import build_part_device
from teledex_lerobot.devices.simulated import SimDynamicsConfig
from teledex_lerobot.presets import PartSpec
from teledex_lerobot.rig import RigPart

A7_PART = RigPart("arm", PartSpec("linker_a7", "right"))


def _targets(margin: float):
    """Random targets spanning the limits and up to `margin` (relative) beyond them, NaN included."""
    span = A7_PART.upper - A7_PART.lower
    elements = [st.one_of(st.floats(float(lo - margin * s), float(hi + margin * s)), st.just(float("nan")))
                for lo, hi, s in zip(A7_PART.lower, A7_PART.upper, span, strict=True)]
    return st.tuples(*elements).map(np.array)


@given(_targets(0.0))
@settings(max_examples=300)
def test_a7_units_round_trip(q):
    q = np.nan_to_num(q)
    sent = ap.as_device_float(q)
    assert np.all(np.abs(sent - q) <= ap.device_unit_rad(q))
    np.testing.assert_array_equal(ap.as_device_float(sent), sent)  # float32 -> rad -> float32 is exact
    for value in q:
        assert ap.unpack_float(ap.pack_float(value)) == np.float32(value)


@pytest.fixture(scope="module")
def a7_on_bus():
    channel = unique_channel("a7-prop")
    with A7Simulator(A7SimConfig(channel=channel)) as sim:
        device = build_part_device("real", A7_PART, SimDynamicsConfig(), bus_config(arm_channel=channel))
        device.connect()
        try:
            yield device, sim
        finally:
            device.disconnect()


@given(_targets(0.5))
@example(A7_PART.lower - 5e-7)  # within limit_tolerance_rad of a limit
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_a7_commands_on_the_bus_stay_within_limits(a7_on_bus, q):
    device, sim = a7_on_bus
    sim.targets_received.clear()
    device.command(q)
    device.clear_fault()
    tolerance = device.config.limit_tolerance_rad  # round-off past a limit is accepted, and sent as the limit
    in_range = bool(np.all(np.isfinite(q)) and np.all((q >= A7_PART.lower - tolerance)
                                                      & (q <= A7_PART.upper + tolerance)))
    # every motor receives one target frame, or none when the driver rejected the target
    arrived = wait_until(lambda: len(sim.targets_received) >= ap.JOINTS, 1.0 if in_range else 0.02)
    assert arrived == in_range
    if in_range:
        by_motor = dict(sim.targets_received)
        radians = np.array([ap.unpack_float(by_motor[motor_id]) for motor_id in ap.motor_ids("right")])
        one_unit = ap.device_unit_rad(radians)
        assert np.all(radians >= A7_PART.lower - one_unit) and np.all(radians <= A7_PART.upper + one_unit)
        assert np.all(np.abs(radians - np.clip(q, A7_PART.lower, A7_PART.upper)) <= one_unit)
