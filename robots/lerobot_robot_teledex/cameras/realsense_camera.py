"""LeRobot's RealSenseCamera (its pipeline, read thread, warm-up and options), changed where a recording needs it:

- depth aligned to colour: each frameset goes through rs.align(color) before LeRobot takes its frames, so depth
  pixel (u, v) is the colour pixel (u, v), with the colour stream's intrinsics;
- depth in millimetres: a sensor with another unit (a D405's 0.1 mm) is converted, so LeRobot's reading of uint16
  depth as millimetres holds;
- one frameset per read: the colour image, its depth map and their capture times are taken together, so a frameset
  arriving between a robot's colour and depth reads cannot pair one frameset's colour with the next one's depth;
- each stream's capture time (capture_ns, depth_capture_ns): LeRobot stamps a frameset once, on arrival; the depth
  frame's own time is that stamp shifted by the device's timestamps of its two frames;
- playback_file: a recording plays in place of the camera (librealsense's playback device), for tests and replays.
"""

from dataclasses import dataclass

import numpy as np
import pyrealsense2 as rs
from lerobot.cameras.realsense import RealSenseCamera

from teledex_lerobot.clock import from_perf_counter
from teledex_lerobot.devices.realsense.camera_info import depth_in_millimetres, sensor_depth_scale_m
from teledex_lerobot.errors import DeviceError

from .config_realsense_camera import TeledexRealSenseCameraConfig


@dataclass(frozen=True)
class _Frameset:
    colour: np.ndarray
    depth: np.ndarray | None
    arrived_s: float  # time.perf_counter, LeRobot's stamp
    depth_after_colour_s: float  # from the device's frame timestamps


class TeledexRealSenseCamera(RealSenseCamera):
    # class defaults: LeRobot's __init__ sets latest_timestamp (below) before this class's own __init__ runs
    _read_depth_after_colour_s = 0.0  # of the frameset the read thread is working on
    _depth_after_colour_s = 0.0  # of the frameset published in latest_*
    _latest_timestamp: float | None = None

    def __init__(self, config: TeledexRealSenseCameraConfig):
        super().__init__(config)
        self.config = config
        self.sensor_depth_scale_m: float | None = None  # once connected, with use_depth
        self._align: rs.align | None = None
        self._taken: _Frameset | None = None  # the frameset of the colour image last returned

    @property
    def aligns_depth(self) -> bool:
        return self.use_depth and self.use_rgb

    # LeRobot's read thread publishes a frameset by setting latest_color_frame, latest_depth_frame and then this
    # under frame_lock: the depth frame's shift from its colour is published with them.
    @property
    def latest_timestamp(self) -> float | None:
        return self._latest_timestamp

    @latest_timestamp.setter
    def latest_timestamp(self, seconds: float | None) -> None:
        self._latest_timestamp = seconds
        self._depth_after_colour_s = self._read_depth_after_colour_s

    def _open_pipeline(self) -> None:
        try:
            super()._open_pipeline()
        except ConnectionError as err:
            if self.config.playback_file is None:
                raise
            raise DeviceError(f"{self} cannot play {self.config.playback_file} ({err.__cause__}); give the "
                              "recorded camera's serial as serial_number_or_name") from err

    def _configure_rs_pipeline_config(self, rs_config) -> None:
        if self.config.playback_file is not None:
            # LeRobot's enable_device(serial) that follows then requires the recording to hold this very camera
            rs_config.enable_device_from_file(self.config.playback_file, repeat_playback=True)
        super()._configure_rs_pipeline_config(rs_config)

    def _configure_capture_settings(self) -> None:
        super()._configure_capture_settings()
        if self.use_depth:
            self.sensor_depth_scale_m = sensor_depth_scale_m(self.rs_profile.get_device())
            self._align = rs.align(rs.stream.color) if self.aligns_depth else None

    def _read_from_hardware(self):
        frames = super()._read_from_hardware()
        if self._align is None:
            return frames
        frames = self._align.process(frames)  # the aligned depth keeps its frame's own timestamp
        self._read_depth_after_colour_s = (frames.get_depth_frame().get_timestamp()
                                           - frames.get_color_frame().get_timestamp()) / 1e3
        return frames

    def _postprocess_image(self, image, depth_frame: bool = False):
        if depth_frame:
            assert self.sensor_depth_scale_m is not None  # read at connect by a camera with use_depth
            image = depth_in_millimetres(image, self.sensor_depth_scale_m)
        return super()._postprocess_image(image, depth_frame)

    def _take_newest(self) -> np.ndarray:
        with self.frame_lock:
            arrived_s = self.latest_timestamp
            assert arrived_s is not None  # LeRobot's read found a frameset published, stamped with it
            self._taken = _Frameset(self.latest_color_frame, self.latest_depth_frame, arrived_s,
                                    self._depth_after_colour_s)
            self.new_frame_event.clear()  # taken: the next async_read waits for a newer one
        return self._taken.colour

    def async_read(self, timeout_ms: float = 200) -> np.ndarray:
        super().async_read(timeout_ms)  # waits for a new frameset, raising as LeRobot does
        return self._take_newest()

    def read_latest(self, max_age_ms: int = 500) -> np.ndarray:
        super().read_latest(max_age_ms)  # there is one, recent enough
        return self._take_newest()

    def read_latest_depth(self, max_age_ms: int = 500) -> np.ndarray:
        """The depth map of the colour image last read (uint16 mm, (H, W, 1)); without colour, the newest."""
        if self.aligns_depth and self._taken is not None and self._taken.depth is not None:
            return self._taken.depth
        return super().read_latest_depth(max_age_ms)

    @property
    def capture_ns(self) -> int | None:
        """When the colour image last read arrived (monotonic ns), as LeRobot stamps it; without colour, the newest
        depth map's."""
        arrived_s = self.latest_timestamp if self._taken is None else self._taken.arrived_s
        return None if arrived_s is None else from_perf_counter(arrived_s)

    @property
    def depth_capture_ns(self) -> int | None:
        """When its depth map was captured: the colour's stamp shifted by the device's time between the two."""
        taken = self._taken
        return self.capture_ns if taken is None else from_perf_counter(taken.arrived_s + taken.depth_after_colour_s)

    def disconnect(self) -> None:
        super().disconnect()
        self._taken = None
