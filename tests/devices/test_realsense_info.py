"""RealSense intrinsics in camera_info.json: LeRobot's RealSenseCamera plays back a synthetic D455 recording (made
with rs.software_device + rs.recorder), and we read back the intrinsics we set.

librealsense runs in child processes (tests/realsense_playback.py): its playback threads sometimes crash the process
that stopped a pipeline, which would end the whole test session."""

import json
import signal
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

pytest.importorskip("pyrealsense2")  # needs libusb-1.0 (installed by `make`)

import realsense_playback as playback  # noqa: E402  (imports librealsense, starts nothing)
from lerobot.cameras.realsense import RealSenseCamera, RealSenseCameraConfig  # noqa: E402
from realsense_playback import FPS, HEIGHT, SERIAL, WIDTH  # noqa: E402

from lerobot_robot_teledex.cameras.camera_info import camera_info  # noqa: E402

PLAYBACK = Path(playback.__file__)


def _expected(values: dict) -> dict:
    """What camera_info should report for intrinsics the helper recorded."""
    return dict(fx=values["fx"], fy=values["fy"], cx=values["ppx"], cy=values["ppy"],
                distortion_model=values["model"].name, distortion=list(values["coeffs"]))


def _playback(*args: str) -> list[dict]:
    done = subprocess.run([sys.executable, str(PLAYBACK), *args], capture_output=True, text=True, timeout=120)
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    output = (done.stdout + done.stderr)[-3000:]
    if done.returncode == -signal.SIGSEGV and lines and lines[-1]["stage"] == "read":
        warnings.warn("librealsense crashed (SIGSEGV) stopping the playback, after the camera had answered",
                      stacklevel=1)
    else:
        assert done.returncode == 0, f"realsense_playback {args[0]} failed ({done.returncode}):\n{output}"
    return lines


@pytest.fixture(scope="module")
def recording(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("realsense") / "synthetic_d455.db3"
    _playback("record", str(path))
    assert path.stat().st_size > 0
    return str(path)


def _read(recording: str, **config) -> dict:
    lines = _playback("info", recording, json.dumps(config))
    assert lines and lines[0]["stage"] == "read", lines
    return lines[0]


def _subset(info: dict, expected: dict) -> dict:
    return {key: info[key] for key in expected}


def test_colour_intrinsics_are_the_recorded_ones(recording):
    read = _read(recording)
    assert read["shape"] == [HEIGHT, WIDTH, 3]
    assert (read["info"]["width"], read["info"]["height"]) == (WIDTH, HEIGHT)
    expected = _expected(playback.COLOR)
    assert _subset(read["info"], expected) == expected


def test_depth_only_camera_records_the_depth_intrinsics(recording):
    read = _read(recording, use_rgb=False, use_depth=True)
    assert read["shape"] == [HEIGHT, WIDTH, 1]  # LeRobot reads depth as one channel
    expected = _expected(playback.DEPTH)
    assert _subset(read["info"], expected) == expected


def test_rotated_or_unconnected_cameras_get_no_guessed_intrinsics(recording):
    rotated = _read(recording, rotation="ROTATE_180")["info"]
    assert (rotated["width"], rotated["height"], rotated["fx"], rotated["cx"]) == (WIDTH, HEIGHT, None, None)
    unconnected = camera_info(RealSenseCamera(RealSenseCameraConfig(SERIAL, fps=FPS, width=WIDTH, height=HEIGHT)))
    assert (unconnected.width, unconnected.fx) == (WIDTH, None)
