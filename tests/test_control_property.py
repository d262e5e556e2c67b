"""Property: whatever the input does (1 m jumps, NaN poses, the stream stopping and resuming with the trigger held,
garbage and truncated packets), every command moves at most the rate limit per tick and stays in the soft limits."""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from teledex_lerobot.control.config import ControlConfig
from teledex_lerobot.control.rig_controller import RigController
from teledex_lerobot.inputs import InputReceiver, encode_xr_state, parse_xr_state
from teledex_lerobot.presets import load_preset
from teledex_lerobot.rig import Rig

RIG = Rig.from_preset(load_preset("piper_linkerhand_o6_single"))
START = np.array([0.35, -0.20, 1.00])
TICK_MS = 10

events = st.one_of(
    st.tuples(st.just("move"), st.floats(-0.05, 0.05), st.floats(-0.05, 0.05), st.floats(-0.05, 0.05)),
    st.tuples(st.just("jump"), st.sampled_from([-1.0, 1.0]), st.integers(0, 2), st.just(0.0)),
    st.tuples(st.just("trigger"), st.floats(0.0, 1.0), st.floats(0.0, 1.0), st.just(0.0)),
    st.tuples(st.just("nan"), st.just(0.0), st.just(0.0), st.just(0.0)),
    st.tuples(st.just("garbage"), st.just(0.0), st.just(0.0), st.just(0.0)),
    st.tuples(st.just("truncated"), st.floats(0.1, 0.9), st.just(0.0), st.just(0.0)),
    st.tuples(st.just("stop"), st.floats(50, 600), st.just(0.0), st.just(0.0)),
)


def datagram(position, trigger, grip, nan=False):
    pose = np.r_[position, 0.0, 0.0, 0.0, 1.0]
    data = encode_xr_state(controllers={"right": {"pose": pose, "trigger": trigger, "grip": grip}})
    return data.replace(b'"pose":"', b'"pose":"nan,') if nan else data


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(events, min_size=5, max_size=40))
def test_commands_respect_rate_and_soft_limits(sequence):
    controller = RigController(RIG, ControlConfig.load("xr_hybrid"))
    controller.state_machine.press("L1")
    controller.state_machine.press("L2")
    receiver = InputReceiver(parse_xr_state)
    step = controller.config.output.max_step_rad_per_tick + 1e-9
    now_ms, position, trigger, grip = 0, START.copy(), 1.0, 0.0
    previous = controller.last_sent
    for kind, a, b, c in sequence:
        ticks = 3
        if kind == "move":
            position = position + [a, b, c]
        elif kind == "jump":
            position = position.copy()
            position[b] += a  # 1 m in one packet
        elif kind == "trigger":
            trigger, grip = a, b
        elif kind == "stop":
            ticks = int(a) // TICK_MS  # no packets for a while (trigger still held when it resumes)
        for tick in range(ticks):
            now_ms += TICK_MS
            if kind != "stop" or tick == ticks - 1:
                if kind == "garbage":
                    receiver.handle(b"\x00\xffnot json{", now_ms * 1_000_000)
                elif kind == "truncated":
                    data = datagram(position, trigger, grip)
                    receiver.handle(data[: int(len(data) * a)], now_ms * 1_000_000)
                else:
                    receiver.handle(datagram(position, trigger, grip, nan=kind == "nan"), now_ms * 1_000_000)
            sent = controller.step(receiver.latest(), now_ms * 1_000_000)
            for role, chain in controller.chains.items():
                assert np.all(np.abs(sent[role] - previous[role]) <= step), (kind, role)
                assert np.all(sent[role] >= chain.soft_lower - 1e-12) and np.all(sent[role] <= chain.soft_upper + 1e-12)
                assert np.all(sent[role] >= RIG.parts[role].lower) and np.all(sent[role] <= RIG.parts[role].upper)
            previous = sent
    assert receiver.parse_failures == sum(kind in ("garbage", "truncated") for kind, *_ in sequence) * 3
    assert receiver.bad_fields == sum(kind == "nan" for kind, *_ in sequence) * 3  # the pose dropped, not the packet
