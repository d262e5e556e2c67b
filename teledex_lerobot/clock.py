"""The clocks every capture timestamp is taken on.

People and hardware live on the machine's monotonic clock (`now_ns`, `MONOTONIC`). A simulated world driven by a
script or a policy can run on a `LockstepClock` instead: time stands still until the recorder advances the world by
one control period, so no tick is ever dropped, runs are deterministic, and the CPU sets the pace, not the wall.
Whoever reads a timestamp for a robot takes it from that robot's clock (capabilities.Clocked).
"""

import time
from typing import Protocol


def now_ns() -> int:
    """Monotonic time in nanoseconds; unaffected by wall-clock changes, shared by every thread in the process."""
    return time.monotonic_ns()


# Both are monotonic; on Linux they share one clock and the offset is ~0, elsewhere it is constant.
_PERF_COUNTER_TO_MONOTONIC_NS = time.monotonic_ns() - time.perf_counter_ns()


def from_perf_counter(seconds: float) -> int:
    """A time.perf_counter() reading (LeRobot's cameras stamp frames with it) on the monotonic clock, ns."""
    return int(seconds * 1e9) + _PERF_COUNTER_TO_MONOTONIC_NS


class Clock(Protocol):
    def now_ns(self) -> int: ...


class MonotonicClock:
    """The machine's monotonic clock (real time)."""

    lockstep = False

    def now_ns(self) -> int:
        return time.monotonic_ns()


MONOTONIC = MonotonicClock()


class LockstepClock:
    """Simulated time that moves only when advanced. It starts at the monotonic time of its creation, so its stamps
    sort with the machine's (logs, file times) and are never 0 (which callers may read as "no stamp")."""

    lockstep = True

    def __init__(self):
        self._ns = time.monotonic_ns()

    def now_ns(self) -> int:
        return self._ns

    def advance(self, duration_ns: int) -> None:
        if duration_ns < 0:
            raise ValueError(f"a clock cannot go back ({duration_ns} ns)")
        self._ns += duration_ns
