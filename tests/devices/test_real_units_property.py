"""Property tests over random targets: commands on the bus never exceed the model's limits, and radians <-> device
units round-trip within one device unit (Piper: 0.001 deg / 0.001 mm; LinkerHand: 1 of 255)."""

import can
import numpy as np
import pytest
from device_harness import bus_config, unique_channel, wait_until
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from piper_sdk import C_PiperInterface_V2

from teledex_lerobot.devices.agilex import protocol as pp
from teledex_lerobot.devices.agilex.simulator import PiperSimConfig, PiperSimulator
from teledex_lerobot.devices.linkerhand import protocol as lp
from teledex_lerobot.devices.linkerhand.byte_map import byte_scale
from teledex_lerobot.devices.linkerhand.simulator import LinkerHandSimConfig, LinkerHandSimulator
from teledex_lerobot.devices.registry import build_part_device
from teledex_lerobot.devices.simulated import SimDynamicsConfig
from teledex_lerobot.presets import PartSpec
from teledex_lerobot.rig import RigPart

pytestmark = pytest.mark.filterwarnings("ignore:The .bustype. argument is deprecated:DeprecationWarning")

PIPER = RigPart("arm", PartSpec("piper"))
HANDS = {model: RigPart("hand", PartSpec(model)) for model in lp.LAYOUTS}
FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _targets(part, margin: float):
    """Random targets spanning the limits and up to `margin` (relative) beyond them, NaN included."""
    span = part.upper - part.lower
    elements = [st.one_of(st.floats(float(lo - margin * s), float(hi + margin * s)), st.just(float("nan")))
                for lo, hi, s in zip(part.lower, part.upper, span, strict=True)]
    return st.tuples(*elements).map(np.array)


@given(_targets(PIPER, 0.0))
@settings(max_examples=300)
def test_piper_units_round_trip(q):
    q = np.nan_to_num(q)
    millideg = pp.rad_to_millideg(q[:6])
    assert np.all(np.abs(pp.millideg_to_rad(millideg) - q[:6]) <= 0.5 / pp.MILLIDEG_PER_RAD + 1e-12)
    np.testing.assert_array_equal(pp.rad_to_millideg(pp.millideg_to_rad(millideg)), millideg)
    micrometres = pp.m_to_um(q[6])
    assert abs(pp.um_to_m(micrometres) - q[6]) <= 0.5e-6 + 1e-15
    assert np.all(np.abs(millideg) <= pp.SDK_JOINT_FILTER_MILLIDEG)


@pytest.mark.parametrize("model", sorted(HANDS))
def test_linkerhand_units_round_trip(model):
    part = HANDS[model]
    scale = byte_scale(model, part.spec.side, part.lower, part.upper)

    @given(_targets(part, 0.0))
    @settings(max_examples=200)
    def check(q):
        q = np.nan_to_num(q, nan=float(part.lower[0]))
        q = np.clip(q, part.lower, part.upper)
        raw = scale.to_bytes(q)
        assert np.all((raw >= 0) & (raw <= lp.RAW_MAX))
        np.testing.assert_array_equal(scale.to_bytes(scale.to_radians(raw)), raw)
        assert np.all(np.abs(scale.to_radians(raw) - q) <= 0.5 * (part.upper - part.lower) / lp.RAW_MAX + 1e-12)
    check()


class _Sniffer:
    """Every frame on the bus (the Piper's commands have their own IDs, so they are told apart from feedback)."""

    def __init__(self, channel: str):
        self.bus = can.Bus(channel=channel, interface="virtual")

    def drain(self) -> list[can.Message]:
        frames = []
        while (message := self.bus.recv(timeout=0)) is not None:
            frames.append(message)
        return frames


@pytest.fixture(scope="module")
def piper_on_bus():
    C_PiperInterface_V2._instances.clear()
    channel = unique_channel("piper-prop")
    sim = PiperSimulator(PiperSimConfig(channel=channel)).start()
    device = build_part_device("real", PIPER, SimDynamicsConfig(), bus_config(arm_channel=channel))
    device.connect()
    sniffer = _Sniffer(channel)
    yield device, sniffer
    sniffer.bus.shutdown()
    device.disconnect()
    sim.stop()
    C_PiperInterface_V2._instances.clear()


@given(_targets(PIPER, 0.5))
@FAST
def test_piper_commands_on_the_bus_stay_within_limits(piper_on_bus, q):
    device, sniffer = piper_on_bus
    sniffer.drain()
    device.command(q)
    device.clear_fault()
    sent = {m.arbitration_id: bytes(m.data) for m in sniffer.drain()}
    if pp.JOINT_CTRL[0] not in sent:
        return  # rejected (out of range or NaN): nothing reached the bus
    millideg = [v for can_id in pp.JOINT_CTRL for v in pp.unpack_int32_pair(sent[can_id])]
    radians = pp.millideg_to_rad(millideg)
    one_unit = 1 / pp.MILLIDEG_PER_RAD
    assert np.all(radians >= PIPER.lower[:6] - one_unit) and np.all(radians <= PIPER.upper[:6] + one_unit)
    assert np.all(np.abs(radians - q[:6]) <= one_unit)  # and it is the commanded target


@pytest.fixture(scope="module")
def l20_on_bus():
    channel = unique_channel("l20-prop")
    sim = LinkerHandSimulator(LinkerHandSimConfig(model="linkerhand_l20", channel=channel)).start()
    part = HANDS["linkerhand_l20"]
    device = build_part_device("real", part, SimDynamicsConfig(), bus_config(hand_channel=channel))
    device.connect()
    yield device, sim, part
    device.disconnect()
    sim.stop()


@given(_targets(HANDS["linkerhand_l20"], 0.5))
@FAST
def test_hand_commands_on_the_bus_stay_within_limits(l20_on_bus, q):
    device, sim, part = l20_on_bus
    layout = sim.layout
    sim.position_sets.clear()
    device.command(q)
    device.clear_fault()
    tolerance = device.config.limit_tolerance_rad  # round-off past a limit is accepted, and sent as the limit
    in_range = bool(np.all(np.isfinite(q)) and np.all((q >= part.lower - tolerance) & (q <= part.upper + tolerance)))
    # the hand receives one set frame per position block, or nothing when the driver rejected the target
    # generous when frames are expected (returns as soon as they arrive); short when none should come
    arrived = wait_until(lambda: len(sim.position_sets) >= len(layout.position_frames), 1.0 if in_range else 0.02)
    assert arrived == in_range
    if in_range:
        vector = np.zeros(layout.raw_size, dtype=int)
        for cmd, values in sim.position_sets:
            block = layout.blocks_by_cmd()[cmd][1]
            vector[block.start:block.start + block.count] = list(values)
        radians = sim.scale.to_radians(vector[list(layout.joint_to_raw)])
        assert np.all(radians >= part.lower - 1e-12) and np.all(radians <= part.upper + 1e-12)
        assert np.all(np.abs(radians - np.clip(q, part.lower, part.upper)) <= (part.upper - part.lower) / lp.RAW_MAX)
