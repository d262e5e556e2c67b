"""Running real drivers against the wire-protocol simulators (tests, and benchmarks that put tests/ on sys.path):
unique virtual channels, a real backend config on one interface, a bus sniffer, waiting for a condition, and
teledex-sim as a separate process."""

import subprocess
import sys
import time
import uuid

import can

from teledex_lerobot.can.port import CanPortConfig
from teledex_lerobot.devices.registry import RealHardwareConfig


def unique_channel(prefix: str) -> str:
    """python-can virtual channels are process-global: every test gets its own."""
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


# Supervision for runs that are not about fault detection: a simulator and the SDK share the interpreter (and, on
# CI, the CPU) with everything else, and a few-hundred-ms scheduling stall must not latch a false feedback fault.
RELAXED_FEEDBACK_TIMEOUT_MS = 1000.0


def bus_config(arm_channel: str = "unused-arm", hand_channel: str = "unused-hand", strict: bool = False,
               interface: str = "virtual", **overrides) -> RealHardwareConfig:
    """Both ports on one python-can interface (virtual: this process; teledex: teledex-sim's loopback bus).
    strict=True keeps the production feedback timeout (fault tests). overrides: RealHardwareConfig fields, vendor
    sections included (agilex=PiperConfig(speed_percent=100))."""
    if not strict:
        overrides.setdefault("feedback_timeout_ms", RELAXED_FEEDBACK_TIMEOUT_MS)
    overrides.setdefault("connect_timeout_s", 2.0)
    return RealHardwareConfig(arm=CanPortConfig(interface, arm_channel), hand=CanPortConfig(interface, hand_channel),
                              **overrides)


def wait_until(predicate, timeout_s: float = 2.0, period_s: float = 0.002) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(period_s)
    return predicate()


def piper_firmware_reads(sdk, version: str, timeout_s: float = 5.0) -> bool:
    """Whether piper_sdk reads `version` from the arm, asking again while it has not: the SDK clears its firmware
    buffer just after sending the query, so on a busy machine the answer can arrive first and be wiped (the SDK's
    race, not the simulator's); an application would ask again."""
    def read() -> bool:
        if sdk.GetPiperFirmwareVersion() == version:
            return True
        sdk.SearchPiperFirmwareVersion()
        return False
    return wait_until(read, timeout_s, period_s=0.2)


def rearm_until_healthy(device, timeout_s: float = 1.0) -> bool:
    """Clear faults until none is re-detected. On a loaded host a simulator sharing the interpreter (or the CPU) with
    the SDK can miss its feedback period long enough for a false feedback timeout before a fault is injected; fault
    tests start from a healthy device and measure detection from the injection only."""
    return wait_until(lambda: (device.clear_fault(), device.fault())[1] is None, timeout_s)


def wait_for_fault(device, matches, timeout_s: float = 1.0) -> bool:
    """Wait for a fault that `matches`, re-arming past any other (a false silence, see rearm_until_healthy): a cause
    still present is re-detected at once."""
    def found() -> bool:
        fault = device.fault()
        if fault is not None and not matches(fault):
            device.clear_fault()
            return False
        return fault is not None
    return wait_until(found, timeout_s)


class BusListener:
    """Records every frame on a virtual channel (what a CAN sniffer would see)."""

    def __init__(self, channel: str):
        self.frames: list[can.Message] = []  # before the notifier starts delivering
        self.bus = can.Bus(channel=channel, interface="virtual")
        self.notifier = can.Notifier(self.bus, [self._store], timeout=0.02)

    def _store(self, message: can.Message) -> None:
        self.frames.append(message)

    def with_id(self, *ids: int) -> list[can.Message]:
        return [m for m in list(self.frames) if m.arbitration_id in ids]

    def close(self) -> None:
        self.notifier.stop()
        self.bus.shutdown()


class TeledexSimProcess:
    """teledex-sim in its own process (arguments as on its command line), on the loopback bus of $TELEDEX_CAN_BROKER
    unless told otherwise; usable once started."""

    def __init__(self, *args: str, env: dict | None = None, ready_timeout_s: float = 60.0):
        self.process = subprocess.Popen([sys.executable, "-m", "teledex_lerobot.cli.sim", *args],
                                        stdout=subprocess.PIPE, text=True, env=env)
        self.lines: list[str] = []
        deadline = time.monotonic() + ready_timeout_s
        while not any("device(s) on" in line for line in self.lines):
            line = self.process.stdout.readline()
            if not line or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"teledex-sim did not start: {''.join(self.lines)}")
            self.lines.append(line)

    def kill(self) -> None:
        """SIGKILL: every cable pulled at once, nothing cleaned up."""
        self.process.kill()
        self.process.wait(timeout=10)

    def stop(self) -> str:
        """SIGTERM, then what it printed on the way out."""
        if self.process.poll() is None:
            self.process.terminate()
        output, _ = self.process.communicate(timeout=10)
        return output

    def __enter__(self) -> "TeledexSimProcess":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
