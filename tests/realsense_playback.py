"""librealsense, in a process of its own, for tests/devices/test_realsense_info.py.

librealsense's playback threads sometimes crash the process when a pipeline playing a recording stops (SIGSEGV in a
native thread, about 1 run in 12 on this machine, at any later point in the process): here it can only end this
process, and the test tells that crash apart from a wrong answer.

    python tests/realsense_playback.py record PATH
        write a synthetic D455 recording (serial 123456789012, z16 depth and rgb8 colour at 640x480@30) to PATH
    python tests/realsense_playback.py record-rgbd PATH
        write the RGB-D scene of tests/devices/test_rgbd_realsense_bag.py (RGBD below) to PATH
    python tests/realsense_playback.py info PATH '{"use_depth": true, ...}'
        connect LeRobot's RealSenseCamera (RealSenseCameraConfig fields; "rotation" by Cv2Rotation name) to the
        recording, read a frame, print one JSON line {"stage": "read", "shape": ..., "info": camera_info(camera)},
        then disconnect and print {"stage": "disconnected"}
"""

import dataclasses
import json
import os
import sys
import time
from unittest.mock import patch

import numpy as np
import pyrealsense2 as rs
from lerobot.cameras.configs import Cv2Rotation
from lerobot.cameras.realsense import RealSenseCamera, RealSenseCameraConfig

from lerobot_robot_teledex.cameras.camera_info import camera_info

SERIAL = "123456789012"
WIDTH, HEIGHT, FPS = 640, 480, 30
# float32-exact values, so what librealsense stores compares equal
COLOR = dict(fx=615.5, fy=616.25, ppx=321.75, ppy=238.5, model=rs.distortion.inverse_brown_conrady,
             coeffs=[0.125, -0.0625, 0.001953125, -0.0009765625, 0.015625])
DEPTH = dict(fx=390.5, fy=390.5, ppx=320.25, ppy=241.0, model=rs.distortion.brown_conrady, coeffs=[0.0] * 5)


# The RGB-D scene: a D405-like camera (depth in 0.1 mm units) at 320x240@30, colour and depth each with its own
# intrinsics and the colour 15 mm to the side. Frame i sees a wall square to the camera at 0.5 m + i cm with a
# nearer square patch 15 cm in front of it (depth pixels PATCH), its colour a uniform grey of 4 i; every depth frame
# is captured DEPTH_BEFORE_COLOUR_MS before its colour frame. The recording loops (playback repeats it).
RGBD = dict(width=320, height=240, frames=60, depth_units_m=0.0001, depth_before_colour_ms=5.0,
            colour=dict(fx=300.0, fy=300.0, ppx=161.5, ppy=119.5, model=rs.distortion.inverse_brown_conrady,
                        coeffs=[0.0] * 5),
            depth=dict(fx=200.0, fy=200.0, ppx=160.25, ppy=120.75, model=rs.distortion.brown_conrady,
                       coeffs=[0.0] * 5),
            depth_to_colour_m=(0.015, 0.0, 0.0), patch_rows=(90, 150), patch_columns=(120, 200))


def rgbd_wall_units(frame: int) -> int:
    """The wall's depth in frame `frame`, in the recording's units; the patch is 1500 units (15 cm) nearer."""
    return 5000 + 100 * frame


def _intrinsics(values: dict, width: int = WIDTH, height: int = HEIGHT) -> "rs.intrinsics":
    k = rs.intrinsics()
    k.width, k.height = width, height
    for name, value in values.items():
        setattr(k, name, value)
    return k


def _video_stream(sensor, kind, fmt, bytes_per_pixel: int, uid: int, values: dict, width: int = WIDTH,
                  height: int = HEIGHT):
    stream = rs.video_stream()
    stream.type, stream.index, stream.uid, stream.fmt, stream.bpp = kind, 0, uid, fmt, bytes_per_pixel
    stream.width, stream.height, stream.fps = width, height, FPS
    stream.intrinsics = _intrinsics(values, width, height)
    return sensor.add_video_stream(stream)


def record_rgbd_scene(path: str) -> None:
    width, height = RGBD["width"], RGBD["height"]
    device = rs.software_device()
    device.register_info(rs.camera_info.name, "Intel RealSense D405")
    device.register_info(rs.camera_info.serial_number, SERIAL)
    depth_sensor, color_sensor = device.add_sensor("Stereo Module"), device.add_sensor("RGB Camera")
    depth_profile = _video_stream(depth_sensor, rs.stream.depth, rs.format.z16, 2, 0, RGBD["depth"], width, height)
    depth_sensor.add_read_only_option(rs.option.depth_units, RGBD["depth_units_m"])
    color_profile = _video_stream(color_sensor, rs.stream.color, rs.format.rgb8, 3, 1, RGBD["colour"], width, height)
    extrinsics = rs.extrinsics()
    extrinsics.rotation, extrinsics.translation = [1.0, 0, 0, 0, 1.0, 0, 0, 0, 1.0], list(RGBD["depth_to_colour_m"])
    depth_profile.register_extrinsics_to(color_profile, extrinsics)
    recorder = rs.recorder(path, device)
    queue = rs.frame_queue()
    for sensor, profile in ((depth_sensor, depth_profile), (color_sensor, color_profile)):
        sensor.open(profile)
        sensor.start(queue)
    (top, bottom), (left, right) = RGBD["patch_rows"], RGBD["patch_columns"]
    started = time.monotonic()
    for index in range(RGBD["frames"]):
        depth = np.full((height, width), rgbd_wall_units(index), dtype=np.uint16)
        depth[top:bottom, left:right] -= 1500
        colour = np.full((height, width, 3), 4 * index, dtype=np.uint8)
        for sensor, profile, image, early_ms in ((depth_sensor, depth_profile, depth, RGBD["depth_before_colour_ms"]),
                                                 (color_sensor, color_profile, colour, 0.0)):
            frame = rs.software_video_frame()
            frame.pixels = image.tobytes()
            frame.bpp, frame.stride = image.itemsize * (image.shape[2] if image.ndim == 3 else 1), image[0].nbytes
            frame.timestamp, frame.frame_number = index * 1000 / FPS - early_ms, index
            frame.domain = rs.timestamp_domain.hardware_clock
            frame.profile = profile.as_video_stream_profile()
            sensor.on_video_frame(frame)
        # the recorder stamps frames on arrival, and playback keeps that pace: write at the camera's rate
        time.sleep(max(0.0, started + (index + 1) / FPS - time.monotonic()))
    for sensor in (depth_sensor, color_sensor):
        sensor.stop()
        sensor.close()
    del recorder  # the recording is written when the recorder goes


def record_synthetic_d455(path: str, frames: int = 20) -> None:
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


def read_camera_info(path: str, config: dict) -> None:
    """LeRobot's own test pattern: enable_device is redirected to the recording."""
    if "rotation" in config:
        config["rotation"] = Cv2Rotation[config["rotation"]]
    camera = RealSenseCamera(RealSenseCameraConfig(SERIAL, fps=FPS, width=WIDTH, height=HEIGHT, warmup_s=1, **config))
    with patch("pyrealsense2.config.enable_device",
               side_effect=lambda cfg, serial: cfg.enable_device_from_file(path, repeat_playback=True)):
        camera.connect()
    frame = camera.read() if config.get("use_rgb", True) else camera.read_depth()
    print(json.dumps({"stage": "read", "shape": list(frame.shape),
                      "info": dataclasses.asdict(camera_info(camera))}), flush=True)
    camera.disconnect()
    print(json.dumps({"stage": "disconnected"}), flush=True)


if __name__ == "__main__":
    command, recording = sys.argv[1], sys.argv[2]
    if command == "record":
        record_synthetic_d455(recording)
    elif command == "record-rgbd":
        record_rgbd_scene(recording)
    else:
        read_camera_info(recording, json.loads(sys.argv[3]))
    sys.stdout.flush()
    os._exit(0)  # librealsense's objects are not torn down again at interpreter exit
