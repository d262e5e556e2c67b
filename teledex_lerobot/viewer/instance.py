"""The process's one live view: started by the robot given --robot.live_view.enabled=true; the teleoperators and
the recorder feed it while it runs (`active()`), and do nothing otherwise.

Rerun takes seconds to import, so the view's modules are imported when a view starts, never by the commands that
only look for one.
"""

import threading

from ..sync import SyncPacket
from .config import LiveViewConfig

_lock = threading.Lock()
_active = None  # the running LiveView


def start(config: LiveViewConfig):
    """Start the process's live view, or return the one already running."""
    global _active
    with _lock:
        if _active is None:
            from .live_view import LiveView

            _active = LiveView(config)
        return _active


def active():
    """The running LiveView, or None."""
    return _active


def stop() -> None:
    global _active
    with _lock:
        view, _active = _active, None
    if view is not None:
        view.close()


def log_sync(packet: SyncPacket) -> None:
    """The recorder's per-frame sync packet, for the sync panel (no-op without a live view)."""
    view = _active
    if view is not None:
        view.sync(packet)


def start_episode(index: int, duration_s: float = float("inf")) -> None:
    """The recorder began episode `index` (planned duration for the timer): it gets its own .rrd under rrd_dir."""
    view = _active
    if view is not None:
        view.start_episode(index, duration_s)


def end_episode(outcome: str) -> None:
    """The recorder ended the episode: "saved", "discarded", "re-record", ... (shown in the events)."""
    view = _active
    if view is not None:
        view.end_episode(outcome)
