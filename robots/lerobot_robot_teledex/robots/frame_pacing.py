"""Whether an observation waits for a camera's next frame, so a camera slower than the control loop never slows it.

Waiting for the next frame locks the control loop onto the camera's frame clock: every frame is fresh and one
observation describes one instant. That costs nothing while the camera is at least as fast as the loop (the loop's
own timer absorbs the wait). A camera slower than the loop would drag the loop down to the camera's rate, so then the
camera's newest frame is taken as it is, again if no new one came: it keeps its own capture time, and the sync check
judges its age like any other source's. The loop's period is learned from the intervals between observations that
did not wait. A camera is as slow as it is, not as its fps says: a rendered camera on a loaded machine (or a USB
camera starved of bandwidth) delivers fewer frames than asked, and the intervals between the capture times of the
frames the observations took say so.
"""

from collections import deque
from statistics import median

# Observation intervals the loop's period is estimated from, and frame intervals each camera's (the median, so one
# stall does not move it).
LEARNED_INTERVALS = 9


class FramePacing:
    def __init__(self):
        self._intervals_ns: deque[int] = deque(maxlen=LEARNED_INTERVALS)
        self._last_start_ns: int | None = None
        self._waited = False  # whether the current observation waited for any camera
        self._last_capture_ns: dict[str, int] = {}  # per camera, the capture time of the frame last taken
        self._frame_intervals_ns: dict[str, deque[int]] = {}

    def observation_started(self, now_ns: int) -> None:
        if self._last_start_ns is not None and not self._waited:
            self._intervals_ns.append(now_ns - self._last_start_ns)
        self._last_start_ns = now_ns
        self._waited = False

    @property
    def loop_period_ns(self) -> float | None:
        return median(self._intervals_ns) if len(self._intervals_ns) >= 3 else None

    def frame_taken(self, camera: str, capture_ns: int) -> None:
        """The capture time of the frame an observation took from `camera`: a new frame's interval teaches the rate
        the camera delivers."""
        last = self._last_capture_ns.get(camera)
        if last is not None and capture_ns > last:
            self._frame_intervals_ns.setdefault(camera, deque(maxlen=LEARNED_INTERVALS)).append(capture_ns - last)
        self._last_capture_ns[camera] = capture_ns

    def _frame_interval_ns(self, camera: str, camera_fps: float) -> float:
        """The camera's frame period: as measured once known, never shorter than its fps says."""
        measured = self._frame_intervals_ns.get(camera, ())
        return max(1e9 / camera_fps, median(measured) if len(measured) >= 3 else 0.0)

    def wait_for_next_frame(self, camera: str, camera_fps: float) -> bool:
        """Wait when the loop is known to be no faster than the camera (5 % slack for clock jitter)."""
        period = self.loop_period_ns
        waits = period is not None and self._frame_interval_ns(camera, camera_fps) <= 1.05 * period
        self._waited |= waits
        return waits
