"""What teledex-doctor's device probes share: the report they fill, the socketcan checks, opening a bus, collecting
frames, and the fix for a device that does not answer (another device answering there: swapped channels).

Each vendor's probe lives in its folder (devices/<vendor>/probe.py) and is registered with its device models; whoever
runs it (teledex-doctor) passes every vendor's bus signatures in, for the swapped-channel fix.
"""

import time
from collections.abc import Iterable
from dataclasses import dataclass, field

import can

from ..can.identify import BusSignature, identify, swapped_channel_hint
from ..can.port import CanPortConfig

LISTEN_S = 0.3  # listening for a device that streams on its own
REPLY_TIMEOUT_S = 0.2  # waiting for the replies to read requests


@dataclass
class Report:
    device: str
    facts: list[str] = field(default_factory=list)
    problems: list[tuple[str, str]] = field(default_factory=list)  # (what is wrong, how to fix it)

    def problem(self, what: str, fix: str) -> None:
        self.problems.append((what, fix))

    def render(self) -> str:
        lines = [f"[{'OK' if not self.problems else 'PROBLEM'}] {self.device}"]
        lines += [f"    {fact}" for fact in self.facts]
        lines += [f"    ! {what}\n      fix: {fix}" for what, fix in self.problems]
        return "\n".join(lines)


def check_socketcan(port: CanPortConfig, report: Report) -> bool:
    """Interface present, up, at the expected bitrate (socketcan; other interfaces have no such state). False when
    the device cannot be probed at all."""
    problem = port.socketcan_problem()
    if problem is not None:
        report.problem(*problem)
    return problem is None or "bit/s" in problem[0]


def open_bus(port: CanPortConfig, report: Report) -> can.BusABC | None:
    try:
        return can.Bus(channel=port.channel, interface=port.interface)
    except Exception as error:
        fix = ("start `teledex-sim` with the simulated device on this channel" if port.interface == "teledex" else
               "check the interface name and that no other program holds the adapter (slcan/pcan)")
        report.problem(f"cannot open {port.interface}:{port.channel}: {error}", fix)
        return None


def silent_device_fix(port: CanPortConfig, own_kind: str, fix: str, signatures: Iterable[BusSignature]) -> str:
    """The fix for a device that does not answer: swap the channels when another known device (one of `signatures`,
    every vendor's as the doctor gives them; none: no such check) answers there."""
    signatures = tuple(signatures)
    heard = identify(port.interface, port.channel, signatures) if signatures else []
    hint = swapped_channel_hint(own_kind, port.interface, port.channel, heard)
    return f"{hint}Swap --arm-channel and --hand-channel." if hint else fix


def collect(bus: can.BusABC, seconds: float) -> list[can.Message]:
    frames, deadline = [], time.monotonic() + seconds
    while (remaining := deadline - time.monotonic()) > 0:
        message = bus.recv(timeout=remaining)
        if message is not None:
            frames.append(message)
    return frames
