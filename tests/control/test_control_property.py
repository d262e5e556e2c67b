"""Property: from any measured start pose, whatever the input does (none at all, 1 m jumps, NaN poses, the stream
stopping and resuming with the trigger held, garbage and truncated packets, any state-machine key at any time), at
25, 50 or 100 Hz with jittered ticks, every command either holds the robot where it is measured or moves no joint
faster than the velocity limit, and never leaves the soft limits (a start pose outside them is never left farther
out)."""

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
MS = 1_000_000
ROBOT_TIME_CONSTANT_S = 0.04  # the simulated robot tracks each command with this first-order lag

events = st.one_of(
    st.tuples(st.just("move"), st.floats(-0.05, 0.05), st.floats(-0.05, 0.05), st.floats(-0.05, 0.05)),
    st.tuples(st.just("jump"), st.sampled_from([-1.0, 1.0]), st.integers(0, 2), st.just(0.0)),
    st.tuples(st.just("trigger"), st.floats(0.0, 1.0), st.floats(0.0, 1.0), st.just(0.0)),
    st.tuples(st.just("key"), st.sampled_from(["L1", "L2", "R1", "R2", "ENGAGE"]), st.just(0), st.just(0.0)),
    st.tuples(st.just("nan"), st.just(0.0), st.just(0), st.just(0.0)),
    st.tuples(st.just("garbage"), st.just(0.0), st.just(0), st.just(0.0)),
    st.tuples(st.just("truncated"), st.floats(0.1, 0.9), st.just(0), st.just(0.0)),
    st.tuples(st.just("stop"), st.floats(50, 600), st.just(0), st.just(0.0)),
)


def datagram(position, trigger, grip, nan=False):
    pose = np.r_[position, 0.0, 0.0, 0.0, 1.0]
    data = encode_xr_state(controllers={"right": {"pose": pose, "trigger": trigger, "grip": grip}})
    return data.replace(b'"pose":"', b'"pose":"nan,') if nan else data


def start_poses():
    """Anywhere within the model's limits, including between the soft and the hard limits."""
    sizes = {role: len(part.joints) for role, part in RIG.parts.items()}
    return st.fixed_dictionaries({role: st.lists(st.floats(0.0, 1.0), min_size=n, max_size=n)
                                  for role, n in sizes.items()}).map(
        lambda fractions: {role: RIG.parts[role].lower + np.array(f) * (RIG.parts[role].upper - RIG.parts[role].lower)
                           for role, f in fractions.items()})


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(start=start_poses(), rate_hz=st.sampled_from([25, 50, 100]), jitter=st.floats(0.0, 0.5),
       sequence=st.lists(events, min_size=0, max_size=40), seed=st.integers(0, 2**16))
def test_commands_hold_or_respect_velocity_and_soft_limits(start, rate_hz, jitter, sequence, seed):
    rng = np.random.default_rng(seed)
    controller = RigController(RIG, ControlConfig.load("xr_hybrid"))
    receiver = InputReceiver(parse_xr_state)
    max_velocity = controller.config.output.max_velocity_rad_s
    max_tick_s = controller.config.output.max_tick_s
    measured = {role: q.copy() for role, q in start.items()}
    previous = {role: q.copy() for role, q in start.items()}
    low = {role: np.minimum(chain.soft_lower, start[role]) for role, chain in controller.chains.items()}
    high = {role: np.maximum(chain.soft_upper, start[role]) for role, chain in controller.chains.items()}
    now_ns, position, trigger, grip = 0, START.copy(), 1.0, 0.0
    for kind, a, b, c in [*sequence, ("stop", 300.0, 0, 0.0)]:  # every run ends with the input gone
        ticks = 3
        if kind == "move":
            position = position + [a, b, c]
        elif kind == "jump":
            position = position.copy()
            position[b] += a  # 1 m in one packet
        elif kind == "trigger":
            trigger, grip = a, b
        elif kind == "key":
            controller.state_machine.press(a)
        elif kind == "stop":
            ticks = max(1, int(a * rate_hz / 1000))  # no packets for a while (trigger still held when it resumes)
        for _ in range(ticks):
            dt_s = (1 + jitter * rng.uniform(-1, 1)) / rate_hz
            now_ns += int(dt_s * 1e9)
            if kind not in ("stop", "key"):
                if kind == "garbage":
                    receiver.handle(b"\x00\xffnot json{", now_ns)
                elif kind == "truncated":
                    data = datagram(position, trigger, grip)
                    receiver.handle(data[: int(len(data) * a)], now_ns)
                else:
                    receiver.handle(datagram(position, trigger, grip, nan=kind == "nan"), now_ns)
            sent = controller.step(receiver.latest(), now_ns, lambda: {r: q.copy() for r, q in measured.items()})
            for role in RIG.parts:
                holds_measured = np.array_equal(sent[role], measured[role])
                step_limit = max_velocity * min(dt_s, max_tick_s) + 1e-9
                assert holds_measured or np.all(np.abs(sent[role] - previous[role]) <= step_limit), (kind, role)
                assert np.all(sent[role] >= low[role] - 1e-12) and np.all(sent[role] <= high[role] + 1e-12)
                # the robot moves toward what it was sent
                measured[role] += (sent[role] - measured[role]) * (1 - np.exp(-dt_s / ROBOT_TIME_CONSTANT_S))
                previous[role] = sent[role]
    assert receiver.parse_failures == sum(kind in ("garbage", "truncated") for kind, *_ in sequence) * 3
    assert receiver.bad_fields == sum(kind == "nan" for kind, *_ in sequence) * 3  # the pose dropped, not the packet
