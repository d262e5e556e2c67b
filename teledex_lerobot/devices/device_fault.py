"""Faults a real joint device reports, and the clock conversion its feedback timestamps need.

A fault is latched: once a device reports one, it stops forwarding new targets (the hardware keeps its last safe
target) until the operator calls clear_fault(). A glitch therefore never turns into a silent resume mid-motion.
"""

import time
from dataclasses import dataclass
from statistics import median

from ..clock import now_ns

# What went wrong, as short stable names a recorder or UI can switch on.
FEEDBACK_TIMEOUT = "feedback_timeout"  # no fresh measurement: device silent, cable out, bus down, hand not replying
JOINT_ERROR = "joint_error"  # the device flags an error (joint error bit, e-stop, motor fault, driver disabled)
COMMAND_OUT_OF_RANGE = "command_out_of_range"  # a target outside the model's limits (or non-finite) reached the driver
BUS_ERROR = "bus_error"  # the CAN interface itself failed (send errors, interface gone)


@dataclass(frozen=True)
class DeviceFault:
    kind: str
    message: str  # what happened and what to check, for the operator
    detected_ns: int  # clock.now_ns() when the driver noticed


def make_fault(kind: str, message: str) -> DeviceFault:
    return DeviceFault(kind, message, now_ns())


class WallToMonotonic:
    """Converts wall-clock timestamps (python-can's Message.timestamp, vendor SDK receive times) to clock.now_ns().

    python-can stamps frames with time.time() on the virtual interface (the teledex loopback bus stamps them when its
    broker relays them) and with the kernel's CLOCK_REALTIME receive time on socketcan, while every capture time in
    this project is on the monotonic clock.
    The offset between the two clocks is measured when the device connects (median of a few paired reads, so a
    preemption between the two reads does not bias it). A wall-clock step (NTP) after connect shifts converted
    stamps by the step; reconnecting re-measures.
    """

    def __init__(self, samples: int = 9):
        self.offset_ns = median(time.time_ns() - time.monotonic_ns() for _ in range(samples))

    def to_monotonic_ns(self, wall_s: float) -> int:
        return int(round(wall_s * 1e9)) - self.offset_ns
