"""Faults a real joint device reports (the conversion of its feedback timestamps to our clock is the CAN layer's:
can.liveness.WallToMonotonic).

A fault is latched: once a device reports one, it stops forwarding new targets (the hardware keeps its last safe
target) until the operator calls clear_fault(). A glitch therefore never turns into a silent resume mid-motion.
"""

from dataclasses import dataclass

from ..clock import now_ns
from ..errors import DeviceError

# What went wrong, as short stable names a recorder or UI can switch on.
FEEDBACK_TIMEOUT = "feedback_timeout"  # no fresh measurement: device silent, cable out, bus down, hand not replying
JOINT_ERROR = "joint_error"  # the device flags an error (joint error bit, e-stop, motor fault, driver disabled)
COMMAND_OUT_OF_RANGE = "command_out_of_range"  # a target outside the model's limits (or non-finite) reached the driver
BUS_ERROR = "bus_error"  # the CAN interface itself failed (send errors, interface gone)
CAMERA_LOST = "camera_lost"  # a camera's read failed: unplugged, its driver or renderer died
CAMERA_STALLED = "camera_stalled"  # a camera delivers no new frame: its newest is older than the stall limit


class DeviceUnavailable(DeviceError):
    """A device that cannot be reached at connect (nothing answering, a different device answering; a CAN interface
    missing or down is can.port.PortUnavailable, also a DeviceError): the message is one line saying what was found
    and the fix, for commands to print without a traceback."""


@dataclass(frozen=True)
class DeviceFault:
    kind: str
    message: str  # what happened and what to check, for the operator
    detected_ns: int  # clock.now_ns() when the driver noticed
    # When the cause began, where the driver can tell (a silence: its last feedback frame); a recorder marks what it
    # recorded since then, before the fault was detected. None: at detected_ns.
    since_ns: int | None = None


def make_fault(kind: str, message: str, since_ns: int | None = None) -> DeviceFault:
    return DeviceFault(kind, message, now_ns(), since_ns)

