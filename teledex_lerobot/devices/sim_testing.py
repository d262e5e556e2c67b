"""Running real drivers against the simulators in one process (tests, benchmarks): unique virtual channels,
a bus sniffer, waiting for a condition."""

import time
import uuid

import can

from .real_config import CanPortConfig, RealHardwareConfig


def unique_channel(prefix: str) -> str:
    """python-can virtual channels are process-global: every test gets its own."""
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


# Supervision for runs that are not about fault detection: a simulator and the SDK share the interpreter (and, on
# CI, the CPU) with everything else, and a few-hundred-ms scheduling stall must not latch a false feedback fault.
RELAXED_FEEDBACK_TIMEOUT_MS = 1000.0


def virtual_config(arm_channel: str = "unused-arm", hand_channel: str = "unused-hand", strict: bool = False,
                   **overrides) -> RealHardwareConfig:
    """Both ports on the virtual interface. strict=True keeps the production feedback timeout (fault tests)."""
    if not strict:
        overrides.setdefault("feedback_timeout_ms", RELAXED_FEEDBACK_TIMEOUT_MS)
    return RealHardwareConfig(arm=CanPortConfig("virtual", arm_channel), hand=CanPortConfig("virtual", hand_channel),
                              connect_timeout_s=2.0, **overrides)


def wait_until(predicate, timeout_s: float = 2.0, period_s: float = 0.002) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(period_s)
    return predicate()


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
