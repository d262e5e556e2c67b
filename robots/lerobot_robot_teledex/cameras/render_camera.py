"""A simulated camera: renders the rig it belongs to from a fixed viewpoint, in its own capture thread.

Its first frame builds the renderer (a world camera's OpenGL context and shaders), which takes seconds on a loaded
machine: connect waits for that frame up to FIRST_FRAME_TIMEOUT_S, and a renderer that fails, at the start or later,
is reported by the next read in one line (DeviceError) naming the camera and what to do. Rendering yields to the
control loop (RENDER_NICENESS): on a loaded machine the camera drops frames, never the loop a tick. For tests and
drills, simulate_fault() makes it play a real camera's faults (stall, unplug, die).
"""

import os
import threading
from collections.abc import Callable
from typing import Any

import numpy as np
from lerobot.cameras import Camera
from lerobot.utils.errors import DeviceAlreadyConnectedError, DeviceNotConnectedError

from teledex_lerobot.clock import now_ns
from teledex_lerobot.errors import ConfigError, DeviceError
from teledex_lerobot.robot_body import WRIST_CAMERA_FOVY_DEG

from .config_render_camera import TeledexRenderCameraConfig
from .rig_renderer import RigRenderer

# The rig's segments (role, (m, 2, 3) in its base frame) per part, and the hand's base pose (None: no hand)
DrawnScene = tuple[list[tuple[str, np.ndarray]], np.ndarray | None]

# How long connect waits for the first frame (measured: 0.2-0.4 s quiet; beyond 2 s, 4 times in 15 starts, on a 2-core
# machine at load 4-14).
FIRST_FRAME_TIMEOUT_S = 60.0
# Niceness added to the capture thread, and so to the renderer's own threads (Mesa's llvmpipe starts them from it):
# any user may lower a thread's priority. A frame the camera drops is harmless (the loop takes the newest one,
# frame_pacing.py, and the sync check judges its age); a tick the loop drops is lost. Measured with world frames of
# 640x480 at 25 Hz and a busy process per core: loop 23.5-24.8 Hz, camera 10-14 fps; at the loop's priority 20.5-23
# Hz, camera 14-18 fps.
RENDER_NICENESS = 5
# Simulation only (tests and drills: simulate_fault): a real camera's faults, played by a simulated one.
SIMULATED_STALL = "stall"  # no new frame: reads return the last one, ever older
SIMULATED_UNPLUG = "unplug"  # gone: reads fail, and so does connect
SIMULATED_DEATH = "die"  # its capture fails with an error: reads fail, and so does connect
SIMULATED_FAULTS = (SIMULATED_STALL, SIMULATED_UNPLUG, SIMULATED_DEATH)


class TeledexRenderCamera(Camera):
    """Needs a scene: the TeleDex robot that owns it calls attach_scene() before connect()."""

    # What to do when the renderer fails (the one line says it after the error).
    render_fix = "check the camera's settings (--robot.cameras)"
    # The stick figure is drawn from one viewpoint; the MuJoCo world renders a stereo pair (teledex_world).
    renders_stereo = False

    def __init__(self, config: TeledexRenderCameraConfig):
        super().__init__(config)
        self.config = config
        if config.stereo_baseline_m:
            if not self.renders_stereo:
                raise ConfigError(f"{self}: stereo_baseline_m={config.stereo_baseline_m}: the stick-figure camera "
                                  "draws one view; render a stereo pair in the MuJoCo world (--robot.backend=mujoco, "
                                  "camera type teledex_world), or set stereo_baseline_m=0")
            self.width = 2 * config.width  # the frame: both eyes side by side
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
        self._failure: Exception | None = None  # what ended the capture thread
        self._simulated_fault: str | None = None  # simulate_fault(): tests and drills only

    def __str__(self) -> str:
        return f"TeledexRenderCamera({self.config.view})"

    def attach_scene(self, scene: Callable[[], DrawnScene], centre_m: np.ndarray, distance_m: float,
                     wrist_mount: np.ndarray | None = None) -> None:
        """What to draw, and from where: the view around centre_m, or on the hand at wrist_mount (the wrist view)."""
        self._scene = scene
        if wrist_mount is None:
            self.renderer = RigRenderer(self.width, self.height, self.config.view, centre_m, distance_m)
        else:
            self.renderer = RigRenderer(self.width, self.height, self.config.view, centre_m, distance_m,
                                        WRIST_CAMERA_FOVY_DEG, wrist_mount)

    @property
    def is_connected(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    @staticmethod
    def find_cameras() -> list[dict[str, Any]]:
        return []  # simulated: nothing to discover

    def connect(self, warmup: bool = True) -> None:
        if self.is_connected:
            raise DeviceAlreadyConnectedError(f"{self} is already connected.")
        self._check_present()
        self._check_attached()
        self._stop.clear()
        self._failure = None
        self._thread = threading.Thread(target=self._run, name=f"render-camera-{self.config.view}", daemon=True)
        self._thread.start()
        if warmup:
            try:
                self.async_read(timeout_ms=FIRST_FRAME_TIMEOUT_S * 1e3)
            except TimeoutError:
                self._stop.set()  # the capture thread ends after the render it is stuck in
                raise DeviceError(f"{self}: no first frame within {FIRST_FRAME_TIMEOUT_S:g} s: the machine is too busy "
                                  "to render it; free some CPU, or lower the camera's width, height or fps") from None

    def disconnect(self) -> None:
        thread = self._thread
        if thread is None or not thread.is_alive():
            raise DeviceNotConnectedError(f"{self} is not connected.")
        self._stop.set()
        thread.join(timeout=2.0)
        self._thread = None

    def simulate_fault(self, fault: str | None) -> None:
        """Simulation only (tests and drills): play one of a real camera's SIMULATED_FAULTS until called with None,
        which makes the camera healthy again (a gone one then connects again)."""
        if fault not in (None, *SIMULATED_FAULTS):
            raise ValueError(f"{self}: simulate_fault({fault!r}): one of {SIMULATED_FAULTS}, or None")
        self._simulated_fault = fault
        if fault in (SIMULATED_UNPLUG, SIMULATED_DEATH) and self.is_connected:
            self.disconnect()
        if fault == SIMULATED_DEATH:
            with self._new_frame:
                self._failure = RuntimeError("its capture failed (simulated)")
                self._new_frame.notify_all()

    def _check_attached(self) -> None:
        """The robot that owns the camera gave it what to draw (attach_scene)."""
        if self._scene is None or self.renderer is None:
            raise ConfigError(f"{self} has no scene to draw: the teledex_render camera only works in a TeleDex "
                              "robot's cameras (e.g. --robot.type=teledex --robot.cameras='{top: {type: "
                              "teledex_render}}'); give another robot a camera of its own kind (opencv, ...)")

    def _check_present(self) -> None:
        if self._simulated_fault in (SIMULATED_UNPLUG, SIMULATED_DEATH):
            raise DeviceError(f"{self}: no camera answers (simulated {self._simulated_fault!r}; simulate_fault(None) "
                              "brings it back)")

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

    def _check_capturing(self) -> None:
        if self._failure is not None:
            raise DeviceError(f"{self} cannot render: {type(self._failure).__name__}: {self._failure}; "
                              f"{self.render_fix}") from self._failure
        if not self.is_connected:
            raise DeviceNotConnectedError(f"{self} is not connected.")

    def async_read(self, timeout_ms: float = 200) -> np.ndarray:
        self._check_capturing()
        with self._new_frame:
            if not self._new_frame.wait_for(
                    lambda: self._frame_counter > self._consumed_counter or self._failure is not None,
                    timeout_ms / 1e3):
                raise TimeoutError(f"{self}: no new frame within {timeout_ms} ms")
            self._check_capturing()
            self._consumed_counter = self._frame_counter
            self._returned_depth = self._depth
            assert self._frame is not None  # a frame was published (counted)
            return self._frame

    def read_latest(self, max_age_ms: int = 500) -> np.ndarray:
        self._check_capturing()
        with self._lock:
            frame, capture_ns, self._returned_depth = self._frame, self._frame_capture_ns, self._depth
        if frame is None or capture_ns is None:  # as LeRobot's cameras say it
            raise RuntimeError(f"{self} has not captured any frames yet.")
        age_ms = (now_ns() - capture_ns) / 1e6
        if age_ms > max_age_ms:
            raise TimeoutError(f"{self} latest frame is too old: {age_ms:.1f} ms (max allowed: {max_age_ms} ms).")
        return frame

    def _capture(self) -> tuple[np.ndarray, np.ndarray | None]:
        """One instant: the colour image, and its depth map where the camera records depth."""
        scene, renderer = self._scene, self.renderer
        assert scene is not None and renderer is not None  # connect() checked (_check_attached)
        segments, hand_pose = scene()
        return renderer.render(segments, hand_pose), None

    def _run(self) -> None:
        thread = threading.get_native_id()  # Linux: a thread's niceness is its own
        os.setpriority(os.PRIO_PROCESS, thread, os.getpriority(os.PRIO_PROCESS, thread) + RENDER_NICENESS)
        try:
            self._capture_frames()
        except Exception as error:  # the readers report it (_check_capturing): at connect, the start's one line
            with self._new_frame:
                self._failure = error
                self._new_frame.notify_all()

    def _capture_frames(self) -> None:
        period_s = 1.0 / self.fps
        latency_s = self.config.latency_ms / 1e3
        next_tick = now_ns()
        while not self._stop.is_set():
            if self._simulated_fault == SIMULATED_STALL:
                self._stop.wait(period_s)
                continue
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
