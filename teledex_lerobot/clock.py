"""The one clock every capture timestamp in the system is taken on."""

import time


def now_ns() -> int:
    """Monotonic time in nanoseconds; unaffected by wall-clock changes, shared by every thread in the process."""
    return time.monotonic_ns()
