"""Is the device silent, or is our reader behind? Judged from the bus's own receive timestamps.

A driver's feedback can look old for two reasons: the device stopped sending (cable out, device hung, bus down), or
the thread reading the bus has not run for a while (a loaded host: the frames wait unread in the socket). Only the
first is the device's fault. BusLiveness wraps the recv() and send() of the bus the reading thread uses (ours, or the
one a vendor SDK opened) and sees every frame as the reader takes it, with the time the bus received it: the kernel's
receive time on socketcan, the sender's time on the teledex loopback bus. So:
- a device is silent when the newest frame the reader took from it is older than the timeout while the reader waits
  on a bus holding nothing unread, for confirm_ms on end (a reader that took a frame from the socket and is waiting
  for the interpreter shows nowhere on a socketcan bus: the confirmation gives it time to run; the teledex bus says
  so itself);
- our reader is starved when its newest frame is old but frames wait unread, or it is busy elsewhere: logged by the
  caller, never a fault.
A silence is judged only while it lasts: gaps between the frames a reader took after falling behind prove nothing,
because the bus drops the frames that overflow a reader's receive queue (the socket's buffer, a CAN controller's
FIFO), so a starved reader sees gaps the device never left.
Devices that only answer requests (the hands, the A7's motors) are silent from the first read request left
unanswered, not from their last reply: a poll thread that did not run asked nothing, and nothing is owed. A request
counts from when bus.send() returned, so time our sender lost before the frame went out is never charged to the
device.
"""

import select
import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from statistics import median

import can

from ..clock import now_ns

OK, STARVED, SILENT = "ok", "starved", "silent"
CONFIRM_MS = 20.0  # two watchdog periods: a reader holding a frame it took gets the interpreter back within this


@dataclass(frozen=True)
class Liveness:
    state: str  # OK, STARVED (our reader is behind: log it) or SILENT (the device: a fault)
    age_ms: float  # how long the device has owed us a frame (SILENT), or how old our newest frame is (STARVED)
    source: Hashable | None = None  # which of the device's sources (e.g. a motor's CAN ID), when it has several


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
        self.offset_ns = int(median(time.time_ns() - time.monotonic_ns() for _ in range(samples)))

    def to_monotonic_ns(self, wall_s: float) -> int:
        return int(round(wall_s * 1e9)) - self.offset_ns


def frames_waiting(bus: can.BusABC) -> bool:
    """Whether frames wait unread on this bus: its own answer (the teledex bus), the virtual interface's queue, or
    any bus with a file descriptor."""
    pending = getattr(bus, "frames_pending", None)
    if callable(pending):
        return pending()
    queue = getattr(bus, "queue", None)
    if queue is not None and hasattr(queue, "qsize"):
        return queue.qsize() > 0
    try:
        descriptor = bus.fileno()
    except (NotImplementedError, OSError, ValueError):
        return False
    if descriptor is None or descriptor < 0:
        return False
    try:
        return bool(select.select([descriptor], [], [], 0)[0])
    except (OSError, ValueError):
        return False


class BusLiveness:
    def __init__(self, source_of: Callable[[can.Message], Hashable | None], polled: bool,
                 clock: WallToMonotonic, confirm_ms: float = CONFIRM_MS, now: Callable[[], int] = now_ns):
        """source_of: the source a received frame comes from (None: not the device's). For a polled device the
        same function names the source a sent read request asks (None: not a read request). now: the clock
        requests are stamped on (clock.now_ns)."""
        self._source_of = source_of
        self._now = now
        self.polled = polled
        self._clock = clock
        self._confirm_ns = int(confirm_ms * 1e6)
        self._lock = threading.Lock()
        self._bus: can.BusABC | None = None
        self._reader_waiting = False
        self._last_frame_ns: dict[Hashable, int] = {}
        self._unanswered_since_ns: dict[Hashable, int] = {}  # polled: send time of the oldest unanswered request
        # (source, what it owes since, when first judged silent): confirmed once the same debt is confirm_ms older
        self._suspect: tuple[Hashable, int, int] | None = None
        self.frames_seen = 0

    # --- what the bus tells us ---
    def attach(self, bus: can.BusABC) -> None:
        """Watch this bus's recv() and send() (its own methods, wrapped on this instance only)."""
        receive, send = bus.recv, bus.send

        def watched_recv(timeout: float | None = None) -> can.Message | None:
            self._reader_waiting = True
            try:
                message = receive(timeout)
            finally:
                self._reader_waiting = False
            if message is not None:
                self.received(message)
            return message

        def watched_send(message: can.Message, timeout: float | None = None) -> None:
            started_ns = self._now()
            send(message, timeout)
            if self.polled:
                self.sent(message, started_ns)

        # On this instance only, which the vendor SDK holding the bus calls: patched as attributes, not assigned as
        # methods (which type checkers rightly refuse for ordinary code).
        for name, wrapper in (("recv", watched_recv), ("send", watched_send)):
            setattr(bus, name, wrapper)
        self._bus = bus

    def received(self, message: can.Message) -> None:
        source = self._source_of(message)
        if source is None or message.is_error_frame or (self.polled and len(message.data) < 2):
            return  # not the device's (one-byte frames are read requests, e.g. another host's)
        stamp_ns = self._clock.to_monotonic_ns(message.timestamp)
        with self._lock:
            self.frames_seen += 1
            if self.polled:
                self._unanswered_since_ns.pop(source, None)
            self._last_frame_ns[source] = max(stamp_ns, self._last_frame_ns.get(source, stamp_ns))

    def sent(self, message: can.Message, started_ns: int) -> None:
        """A frame our sender put on the bus, from started_ns until now."""
        if len(message.data) != 1:
            return  # set commands; only one-byte read requests owe us a reply
        source = self._source_of(message)
        if source is None:
            return
        sent_ns = self._now()
        with self._lock:
            if self._last_frame_ns.get(source, -1) >= started_ns:
                return  # answered before our sender got to note it (it lost the processor after sending)
            self._unanswered_since_ns.setdefault(source, sent_ns)

    # --- the verdict ---
    def judge(self, at_ns: int, timeout_ms: float, confirm: bool = True) -> Liveness:
        """confirm=False: a debt older than the timeout on a bus the reader has drained is a silence at once (a
        re-arm asks whether the device is back now)."""
        timeout_ns = int(timeout_ms * 1e6)
        with self._lock:
            owed = self._unanswered_since_ns if self.polled else self._last_frame_ns
            if not owed:
                self._suspect = None
                return Liveness(OK, 0.0)
            source, since_ns = min(owed.items(), key=lambda item: item[1])
            age_ns = at_ns - since_ns
            if age_ns <= timeout_ns:
                self._suspect = None
                return Liveness(OK, age_ns / 1e6, source)
            if self._suspect is None or self._suspect[:2] != (source, since_ns):
                self._suspect = (source, since_ns, at_ns)
            if not self._reader_waiting or (self._bus is not None and frames_waiting(self._bus)):
                return Liveness(STARVED, age_ns / 1e6, source)  # the debt stays suspect until the reader is done
            if confirm and at_ns - self._suspect[2] < self._confirm_ns:
                return Liveness(OK, age_ns / 1e6, source)
            return Liveness(SILENT, age_ns / 1e6, source)


    def newest_frame_ns(self) -> int | None:
        with self._lock:
            return max(self._last_frame_ns.values(), default=None)
