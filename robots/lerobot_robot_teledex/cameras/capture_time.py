"""When a camera's latest frame was captured, on the machine's monotonic clock (clock.now_ns), where it says."""

from teledex_lerobot.capabilities import CapturedCamera
from teledex_lerobot.clock import from_perf_counter


def camera_capture_ns(camera) -> int | None:
    """`capture_ns` (CapturedCamera: TeleDex cameras) or the capture time LeRobot's camera threads keep in
    `latest_timestamp` (time.perf_counter seconds); None: the camera does not say."""
    if isinstance(camera, CapturedCamera):
        return camera.capture_ns
    stamp = getattr(camera, "latest_timestamp", None)
    return None if stamp is None else from_perf_counter(stamp)
