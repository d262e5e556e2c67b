"""A simulated camera: renders the rig it belongs to from a fixed viewpoint, in its own capture thread."""

import threading
from collections.abc import Callable
from typing import Any

import numpy as np
from lerobot.cameras import Camera
from lerobot.utils.errors import DeviceAlreadyConnectedError, DeviceNotConnectedError

from teledex_lerobot.clock import now_ns

from .config_render_camera import TeledexRenderCameraConfig
from .rig_renderer import RigRenderer

DrawnScene = list[tuple[str, np.ndarray]]


class TeledexRenderCamera(Camera):
    """Needs a scene: the TeleDex robot that owns it calls attach_scene() before connect()."""

    def __init__(self, config: TeledexRenderCameraConfig):
        super().__init__(config)
        self.config = config
        self._scene: Callable[[], DrawnScene] | None = None
        self.renderer: RigRenderer | None = None
        self._lock = threading.Lock()
        self._new_frame = threading.Condition(self._lock)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._frame: np.ndarray | None = None
        # cameras that record depth: the depth map of _frame's instant, and of the frame last returned
        self._depth: np.ndarray | None = None
        self._returned_depth: np.ndarray | None = None
        self._frame_capture_ns: int | None = None
        self._frame_published_ns: int | None = None
        self._frame_counter = 0
        self._consumed_counter = 0

    def __str__(self) -> str:
        return f"TeledexRenderCamera({self.config.view})"

    def attach_scene(self, scene: Callable[[], DrawnScene], centre_m: np.ndarray, distance_m: float) -> None:
        self._scene = scene
        self.renderer = RigRenderer(self.width, self.height, self.config.view, centre_m, distance_m)

    @property
    def is_connected(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    @staticmethod
    def find_cameras() -> list[dict[str, Any]]:
        return []  # simulated: nothing to discover

    def connect(self, warmup: bool = True) -> None:
        if self.is_connected:
            raise DeviceAlreadyConnectedError(f"{self} is already connected.")
        if self._scene is None:
            raise RuntimeError(
                f"{self} has no scene to draw. The teledex_render camera only works inside a TeleDex robot's "
                "cameras (e.g. --robot.type=teledex --robot.cameras='{top: {type: teledex_render}}')."
            )
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name=f"render-camera-{self.config.view}", daemon=True)
        self._thread.start()
        if warmup:
            self.async_read(timeout_ms=2000)

    def disconnect(self) -> None:
        if not self.is_connected:
            raise DeviceNotConnectedError(f"{self} is not connected.")
        self._stop.set()
        self._thread.join(timeout=2.0)
        self._thread = None

    @property
    def published_ns(self) -> int | None:
        """When the latest frame became available to readers (capture plus rendering and latency)."""
        with self._lock:
            return self._frame_published_ns

    @property
    def capture_ns(self) -> int | None:
        """When the scene of the latest frame was sampled (clock.now_ns)."""
        with self._lock:
            return self._frame_capture_ns

    def read(self) -> np.ndarray:
        return self.async_read(timeout_ms=2000)

    def async_read(self, timeout_ms: float = 200) -> np.ndarray:
        if not self.is_connected:
            raise DeviceNotConnectedError(f"{self} is not connected.")
        with self._new_frame:
            if not self._new_frame.wait_for(lambda: self._frame_counter > self._consumed_counter, timeout_ms / 1e3):
                raise TimeoutError(f"{self}: no new frame within {timeout_ms} ms")
            self._consumed_counter = self._frame_counter
            self._returned_depth = self._depth
            return self._frame

    def read_latest(self, max_age_ms: int = 500) -> np.ndarray:
        if not self.is_connected:
            raise DeviceNotConnectedError(f"{self} is not connected.")
        with self._lock:
            frame, capture_ns, self._returned_depth = self._frame, self._frame_capture_ns, self._depth
        if frame is None:
            raise RuntimeError(f"{self} has not captured any frames yet.")
        age_ms = (now_ns() - capture_ns) / 1e6
        if age_ms > max_age_ms:
            raise TimeoutError(f"{self} latest frame is too old: {age_ms:.1f} ms (max allowed: {max_age_ms} ms).")
        return frame

    def _capture(self) -> tuple[np.ndarray, np.ndarray | None]:
        """One instant: the colour image, and its depth map where the camera records depth."""
        return self.renderer.render(self._scene()), None

    def _run(self) -> None:
        period_s = 1.0 / self.fps
        latency_s = self.config.latency_ms / 1e3
        next_tick = now_ns()
        while not self._stop.is_set():
            capture_ns = now_ns()
            image, depth = self._capture()
            if latency_s and self._stop.wait(latency_s):
                break
            with self._new_frame:
                self._frame, self._depth = image, depth
                self._frame_capture_ns, self._frame_published_ns = capture_ns, now_ns()
                self._frame_counter += 1
                self._new_frame.notify_all()
            next_tick += int(period_s * 1e9)
            delay_s = (next_tick - now_ns()) / 1e9
            if delay_s > 0:
                self._stop.wait(delay_s)
            else:
                next_tick = now_ns()
