"""LinkerHand drivers against the LinkerHand simulator: O6 through linkerbot, L10/L20 through our CAN driver."""

import numpy as np
import pytest
from device_harness import bus_config, rearm_until_healthy, unique_channel, wait_for_fault, wait_until

from teledex_lerobot.clock import now_ns
from teledex_lerobot.devices import device_fault as df
from teledex_lerobot.devices.linkerhand import protocol as lp
from teledex_lerobot.devices.linkerhand.can_driver import LinkerHandCanDevice
from teledex_lerobot.devices.linkerhand.config import LinkerHandConfig
from teledex_lerobot.devices.linkerhand.o6_driver import O6JointDevice
from teledex_lerobot.devices.linkerhand.simulator import LinkerHandSimConfig, LinkerHandSimulator
from teledex_lerobot.devices.registry import build_part_device
from teledex_lerobot.devices.simulated import SimDynamicsConfig
from teledex_lerobot.presets import PartSpec
from teledex_lerobot.rig import RigPart

MODELS = {"linkerhand_o6": O6JointDevice, "linkerhand_l10": LinkerHandCanDevice,
          "linkerhand_l20": LinkerHandCanDevice}

# every model, plus a left hand (other CAN ID 0x28, mirrored roll limits on the L10)
CASES = [(model, "right") for model in MODELS] + [("linkerhand_l10", "left")]


def _rig(case, strict: bool):
    model, side = case
    channel = unique_channel(model)
    sim = LinkerHandSimulator(LinkerHandSimConfig(model=model, side=side, channel=channel)).start()
    part = RigPart("hand", PartSpec(model, side))
    config = bus_config(hand_channel=channel, strict=strict, linkerhand=LinkerHandConfig(tactile=True))
    device = build_part_device("real", part, SimDynamicsConfig(), config)
    device.connect()
    yield sim, device, part
    device.disconnect()
    sim.stop()


@pytest.fixture(params=CASES, ids=lambda p: f"{p[0]}-{p[1]}")
def hand_rig(request):
    yield from _rig(request.param, strict=False)


@pytest.fixture(params=CASES, ids=lambda p: f"{p[0]}-{p[1]}")
def strict_hand_rig(request):
    """The production 50 ms feedback timeout: for the fault-detection tests."""
    yield from _rig(request.param, strict=True)


def _step_rad(part) -> np.ndarray:
    return (part.upper - part.lower) / lp.RAW_MAX


def test_targets_round_trip_within_one_device_unit(hand_rig):
    sim, device, part = hand_rig
    assert isinstance(device, MODELS[part.spec.model])
    target = part.lower + np.linspace(0.2, 0.9, part.model.joint_names.__len__()) * (part.upper - part.lower)

    def reached():
        device.command(target)
        return np.all(np.abs(device.read().positions - target) <= _step_rad(part) + 1e-9)
    assert wait_until(reached, 3.0, period_s=0.01), device.read().positions - target
    np.testing.assert_array_equal(sim.target_raw(), device.scale.to_bytes(target))
    assert 0 <= now_ns() - device.read().capture_ns < 100_000_000
    assert device.fault() is None


def test_speed_and_torque_are_set_at_connect(hand_rig):
    sim, device, part = hand_rig
    assert wait_until(lambda: np.all(sim.speed_raw == 200))
    if part.spec.model != "linkerhand_l20":  # the L20 has no torque limit frames
        assert np.all(sim.torque_raw == 200)


def test_motor_fault_is_a_joint_error(hand_rig):
    sim, device, part = hand_rig
    raised_at = now_ns()
    sim.set_motor_fault(1, 8)  # over-current
    assert wait_until(lambda: device.fault() is not None, 1.0)
    assert device.fault().kind == df.JOINT_ERROR and "fault codes" in device.fault().message
    assert device.fault().detected_ns >= raised_at  # how soon: benchmarks/fault_flags.py
    sim.set_motor_fault(1, 0)
    assert wait_until(lambda: (device.clear_fault(), device.fault())[1] is None, 1.0)


def test_hand_that_stops_replying_is_detected_and_commands_held(strict_hand_rig):
    sim, device, part = strict_hand_rig
    assert rearm_until_healthy(device)
    muted_at = now_ns()
    sim.stop_replying()
    assert wait_for_fault(device, lambda fault: fault.detected_ns >= muted_at)
    assert device.fault().kind == df.FEEDBACK_TIMEOUT
    held = device.device_target.copy()
    device.command(part.upper)  # not forwarded
    np.testing.assert_array_equal(device.device_target, held)


def test_tactile_matrices(hand_rig):
    sim, device, part = hand_rig
    shape = sim.layout.tactile_shape
    if shape is None:
        assert device.tactile() == {}
        return
    assert wait_until(lambda: len(device.tactile()) == 5, 2.0)
    assert all(matrix.shape == shape for matrix in device.tactile().values())
    closed = part.upper.copy()
    assert wait_until(lambda: (device.command(closed), device.tactile()["index"].max() > 200)[1], 3.0)


@pytest.mark.parametrize("plugged, expected", [("linkerhand_l10", "linkerhand_o6"), ("linkerhand_o6", "linkerhand_l10"),
                                               ("linkerhand_l20", "linkerhand_l10")])
def test_a_different_hand_model_is_refused_at_connect(plugged, expected):
    """The hand's own identity replies decide: its driver never drives another model's frames."""
    channel = unique_channel("wrong-model")
    with LinkerHandSimulator(LinkerHandSimConfig(model=plugged, channel=channel)) as sim:
        device = build_part_device("real", RigPart("hand", PartSpec(expected, "right")), SimDynamicsConfig(),
                                   bus_config(hand_channel=channel))
        code = plugged.removeprefix("linkerhand_").upper()
        with pytest.raises(df.DeviceUnavailable, match=f"reports itself as a LinkerHand {code} .*Fix: plug in the "):
            device.connect()
        assert not sim.position_sets  # nothing was sent to move it
