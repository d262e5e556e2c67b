"""A sender's clock -> this machine's clock, from one-way timestamps alone.

A headset stamps each sample on its own clock (XRoboToolkit `timeStampNs`: Unix time on the headset; our WebXR page:
the browser's time origin plus the frame time). For every packet, arrival_ns - sender_ns = offset + delay, where
delay >= the smallest delay the link ever has. The smallest value of arrival - sender over a recent window is
therefore offset + minimum delay, and sender_ns + that value is the capture time on our clock, late by only the
link's minimum delay (well under a millisecond on a LAN; it cannot be measured from one-way stamps). Queueing,
Wi-Fi retries and bursts (several states in one TCP read) add to the delay only, so they no longer hide in the
timestamps. The window slides (clock drift of tens of ppm is followed); a step of the sender's clock (NTP, a new
session) restarts the estimate once it has lasted `step_confirm_s`. Until then a sample stamped more than `step_ns`
ahead of the estimate is implausible (a packet cannot arrive before it was sent): capture_ns() refuses it rather
than let one bad stamp shift every capture time of the window.

A new connection restarts the estimate (it may be another device, another clock). But a headset that reconnects
keeps its clock and may deliver samples it queued during the drop in one burst: an empty estimate would take the
first of them as the link's minimum delay and stamp them all as fresh (277-286 ms wrong after an XRoboToolkit
reconnect). So for `reconnect_bound_s` after a reset the last offset still bounds the new one, as long as the two
agree within `step_ns` (the same clock): queued samples keep their true capture times, and read as old.
"""

from collections import deque


class SenderClock:
    def __init__(self, window_s: float = 5.0, step_ns: int = 1_000_000_000, step_confirm_s: float = 0.2,
                 reconnect_bound_s: float = 0.5):
        self.window_ns = int(window_s * 1e9)
        self.step_ns = step_ns
        self.step_confirm_ns = int(step_confirm_s * 1e9)
        self.reconnect_bound_ns = int(reconnect_bound_s * 1e9)
        # (arrival_ns, lag_ns) with strictly increasing lag: its front is the window's minimum (a monotonic queue).
        self._lags: deque[tuple[int, int]] = deque()
        self._step_since_ns: int | None = None
        self._bound: tuple[int, int] | None = None  # (the last offset before a reconnect, until when it bounds)

    def reset(self, arrival_ns: int | None = None) -> None:
        """Forget the estimate (a new sender, e.g. a new connection made at `arrival_ns`; with it, the last offset
        bounds the new one for a while: see the module docstring)."""
        offset = self.offset_ns
        self._bound = None if offset is None or arrival_ns is None else (offset, arrival_ns + self.reconnect_bound_ns)
        self._lags.clear()
        self._step_since_ns = None

    @property
    def offset_ns(self) -> int | None:
        """This machine's clock minus the sender's, plus the link's minimum delay; None before the first packet."""
        return self._lags[0][1] if self._lags else None

    def capture_ns(self, sender_ns: int, arrival_ns: int) -> int | None:
        """The capture time on this machine's clock of a sample stamped `sender_ns` that arrived at `arrival_ns`;
        None for a stamp implausibly far ahead of the estimate (not yet confirmed as a step of the sender's clock)."""
        lag = arrival_ns - sender_ns
        ahead = bool(self._lags) and lag < self._lags[0][1] - self.step_ns
        if self._lags and (ahead or lag > self._lags[0][1] + self.step_ns):
            if self._step_since_ns is None:
                self._step_since_ns = arrival_ns
            elif arrival_ns - self._step_since_ns >= self.step_confirm_ns:
                self.reset()
                ahead = False
            if ahead:
                return None
        else:
            self._step_since_ns = None
        while self._lags and self._lags[-1][1] >= lag:
            self._lags.pop()
        self._lags.append((arrival_ns, lag))
        while self._lags[0][0] < arrival_ns - self.window_ns:
            self._lags.popleft()
        offset = self._lags[0][1]
        if self._bound is not None:
            bound, until_ns = self._bound
            if arrival_ns > until_ns:
                self._bound = None
            elif offset - bound <= self.step_ns:  # the same clock as before the reconnect
                offset = min(offset, bound)
        return sender_ns + offset
