"""What teledex-doctor's device probes share: the report they fill, the socketcan checks, opening a bus, collecting
frames, and the fix for a device that does not answer (another device answering there: swapped channels).

Each vendor's probe lives in its folder (devices/<vendor>/probe.py) and is registered with its device models.
"""

import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import can

from .can.identify import identify, swapped_channel_hint
from .can.port import CanPortConfig

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
    """Interface present, up, at the expected bitrate. Only for socketcan; other interfaces have no such state."""
    if port.interface != "socketcan":
        return True
    net = Path("/sys/class/net") / port.channel
    if not net.exists():
        report.problem(f"no CAN interface {port.channel!r}", "plug in the USB-CAN adapter; list interfaces with "
                       "`ip -br link show type can`; set the right --*-channel")
        return False
    if (net / "operstate").read_text().strip() not in ("up", "unknown"):
        report.problem(f"{port.channel} is down", f"sudo ip link set {port.channel} up type can bitrate {port.bitrate}")
        return False
    details = subprocess.run(["ip", "-details", "link", "show", port.channel], capture_output=True, text=True).stdout
    if f"bitrate {port.bitrate}" not in details:
        report.problem(f"{port.channel} is not at {port.bitrate} bit/s",
                       f"sudo ip link set {port.channel} down && sudo ip link set {port.channel} up type can "
                       f"bitrate {port.bitrate}")
    return True


def open_bus(port: CanPortConfig, report: Report) -> can.BusABC | None:
    try:
        return can.Bus(channel=port.channel, interface=port.interface)
    except Exception as error:
        fix = ("start `teledex-sim` with the simulated device on this channel" if port.interface == "teledex" else
               "check the interface name and that no other program holds the adapter (slcan/pcan)")
        report.problem(f"cannot open {port.interface}:{port.channel}: {error}", fix)
        return None


def silent_device_fix(port: CanPortConfig, own_kind: str, fix: str) -> str:
    """The fix for a device that does not answer: swap the channels when another known device answers there."""
    from .registry import bus_signatures  # the registry imports every vendor, whose probes import this module

    heard = identify(port.interface, port.channel, bus_signatures())
    hint = swapped_channel_hint(own_kind, port.interface, port.channel, heard)
    return f"{hint}Swap --arm-channel and --hand-channel." if hint else fix


def collect(bus: can.BusABC, seconds: float) -> list[can.Message]:
    frames, deadline = [], time.monotonic() + seconds
    while (remaining := deadline - time.monotonic()) > 0:
        message = bus.recv(timeout=remaining)
        if message is not None:
            frames.append(message)
    return frames
