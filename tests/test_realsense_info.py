"""RealSense intrinsics in camera_info.json: LeRobot's RealSenseCamera plays back a synthetic D455 recording (made
here with rs.software_device + rs.recorder), and we read back the intrinsics we set."""

import time
from unittest.mock import patch

import numpy as np
import pytest

rs = pytest.importorskip("pyrealsense2")  # needs libusb-1.0 (installed by `make`)

from lerobot.cameras.configs import Cv2Rotation  # noqa: E402
from lerobot.cameras.realsense import RealSenseCamera, RealSenseCameraConfig  # noqa: E402
from lerobot_robot_teledex.camera_info import camera_info  # noqa: E402

SERIAL = "123456789012"
WIDTH, HEIGHT, FPS = 640, 480, 30
# float32-exact values, so what librealsense stores compares equal
COLOR = dict(fx=615.5, fy=616.25, ppx=321.75, ppy=238.5, model=rs.distortion.inverse_brown_conrady,
             coeffs=[0.125, -0.0625, 0.001953125, -0.0009765625, 0.015625])
DEPTH = dict(fx=390.5, fy=390.5, ppx=320.25, ppy=241.0, model=rs.distortion.brown_conrady, coeffs=[0.0] * 5)


def _intrinsics(values: dict) -> "rs.intrinsics":
    k = rs.intrinsics()
    k.width, k.height = WIDTH, HEIGHT
    for name, value in values.items():
        setattr(k, name, value)
    return k


def _video_stream(sensor, kind, fmt, bytes_per_pixel: int, uid: int, values: dict):
    stream = rs.video_stream()
    stream.type, stream.index, stream.uid, stream.fmt, stream.bpp = kind, 0, uid, fmt, bytes_per_pixel
    stream.width, stream.height, stream.fps = WIDTH, HEIGHT, FPS
    stream.intrinsics = _intrinsics(values)
    return sensor.add_video_stream(stream)


def record_synthetic_d455(path: str, frames: int = 20) -> None:
    """A D455 (serial 123456789012) with z16 depth and rgb8 colour at 640x480@30, recorded to a .db3."""
    device = rs.software_device()
    device.register_info(rs.camera_info.name, "Intel RealSense D455")
    device.register_info(rs.camera_info.serial_number, SERIAL)
    depth_sensor, color_sensor = device.add_sensor("Stereo Module"), device.add_sensor("RGB Camera")
    depth_profile = _video_stream(depth_sensor, rs.stream.depth, rs.format.z16, 2, 0, DEPTH)
    depth_sensor.add_read_only_option(rs.option.depth_units, 0.001)
    color_profile = _video_stream(color_sensor, rs.stream.color, rs.format.rgb8, 3, 1, COLOR)
    recorder = rs.recorder(path, device)
    sensors = ((depth_sensor, depth_profile, 2, np.uint16), (color_sensor, color_profile, 3, np.uint8))
    queue = rs.frame_queue()
    for sensor, profile, _, _ in sensors:
        sensor.open(profile)
        sensor.start(queue)
    for index in range(frames):
        for sensor, profile, bytes_per_pixel, dtype in sensors:
            frame = rs.software_video_frame()
            shape = (HEIGHT, WIDTH) if bytes_per_pixel == 2 else (HEIGHT, WIDTH, 3)
            frame.pixels = np.full(shape, index, dtype=dtype).tobytes()
            frame.bpp, frame.stride = bytes_per_pixel, WIDTH * bytes_per_pixel
            frame.timestamp, frame.frame_number = index * 1000 / FPS, index
            frame.domain = rs.timestamp_domain.hardware_clock
            frame.profile = profile.as_video_stream_profile()
            sensor.on_video_frame(frame)
        time.sleep(0.001)
    for sensor, _, _, _ in sensors:
        sensor.stop()
        sensor.close()
    del recorder  # the recording is written when the recorder goes


@pytest.fixture(scope="module")
def recording(tmp_path_factory) -> str:
    path = str(tmp_path_factory.mktemp("realsense") / "synthetic_d455.db3")
    record_synthetic_d455(path)
    return path


@pytest.fixture
def connected(recording):
    """Connect a LeRobot RealSenseCamera to the recording (LeRobot's own test pattern); disconnect afterwards."""
    cameras = []

    def connect(**config) -> RealSenseCamera:
        camera = RealSenseCamera(RealSenseCameraConfig(SERIAL, fps=FPS, width=WIDTH, height=HEIGHT, warmup_s=1,
                                                       **config))
        with patch("pyrealsense2.config.enable_device",
                   side_effect=lambda cfg, serial: cfg.enable_device_from_file(recording, repeat_playback=True)):
            camera.connect()
        cameras.append(camera)
        return camera
    yield connect
    for camera in cameras:
        camera.disconnect()


def test_colour_intrinsics_are_the_recorded_ones(connected):
    camera = connected()
    assert camera.read().shape == (HEIGHT, WIDTH, 3)
    info = camera_info(camera)
    assert (info.width, info.height) == (WIDTH, HEIGHT)
    assert (info.fx, info.fy, info.cx, info.cy) == (COLOR["fx"], COLOR["fy"], COLOR["ppx"], COLOR["ppy"])
    assert info.distortion_model == "inverse_brown_conrady"
    assert info.distortion == tuple(COLOR["coeffs"])


def test_depth_only_camera_records_the_depth_intrinsics(connected):
    info = camera_info(connected(use_rgb=False, use_depth=True))
    assert (info.fx, info.fy, info.cx, info.cy) == (DEPTH["fx"], DEPTH["fy"], DEPTH["ppx"], DEPTH["ppy"])
    assert (info.distortion_model, info.distortion) == ("brown_conrady", (0.0,) * 5)


def test_rotated_or_unconnected_cameras_get_no_guessed_intrinsics(connected):
    rotated = camera_info(connected(rotation=Cv2Rotation.ROTATE_180))
    assert (rotated.width, rotated.height, rotated.fx, rotated.cx) == (WIDTH, HEIGHT, None, None)
    unconnected = camera_info(RealSenseCamera(RealSenseCameraConfig(SERIAL, fps=FPS, width=WIDTH, height=HEIGHT)))
    assert (unconnected.width, unconnected.fx) == (WIDTH, None)
