"""InputReceiver: turns raw packets from any source into the newest OperatorFrame, counting what it rejects.

Sources (transports, file replay) call `handle(data)` from their own thread the moment a packet arrives; the
control loop reads `latest()` or blocks in `wait_newer()` (input-paced control). `on_frame`, if given, sees every
accepted frame in the source's thread (button presses shorter than a control tick are not lost). A bad packet (not
JSON, truncated, wrong schema) is counted in `parse_failures` and otherwise ignored: the previous frame stays the
newest. Bad fields inside a good packet (a trigger of 5.0, a button sent as a string) are counted in `bad_fields`;
the rest of that packet is used. A packet stamped implausibly far ahead of its sender's clock (clock_sync) is counted
in `implausible_stamps` and dropped.

Each frame's capture time is the sender's timestamp mapped onto our clock (clock_sync.SenderClock); a source calls
`new_sender()` when a different sender (a new connection) takes over, since its clock is another one, and
`sender_resumed()` when a sender it knows by identity reconnects. Every frame carries the number of its sender
(`sender_id`), so the control layer re-anchors to a new one.
"""

import logging
import threading
from collections.abc import Callable

from ..clock import now_ns
from .clock_sync import SenderClock
from .datagram_file import DatagramWriter
from .frame import OperatorFrame

logger = logging.getLogger(__name__)

Parser = Callable[[bytes, int], OperatorFrame]


class InputReceiver:
    def __init__(self, parse: Parser, recorder: DatagramWriter | None = None,
                 on_frame: Callable[[OperatorFrame], None] | None = None):
        self.parse = parse
        self.recorder = recorder
        self.on_frame = on_frame
        self.sender_clock = SenderClock()
        self.packets = 0  # valid packets
        self.parse_failures = 0
        self.bad_fields = 0
        self.implausible_stamps = 0  # packets whose sender stamp was far ahead of the sender's clock
        self.sender_id = 0  # counts new_sender() calls
        self._latest: OperatorFrame | None = None
        self._sequence = 0
        self._changed = threading.Condition()

    def new_sender(self, since_ns: int | None = None) -> None:
        """Another sender (a new connection, made at `since_ns`) takes over from here."""
        self.sender_clock.reset(now_ns() if since_ns is None else since_ns)
        self.sender_id += 1

    def sender_resumed(self, since_ns: int) -> None:
        """The same sender reconnected at `since_ns` (its source knows it by identity): the clock estimate restarts,
        bounded by the last offset, so states it queued during the drop keep their capture times (clock_sync); it
        stays the same sender (`sender_id`), in the same tracking space."""
        self.sender_clock.reset(since_ns)

    def parses(self, data: bytes) -> bool:
        """Whether the parser accepts the packet (nothing is counted or kept): a sender of garbage is no sender."""
        try:
            self.parse(data, 0)
        except Exception:  # noqa: BLE001 - whatever the parser raises, it is not a packet
            return False
        return True

    def handle(self, data: bytes, received_ns: int | None = None, live_stamps: bool = True) -> None:
        """One packet. `live_stamps=False`: its timestamps are not a live clock (a replayed file), so the capture
        time is the arrival time."""
        received_ns = now_ns() if received_ns is None else received_ns
        if self.recorder is not None:
            self.recorder.write(data, received_ns)
        try:
            frame = self.parse(data, received_ns)
        except Exception as error:  # noqa: BLE001 - a malformed packet of any kind must never stop the input
            self.parse_failures += 1
            if self.parse_failures == 1 or self.parse_failures % 1000 == 0:
                logger.warning("Rejected input packet (%d so far): %s: %s", self.parse_failures,
                               type(error).__name__, error)
            return
        frame.sender_id = self.sender_id
        if live_stamps and frame.sender_time_ns is not None:
            capture_ns = self.sender_clock.capture_ns(frame.sender_time_ns, received_ns)
            if capture_ns is None:  # stamped ahead of the sender's clock as estimated: not a reading
                self.implausible_stamps += 1
                if self.implausible_stamps == 1 or self.implausible_stamps % 1000 == 0:
                    logger.warning("Dropped input packets stamped implausibly far ahead of the sender's clock (%d so "
                                   "far; sender stamp %d ns)", self.implausible_stamps, frame.sender_time_ns)
                return
            frame.capture_ns = capture_ns
        if frame.bad_fields:
            self.bad_fields += len(frame.bad_fields)
            if self.bad_fields == len(frame.bad_fields) or self.bad_fields % 1000 < len(frame.bad_fields):
                logger.warning("Dropped bad input fields (%d so far): %s", self.bad_fields, "; ".join(frame.bad_fields))
        self.accept(frame)

    def accept(self, frame: OperatorFrame) -> None:
        """A frame from a source that reads its device in this process (no packet to parse)."""
        if self.on_frame is not None:
            self.on_frame(frame)
        with self._changed:
            self._latest = frame
            self.packets += 1
            self._sequence += 1
            self._changed.notify_all()

    def latest(self) -> OperatorFrame | None:
        return self._latest

    @property
    def sequence(self) -> int:
        """How many frames have been accepted (a new frame increments it)."""
        return self._sequence

    def wait_newer(self, sequence: int, timeout_s: float) -> bool:
        """Block until a frame newer than `sequence` arrives; False on timeout."""
        with self._changed:
            return self._changed.wait_for(lambda: self._sequence > sequence, timeout_s)
