"""Silence judged from the bus's receive timestamps (can/liveness.py), on an injected clock: a silent device
is latched once its debt is older than the timeout and our reader has drained the bus for confirm_ms; a reader of
ours that is behind never makes the device look silent, even when the frames it missed leave gaps; a polled device
owes a reply only for requests that were sent."""

import queue

import can
import pytest

from teledex_lerobot.can.liveness import OK, SILENT, STARVED, BusLiveness, WallToMonotonic

MS = 1_000_000
TIMEOUT_MS = 50.0
CONFIRM_MS = 20.0
DEVICE, OTHER = 0x2A5, 0x300


class FakeBus:
    """A bus whose frames arrive when the test says, with the receive stamps the test gives."""

    def __init__(self):
        self.queue: queue.Queue = queue.Queue()
        self.sent: list[can.Message] = []

    def recv(self, timeout=None):
        try:
            return self.queue.get_nowait()
        except queue.Empty:
            return None

    def send(self, message, timeout=None):
        self.sent.append(message)


class Clock:
    def __init__(self):
        self.ns = 1_000 * MS

    def __call__(self) -> int:
        return self.ns


def _identity_clock() -> WallToMonotonic:
    clock = WallToMonotonic()
    clock.offset_ns = 0  # receive stamps given in seconds on our own clock
    return clock


def _frame(at_ns: int, can_id: int = DEVICE, data: bytes = b"\x00" * 8) -> can.Message:
    return can.Message(timestamp=at_ns / 1e9, arbitration_id=can_id, data=data, is_extended_id=False)


def _watch(polled: bool, source_of=None):
    bus, clock = FakeBus(), Clock()
    liveness = BusLiveness(source_of or (lambda m: "" if m.arbitration_id == DEVICE else None), polled,
                           _identity_clock(), CONFIRM_MS, now=clock)
    liveness.attach(bus)
    return bus, clock, liveness


def _take_all(bus: FakeBus, liveness: BusLiveness) -> None:
    """The reader takes every frame waiting (each through the watched recv), then waits on the bus again."""
    while bus.recv() is not None:
        pass
    _waiting(liveness)


def _waiting(liveness: BusLiveness, waiting: bool = True) -> None:
    liveness._reader_waiting = waiting  # the reader blocked in recv() (True) or busy elsewhere (False)


def test_a_streaming_device_is_silent_after_the_timeout_plus_confirmation():
    bus, clock, liveness = _watch(polled=False)
    for tick in range(10):  # 200 Hz feedback
        bus.queue.put(_frame(clock.ns + tick * 5 * MS))
    _take_all(bus, liveness)
    last_ns = clock.ns + 45 * MS
    _waiting(liveness)
    verdicts = {}
    for after_ms in (10, 50, 51, 60, 70, 71, 80):
        clock.ns = last_ns + after_ms * MS
        verdicts[after_ms] = liveness.judge(clock.ns, TIMEOUT_MS).state
    # older than the timeout from 51 ms on; confirmed 20 ms after it was first seen so
    assert verdicts == {10: OK, 50: OK, 51: OK, 60: OK, 70: OK, 71: SILENT, 80: SILENT}


def test_a_reader_that_is_behind_never_makes_the_device_silent():
    bus, clock, liveness = _watch(polled=False)
    bus.queue.put(_frame(clock.ns))
    _take_all(bus, liveness)
    start_ns = clock.ns
    for tick in range(1, 200):  # 1 s of feedback the reader does not get to take: frames wait unread
        bus.queue.put(_frame(start_ns + tick * 5 * MS))
    for after_ms in range(60, 1000, 10):
        clock.ns = start_ns + after_ms * MS
        assert liveness.judge(clock.ns, TIMEOUT_MS).state == STARVED
    while bus.recv() is not None:  # it takes them, and is still busy with the last one (not back in recv())
        pass
    clock.ns = start_ns + 1100 * MS  # the device's last frame: 105 ms ago; the reader cannot tell yet
    assert liveness.judge(clock.ns, TIMEOUT_MS).state == STARVED
    _waiting(liveness)  # back in recv(), with nothing more: now the device is silent, confirmed 20 ms later
    assert [liveness.judge(clock.ns + after_ms * MS, TIMEOUT_MS).state for after_ms in (0, 21)] == [OK, SILENT]


def test_gaps_left_by_frames_a_starved_reader_missed_are_not_silences():
    """A reader that fell behind loses the frames that overflow its receive queue: the next frame it takes comes
    300 ms after the last one it had, though the device never stopped."""
    bus, clock, liveness = _watch(polled=False)
    bus.queue.put(_frame(clock.ns))
    _take_all(bus, liveness)
    bus.queue.put(_frame(clock.ns + 300 * MS))
    clock.ns += 301 * MS
    _take_all(bus, liveness)
    assert [liveness.judge(clock.ns + after_ms * MS, TIMEOUT_MS).state for after_ms in (0, 25)] == [OK, OK]


def test_a_polled_device_owes_replies_only_to_requests_sent():
    bus, clock, liveness = _watch(polled=True)
    _waiting(liveness)
    bus.queue.put(_frame(clock.ns, data=b"\x01" + bytes(6)))
    _take_all(bus, liveness)
    clock.ns += 500 * MS  # our poll thread did not run: nothing asked, nothing owed
    assert liveness.judge(clock.ns, TIMEOUT_MS).state == OK
    request_ns = clock.ns
    bus.send(_frame(0, data=b"\x01"))  # a read request
    bus.send(_frame(0, data=b"\x01" + bytes(6)))  # a set command owes nothing
    for after_ms, expected in ((50, OK), (51, OK), (71, SILENT)):
        clock.ns = request_ns + after_ms * MS
        assert liveness.judge(clock.ns, TIMEOUT_MS).state == expected, after_ms


@pytest.mark.parametrize("reply_after_ms, expected", [(30, OK), (None, SILENT)])
def test_a_request_is_owed_until_its_reply_arrives(reply_after_ms, expected):
    bus, clock, liveness = _watch(polled=True)
    _waiting(liveness)
    request_ns = clock.ns
    bus.send(_frame(0, data=b"\x01"))
    if reply_after_ms is not None:
        bus.queue.put(_frame(request_ns + reply_after_ms * MS, data=b"\x01" + bytes(6)))
        clock.ns = request_ns + reply_after_ms * MS
        _take_all(bus, liveness)
    verdicts = [liveness.judge(request_ns + after_ms * MS, TIMEOUT_MS).state for after_ms in (60, 81)]
    assert verdicts[-1] == expected


def test_one_silent_source_among_many_is_named_even_with_frames_arriving():
    motors = {51 + joint for joint in range(7)}
    bus, clock, liveness = _watch(polled=True, source_of=lambda m: f"motor {m.arbitration_id}"
                                  if m.arbitration_id in motors else None)
    _waiting(liveness)
    start_ns = clock.ns
    for step in range(20):  # 100 Hz polling; motor 54 never answers
        clock.ns = start_ns + step * 10 * MS
        for motor in sorted(motors):
            bus.send(_frame(0, motor, b"\x06"))
            if motor != 54:
                bus.queue.put(_frame(clock.ns + MS, motor, b"\x06" + bytes(4)))
        if step % 2:  # every other check finds replies waiting, the next one after the reader took them
            _take_all(bus, liveness)
        verdict = liveness.judge(clock.ns + 2 * MS, TIMEOUT_MS)
    assert (verdict.state, verdict.source) == (SILENT, "motor 54")


def test_a_rearm_asks_whether_the_device_is_back_now():
    bus, clock, liveness = _watch(polled=False)
    bus.queue.put(_frame(clock.ns))
    _take_all(bus, liveness)
    clock.ns += 60 * MS
    # no confirmation at a re-arm: a device still silent keeps its fault at once
    assert liveness.judge(clock.ns, TIMEOUT_MS, confirm=False).state == SILENT
    bus.queue.put(_frame(clock.ns + MS))  # back
    clock.ns += 2 * MS
    _take_all(bus, liveness)
    assert liveness.judge(clock.ns, TIMEOUT_MS, confirm=False).state == OK
