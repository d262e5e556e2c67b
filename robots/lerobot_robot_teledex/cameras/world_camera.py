"""A camera that renders the MuJoCo world the robot runs in (EGL, headless), and with use_depth its depth map of the
same instant (read_latest_depth, as LeRobot's RealSenseCamera offers it).

In a real-time world it captures in its own thread, like any camera. In a lockstep world time stands still between
ticks, so it renders on demand in the reader's thread: a frame is captured when the world's clock reaches the next
frame time of the camera's rate, and stamped with that clock. With a station's timing (--robot.world.timing.*,
teledex_lerobot/world/station_timing.py) a lockstep camera's frames reach the reader that much later, or never; an
episode's first frame is readable at once (a camera that was streaming before the episode began). A real-time world's
cameras take their own latency_ms instead.
"""

import logging

import numpy as np
from lerobot.utils.errors import DeviceAlreadyConnectedError, DeviceNotConnectedError

from teledex_lerobot.errors import ConfigError
from teledex_lerobot.geometry.camera import WRIST_VIEW
from teledex_lerobot.world.camera import WorldRenderer
from teledex_lerobot.world.devices import WorldRunner
from teledex_lerobot.world.station_timing import Transport

from .config_world_camera import TeledexWorldCameraConfig
from .render_camera import SIMULATED_STALL, TeledexRenderCamera

logger = logging.getLogger(__name__)


class TeledexWorldCamera(TeledexRenderCamera):
    """The robot (backend mujoco) attaches it to its world (attach_world) before connecting it."""

    render_fix = ("the world renders headless through EGL (MUJOCO_GL=egl): install Mesa's EGL (`make system-deps`), "
                  "or record without cameras (--robot.preset_cameras=false)")
    renders_stereo = True

    def __init__(self, config: TeledexWorldCameraConfig):
        super().__init__(config)
        self.use_depth = config.use_depth
        self.runner: WorldRunner | None = None
        self.world_renderer: WorldRenderer | None = None  # its view of the world (attach_world)
        self._on_demand = False  # connected to a lockstep world
        self._transport: Transport | None = None  # a station's camera link (lockstep, world.timing)
        self._rendered_ns: int | None = None  # the latest capture, delivered or not
        self._episode = -1  # the world's resets when this camera last read: frames from before are stale

    def __str__(self) -> str:
        return f"TeledexWorldCamera({self.config.view})"

    @property
    def lockstep(self) -> bool:
        return self.runner is not None and self.runner.lockstep

    def attach_world(self, runner: WorldRunner, rig_name: str = "") -> None:
        """Render the world's camera of this camera's view (a wrist view: the one on rig `rig_name`'s hand)."""
        world = runner.world
        name = next((n for n, view in world.cameras.items() if view == self.config.view
                     and (view != WRIST_VIEW or world.camera_rigs.get(n, "") == rig_name)), None)
        if name is None:
            raise ConfigError(f"{self}: the world has no camera with view {self.config.view!r}: give the camera one "
                              f"of the world's views, {sorted(set(world.cameras.values()))} (--robot.cameras)")
        self.runner = runner
        # width: one eye's
        self.world_renderer = WorldRenderer(world, name, self.config.width, self.config.height, rig_name)
        timing = world.config.timing
        if timing.camera_latency_ms or timing.camera_jitter_ms or timing.camera_drop:
            if runner.lockstep:
                self._transport = Transport(timing.camera_latency_ms, timing.camera_jitter_ms, timing.camera_drop,
                                            timing.seed, f"camera {name}")
            else:
                logger.warning("%s: world.timing's camera settings act in a lockstep world; in real time give the "
                               "camera its own latency_ms", self)

    def _attached(self) -> tuple[WorldRunner, WorldRenderer]:
        """The world it renders and its renderer (attach_world)."""
        if self.runner is None or self.world_renderer is None:
            raise ConfigError(f"{self} has no world to render: the teledex_world camera only works in a TeleDex "
                              "robot's cameras with --robot.backend=mujoco")
        return self.runner, self.world_renderer

    def _check_attached(self) -> None:
        self._attached()

    @property
    def is_connected(self) -> bool:
        return self._on_demand or super().is_connected

    def _capture(self) -> tuple[np.ndarray, np.ndarray | None]:
        _, renderer = self._attached()
        return renderer.render_rgbd() if self.use_depth else (renderer.render(), None)

    def connect(self, warmup: bool = True) -> None:
        if not self.lockstep:
            super().connect(warmup)
            return
        if self._on_demand:
            raise DeviceAlreadyConnectedError(f"{self} is already connected.")
        self._check_present()
        self._attached()
        self._on_demand = True
        if warmup:
            self.read()

    def async_read(self, timeout_ms: float = 200) -> np.ndarray:
        if not self._on_demand:
            return super().async_read(timeout_ms)
        return self._frame_now()

    def read_latest(self, max_age_ms: int = 500) -> np.ndarray:
        if not self._on_demand:
            return super().read_latest(max_age_ms)
        return self._frame_now()

    def read_latest_depth(self, max_age_ms: int = 500) -> np.ndarray:
        """The depth map of the colour frame last read (a frame published in between does not split the pair; none
        read yet: the latest frame's), uint16 millimetres (H, W, 1)."""
        if not self.use_depth:
            raise ConfigError(f"{self}: cannot read depth, the camera was configured with use_depth=false; set "
                              "use_depth=true in its --robot.cameras entry")
        if self._returned_depth is None:
            self.read_latest(max_age_ms)
        assert self._returned_depth is not None  # a use_depth camera captures a depth map with every frame
        return self._returned_depth

    def _frame_now(self) -> np.ndarray:
        """The frame of the camera's latest frame time: rendered when the clock has reached a new one, readable
        when the station's link delivers it."""
        runner, _ = self._attached()
        now = runner.clock.now_ns()
        if runner.resets != self._episode:  # a new layout: nothing captured before it may reach a reader
            self._episode = runner.resets
            if self._transport is not None:
                self._transport.clear()
                self._frame, self._rendered_ns = None, None
        last_ns = self._rendered_ns
        # 1 ms of slack for rounding: a 25 fps camera in a 25 Hz loop captures every tick
        due = last_ns is None or now - last_ns >= 1e9 / self.fps - 1e6 or now < last_ns
        if due and self._simulated_fault != SIMULATED_STALL:
            frame, depth = self._capture()
            self._rendered_ns = now
            if self._transport is None or self._frame is None:  # an episode's first frame is there at once
                self._deliver(frame, depth, now, now)
            else:
                self._transport.send((frame, depth, now), now)
        if self._transport is not None:
            for frame, depth, capture_ns in self._transport.arrived(now):
                self._deliver(frame, depth, capture_ns, now)
        if self._frame is None:  # stalled before its first frame
            raise TimeoutError(f"{self}: no frame yet")
        self._returned_depth = self._depth
        return self._frame

    def _deliver(self, frame: np.ndarray, depth: np.ndarray | None, capture_ns: int, now_ns: int) -> None:
        self._frame, self._depth = frame, depth
        self._frame_capture_ns, self._frame_published_ns = capture_ns, now_ns
        self._frame_counter += 1

    def disconnect(self) -> None:
        if self._on_demand:
            self._on_demand = False
            if self.world_renderer is not None:
                self.world_renderer.close()  # rendered in this thread, whose OpenGL context it is
        elif not super().is_connected:
            raise DeviceNotConnectedError(f"{self} is not connected.")
        else:
            super().disconnect()
        self.world_renderer = None  # a capture thread's OpenGL context ended with the thread
