"""The live view: fed from the control thread without slowing it down.

The control thread only appends references (joint dicts, camera frames, the input frame, the sync packet) to a
bounded deque: no lock, no wake-up of another thread; when it is full the item is dropped and counted, never waited
for. The view's own thread (at a lower CPU priority) wakes on its own clock, takes everything waiting, and does the
kinematics, image encoding and Rerun logging. Of the items that describe a state (a rig's pose, the input) only the
newest of a batch is drawn (the older ones still count for the events and the status); every sync packet is drawn.
Whoever hands over a reference must not change the object afterwards: every caller here builds a new one each tick.
"""

import logging
import os
import threading
import time
from collections import deque
from datetime import datetime

from ..clock import now_ns
from ..rig import Rig
from ..sync import SyncPacket
from .config import LiveViewConfig
from .painter import Painter
from .rerun_output import RerunOutput
from .viewer_process import start_viewer

logger = logging.getLogger(__name__)

QUEUE_SIZE = 256
# The view's thread takes what is waiting this many times per drawn frame (config.max_hz).
WAKES_PER_FRAME = 2
# Items of these kinds describe a state: when several wait in the queue only the newest is drawn.
LATEST_ONLY = ("state", "command", "operator")
# Items that split a batch: what came before one is never replaced by what came after it.
BARRIERS = ("rig", "episode_start", "episode_end")
VIEW_THREAD_NICENESS = 10  # the view yields the CPU to the control loop and the device threads


class LiveView:
    def __init__(self, config: LiveViewConfig, session_name: str | None = None):
        config.validate()
        self.config = config
        self.started_ns = now_ns()
        self.session_name = session_name or datetime.now().strftime("%Y%m%d_%H%M%S")
        self._items: deque = deque()
        self._closing = threading.Event()
        self.dropped = 0  # items the control thread could not hand over (queue full)
        self.coalesced = 0  # items replaced by a newer one of the same kind before they were drawn
        self.handled = 0  # items handed to the painter (which draws them at most max_hz)
        self.busy_s = 0.0  # CPU time of the view's thread
        self.error: BaseException | None = None
        url, self._viewer_process = start_viewer(config)
        self.output = RerunOutput(f"teledex_{self.session_name}", url)
        self.painter = Painter(config, self.output, self.started_ns, self.session_name)
        self._thread = threading.Thread(target=self._run, name="TeledexLiveView", daemon=True)
        self._thread.start()

    # ---- hooks, called from the control thread: one append each ------------------------------------------------

    def add_rig(self, name: str, rig: Rig, cameras: list[str]) -> None:
        """A rig to draw, under `name`, and the cameras it brings (called once, at connect)."""
        specs = {role: part.spec for role, part in rig.parts.items()}
        self._put("rig", (name, specs.get("arm"), specs.get("hand"), rig.hand_mount_spec, list(cameras)))

    def robot_state(self, name: str, measured: dict[str, float], images: dict, faults: dict[str, str]) -> None:
        """The rig's measured joints ("<role>_<joint>.pos"), camera frames by camera name, device faults by part."""
        self._put("state", (name, measured, images, faults))

    def robot_command(self, name: str, action: dict[str, float]) -> None:
        """The joint targets the rig was commanded ("<role>_<joint>.pos")."""
        self._put("command", (name, action))

    def operator(self, frame, state: str, stale: bool) -> None:
        """The newest operator frame (or None), the state machine's state, and whether the input is stale."""
        self._put("operator", (frame, state, stale))

    def sync(self, packet: SyncPacket) -> None:
        self._put("sync", (packet,))

    def start_episode(self, index: int, duration_s: float) -> None:
        self._put("episode_start", (index, duration_s))

    def end_episode(self, outcome: str) -> None:
        self._put("episode_end", (outcome,))

    def _put(self, kind: str, payload: tuple) -> None:
        # only the view's thread takes items out, so the deque can only be shorter than measured here
        if len(self._items) >= QUEUE_SIZE:
            self.dropped += 1
        else:
            self._items.append((kind, now_ns(), payload))

    # ---- the view's thread -------------------------------------------------------------------------------------

    def _run(self) -> None:
        try:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), VIEW_THREAD_NICENESS)
        except OSError:  # not permitted on some systems: the view still runs, at normal priority
            pass
        wake_s = 1.0 / (WAKES_PER_FRAME * self.config.max_hz)
        while True:
            closing = self._closing.wait(wake_s)
            batch = [self._items.popleft() for _ in range(len(self._items))]
            started = time.thread_time()
            try:
                self._draw(batch)
            except Exception as error:  # noqa: BLE001 - a view failure must never reach the control loop
                if self.error is None:
                    logger.exception("live view: drawing failed; the view stops, the control loop goes on")
                self.error = error
            self.busy_s += time.thread_time() - started
            if closing:
                return

    def _draw(self, batch: list) -> None:
        # the newest item of each kind before the next barrier: an episode's file gets its own last pose
        newest, segment = {}, 0
        for position, (kind, _, payload) in enumerate(batch):
            segment += kind in BARRIERS
            newest[(segment, _latest_key(kind, payload))] = position
        self.painter.dropped = self.dropped
        segment = 0
        for position, (kind, t_ns, payload) in enumerate(batch):
            if self.error is not None:
                return
            segment += kind in BARRIERS
            superseded = kind in LATEST_ONLY and newest[(segment, _latest_key(kind, payload))] != position
            self.coalesced += superseded
            self.handled += not superseded
            self.painter.handle(kind, t_ns, payload, draw=not superseded)
            # Release the interpreter after each item: a control thread waking up meanwhile takes it now, instead of
            # waiting for the interpreter's switch interval (5 ms) while this thread draws a whole batch.
            time.sleep(0)

    def close(self, timeout_s: float = 10.0) -> None:
        """Draw what is queued, close the files, stop the web viewer's server (a spawned window stays open)."""
        self._closing.set()
        self._thread.join(timeout_s)
        self.output.close()
        if self._viewer_process is not None and self.config.viewer == "web":
            self._viewer_process.terminate()
        logger.info("live view closed: %d updates handled, %d skipped as superseded, %d dropped (queue full); its "
                    "thread used %.1f s of CPU", self.handled, self.coalesced, self.dropped, self.busy_s)


def _latest_key(kind: str, payload: tuple):
    """Items with the same key describe the same thing: a rig's state or command (by rig name), the input."""
    return (kind, payload[0]) if kind in ("state", "command") else kind
