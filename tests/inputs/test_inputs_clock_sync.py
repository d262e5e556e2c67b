"""The sender's clock mapped onto ours: capture times from one-way timestamps under delay, bursts, drift and clock
steps (simulated clocks, no waiting), and the receiver stamping frames with them."""

import numpy as np
import pytest

from teledex_lerobot.inputs import InputReceiver, encode_joints, parse_joints
from teledex_lerobot.inputs.clock_sync import SenderClock

MS = 1_000_000
HEADSET_AHEAD_NS = 1_700_000_000_000_000_000  # the headset's Unix clock minus our monotonic clock


def stream(seconds=20.0, rate_hz=90.0, drift_ppm=0.0, seed=0):
    """(capture_ns on our clock, sender stamp, arrival_ns): Wi-Fi-like delays of 2 ms minimum, 1-30 ms jitter, and a
    burst every second (ten samples held back and delivered together)."""
    rng = np.random.default_rng(seed)
    capture = (np.arange(int(seconds * rate_hz)) * 1e9 / rate_hz).astype(np.int64) + 10**12
    stamps = HEADSET_AHEAD_NS + capture + ((capture - capture[0]) * drift_ppm * 1e-6).astype(np.int64)
    delay = 2 * MS + rng.exponential(4 * MS, len(capture)).astype(np.int64)
    arrival = capture + delay
    for start in range(0, len(capture), int(rate_hz)):
        burst = slice(start, start + 10)
        arrival[burst] = arrival[burst].max()
    return capture, stamps, np.maximum.accumulate(arrival)  # TCP delivers in order


def test_capture_times_follow_the_sender_not_the_arrival():
    capture, stamps, arrival = stream()
    clock = SenderClock()
    estimated = np.array([clock.capture_ns(s, a) for s, a in zip(stamps, arrival)])
    assert np.all(estimated <= arrival)
    error_ms = (estimated - capture)[90:] / 1e6  # after the first second
    assert error_ms.min() >= 0 and error_ms.max() <= 2.2  # late by the link's minimum delay (2 ms) at most
    assert ((arrival - capture)[90:] / 1e6).max() > 30  # what arrival times would have said
    assert clock.offset_ns - (-HEADSET_AHEAD_NS) == pytest.approx(2 * MS, abs=0.3 * MS)


def test_drift_is_followed():
    capture, stamps, arrival = stream(seconds=60, drift_ppm=200)  # 12 ms apart after a minute
    clock = SenderClock(window_s=5)
    estimated = np.array([clock.capture_ns(s, a) for s, a in zip(stamps, arrival)])
    assert np.abs((estimated - capture)[-900:] / 1e6).max() <= 4.0


def test_a_backward_clock_step_restarts_the_estimate_and_a_new_sender_resets_it():
    capture, stamps, arrival = stream(seconds=6)
    stamps[270:] -= 5_000_000_000  # the headset's clock steps back 5 s at 3 s
    clock = SenderClock()
    estimated = np.array([clock.capture_ns(s, a) for s, a in zip(stamps, arrival)])
    error_ms = (estimated - capture) / 1e6
    assert error_ms[90:270].max() < 3 and error_ms[270] < -4000  # until confirmed, the sample looks 5 s old
    assert np.abs(error_ms[300:]).max() < 10  # re-estimated 0.2 s later (first window after the step)
    clock.reset()
    assert clock.offset_ns is None and clock.capture_ns(7, 100) == 100  # the first sample: captured on arrival


def test_receiver_stamps_frames_with_capture_times():
    receiver = InputReceiver(parse_joints)
    receiver.handle(encode_joints({"j": 0.0}, timestamp_ns=HEADSET_AHEAD_NS + 1000 * MS), 1002 * MS)
    receiver.handle(encode_joints({"j": 0.1}, timestamp_ns=HEADSET_AHEAD_NS + 1010 * MS), 1030 * MS)  # 20 ms late
    assert receiver.latest().capture_ns == 1012 * MS and receiver.latest().received_ns == 1030 * MS
    receiver.handle(encode_joints({"j": 0.2}, timestamp_ns=5), 1040 * MS, live_stamps=False)  # a replayed file
    assert receiver.latest().capture_ns == 1040 * MS
    receiver.handle(encode_joints({"j": 0.3}), 1050 * MS)  # a sender without timestamps
    assert receiver.latest().capture_ns == 1050 * MS
    receiver.handle(b'{"timestamp_ns": "soon", "positions": {"j": 0}}', 1060 * MS)
    assert receiver.parse_failures == 1


def test_a_stamp_far_ahead_is_refused_until_it_proves_a_clock_step():
    capture, stamps, arrival = stream(seconds=6)
    stamps[100] += 10**15  # one packet stamped eleven days ahead
    stamps[270:] += 5_000_000_000  # the headset's clock steps forward 5 s at 3 s
    clock = SenderClock()
    estimated = [clock.capture_ns(s, a) for s, a in zip(stamps, arrival)]
    assert estimated[100] is None  # refused: it would have shifted every capture time of the next 5 s
    assert np.abs((np.array(estimated[101:270]) - capture[101:270]) / 1e6).max() < 3  # undisturbed
    assert estimated[270] is None  # the step is not believed at once ...
    assert np.abs((np.array(estimated[300:]) - capture[300:]) / 1e6).max() < 10  # ... but 0.2 s later


@pytest.mark.parametrize("stamp", [1e30, 2**63, -1, float("nan")])
def test_a_timestamp_beyond_int64_is_a_bad_packet_not_a_crash(stamp):
    receiver = InputReceiver(parse_joints)
    receiver.handle(encode_joints({"j": 0.0}, timestamp_ns=HEADSET_AHEAD_NS), 1000 * MS)
    receiver.handle(b'{"timestamp_ns": %s, "positions": {"j": 0.5}}' % str(stamp).encode(), 1010 * MS)
    assert receiver.parse_failures == 1 and receiver.latest().joint_positions == {"j": 0.0}


def test_the_receiver_drops_and_counts_a_packet_stamped_far_ahead():
    receiver = InputReceiver(parse_joints)
    receiver.handle(encode_joints({"j": 0.0}, timestamp_ns=HEADSET_AHEAD_NS + 1000 * MS), 1002 * MS)
    receiver.handle(encode_joints({"j": 0.9}, timestamp_ns=HEADSET_AHEAD_NS + 10**15), 1010 * MS)
    receiver.handle(encode_joints({"j": 0.1}, timestamp_ns=HEADSET_AHEAD_NS + 1020 * MS), 1030 * MS)
    assert receiver.implausible_stamps == 1 and receiver.packets == 2
    assert receiver.latest().capture_ns == 1022 * MS
