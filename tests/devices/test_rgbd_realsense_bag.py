"""RGB-D from a RealSense recording: librealsense's own recorder writes a D405-like camera (rs.software_device +
rs.recorder; librealsense 2.59 writes ROS2 .db3 bags only, a .bag name is refused) whose depth, in 0.1 mm units and
with intrinsics of its own, looks at a wall and a nearer patch from 15 mm beside the colour camera. teledex-record
plays it through teledex_realsense (LeRobot's RealSenseCamera, depth aligned to colour) and stores depth in both
formats; LeRobotDataset decodes it. What was written into the recording comes back: the depth reprojected onto the
colour image where the geometry says (within LeRobot's quantization only), its scale, the colour intrinsics it now
has, and each stream's own capture time.

librealsense runs in child processes (realsense_playback.py, teledex-record): its playback threads sometimes crash
the process that stops a pipeline (SIGSEGV, about 1 run in 12), which must not end the test session."""

import json
import signal
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pyrealsense2")  # needs libusb-1.0 (installed by `make`)

import realsense_playback as playback  # noqa: E402  (imports librealsense, starts nothing)
from commands import command, command_env  # noqa: E402
from lerobot.cameras.realsense import RealSenseCameraConfig  # noqa: E402
from lerobot.datasets import LeRobotDataset  # noqa: E402
from lerobot.datasets.depth_utils import dequantize_depth, quantize_depth  # noqa: E402
from realsense_playback import FPS, RGBD, SERIAL, rgbd_wall_units  # noqa: E402

from lerobot_robot_teledex import TeledexConfig  # noqa: E402
from lerobot_robot_teledex.cameras.config_realsense_camera import TeledexRealSenseCameraConfig  # noqa: E402
from teledex_lerobot.recording.lerobot_dataset import read_depth_video  # noqa: E402
from teledex_lerobot.storage.native import load_native_episode, native_episode_dirs  # noqa: E402

WIDTH, HEIGHT = RGBD["width"], RGBD["height"]
DEPTH = "observation.images.wrist_depth"


def _child(argv: list[str], tmp: Path, done_line: str) -> str:
    """Run a librealsense child process; a SIGSEGV once `done_line` was printed is librealsense stopping, not a
    wrong answer."""
    done = subprocess.run(argv, env=command_env(tmp), capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL)
    output = done.stdout + done.stderr
    if done.returncode == -signal.SIGSEGV and done_line in output:
        warnings.warn("librealsense crashed (SIGSEGV) stopping the playback, after the work was done", stacklevel=1)
    else:
        assert done.returncode == 0, f"{Path(argv[0]).name} failed ({done.returncode}):\n{output[-4000:]}"
    return output


def record_argv(recording: Path, root: Path, serial: str = SERIAL) -> list[str]:
    camera = {"type": "teledex_realsense", "serial_number_or_name": serial, "playback_file": str(recording),
              "use_depth": True, "width": WIDTH, "height": HEIGHT, "fps": FPS}
    return command("teledex-record", "--robot.type=teledex", "--robot.backend=fake", "--robot.preset_cameras=false",
                   f"--robot.cameras={json.dumps({'wrist': camera})}", "--teleop.type=teledex_replay",
                   "--dataset.repo_id=local/bag", f"--dataset.root={root}", "--dataset.single_task=look",
                   f"--dataset.fps={FPS}", "--dataset.num_episodes=1", "--dataset.episode_time_s=1.5",
                   "--dataset.reset_time_s=0", "--dataset.push_to_hub=false")


@pytest.fixture(scope="module")
def recording(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("bag") / "d405_wall.db3"
    _child([sys.executable, playback.__file__, "record-rgbd", str(path)], path.parent, "")
    assert path.stat().st_size > 0
    return path


@pytest.fixture(scope="module")
def recorded(recording, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("recorded") / "bag"
    _child(record_argv(recording, root), root.parent, "Saved episode 0")
    return root


def frame_index(colour: np.ndarray) -> int:
    """Which recorded frame a colour image is (its grey is 4 x the index; AV1 changes it by a unit or two)."""
    return int(round(float(np.median(colour)) / 4))


def depth_index(depth_mm: np.ndarray) -> int:
    """Which recorded frame a depth map is (the wall's depth, in the corner: 500 mm + 10 mm per frame)."""
    return int(round((float(np.median(depth_mm[:20, :20])) - 500) / 10))


def aligned_expectation(index: int) -> np.ndarray:
    """The depth the colour camera's pixels see in frame `index`, mm, from the scene's geometry (not librealsense):
    each colour pixel's ray, at the patch's and at the wall's depth, moved into the depth camera and projected; NaN
    where that lands within a pixel of the patch's edge (rs.align's footprint rounding decides there)."""
    colour, depth = RGBD["colour"], RGBD["depth"]
    (top, bottom), (left, right) = RGBD["patch_rows"], RGBD["patch_columns"]
    wall_mm = rgbd_wall_units(index) * RGBD["depth_units_m"] * 1000
    patch_mm = wall_mm - 150
    v, u = np.mgrid[0:HEIGHT, 0:WIDTH].astype(float)

    def inside_patch(z_mm: float, margin: float) -> np.ndarray:
        """The depth pixel a colour pixel at depth z_mm comes from is `margin` pixels inside the patch (negative:
        outside it)."""
        x_m = (u - colour["ppx"]) / colour["fx"] * z_mm / 1000 - RGBD["depth_to_colour_m"][0]
        y_m = (v - colour["ppy"]) / colour["fy"] * z_mm / 1000
        ud = x_m / (z_mm / 1000) * depth["fx"] + depth["ppx"]
        vd = y_m / (z_mm / 1000) * depth["fy"] + depth["ppy"]
        inner = np.minimum.reduce([ud - (left - 0.5), (right - 0.5) - ud, vd - (top - 0.5), (bottom - 0.5) - vd])
        return inner >= margin if margin > 0 else inner <= margin

    expected = np.full((HEIGHT, WIDTH), np.nan)
    expected[inside_patch(wall_mm, -1) & inside_patch(patch_mm, -1)] = wall_mm
    expected[inside_patch(patch_mm, 1)] = patch_mm  # nearer: it hides the wall
    return expected


def through_quantization(millimetres: np.ndarray) -> np.ndarray:
    codes = quantize_depth(millimetres.astype(np.uint16), video_backend=None)
    return dequantize_depth(codes, output_unit="mm", output_tensor=False, output_channel_last=True)[..., 0]


def test_depth_aligned_to_colour_comes_back_from_lerobotdataset(recorded):
    dataset = LeRobotDataset("local/bag", root=recorded)
    assert dataset.meta.depth_keys == [DEPTH]
    assert dataset.features[DEPTH]["info"]["depth_unit"] == "mm"
    assert len(dataset) >= FPS  # 1.5 s at 30 Hz, whatever ticks the machine dropped
    checked = 0
    for i in range(len(dataset)):
        item = dataset[i]
        depth = item[DEPTH].numpy()[0]
        expected = aligned_expectation(depth_index(depth))
        known = ~np.isnan(expected)
        assert known.mean() > 0.9
        # exactly what LeRobot's quantization makes of the millimetres written (0.1 mm units, converted)
        assert np.array_equal(depth[known], through_quantization(expected[known])), i
        checked += 1
    assert checked == len(dataset)
    # unaligned, the patch would cover the depth image's pixels PATCH: the colour camera's longer focal length
    # (300 vs 200 px) shows it 1.5 times as wide and high, and elsewhere
    (top, bottom), (left, right) = RGBD["patch_rows"], RGBD["patch_columns"]
    rows, columns = np.nonzero(depth < depth[:20, :20].min() - 100)
    assert (rows.min(), columns.min()) != (top, left)
    assert 2.0 < len(rows) / ((bottom - top) * (right - left)) < 2.5


def test_each_frame_pairs_a_frameset_and_each_stream_keeps_its_capture_time(recorded):
    """Colour and depth of a stored frame are one frameset of the recording, and the depth stream's capture time is
    the colour's shifted by the recording's own timestamps (5 ms earlier). Where the recording loops, librealsense pairs
    frame 59's colour with one of the first depth frames (0 mostly, 1 or 2 on a loaded machine: which one depends on
    its playback threads), and the stamps say which."""
    dataset = LeRobotDataset("local/bag", root=recorded)
    [folder] = native_episode_dirs(Path(f"{recorded}_native"))
    telemetry = load_native_episode(folder).telemetry
    names = list(telemetry["source_names"])
    native_shift = (telemetry["source_timestamps_ns"][:, names.index("wrist_depth")]
                    - telemetry["source_timestamps_ns"][:, names.index("wrist")])
    for i in range(len(dataset)):
        item = dataset[i]
        colour = frame_index(item["observation.images.wrist"].numpy() * 255)
        depth = depth_index(item[DEPTH].numpy()[0])
        written_ms = depth * 1000 / FPS - RGBD["depth_before_colour_ms"] - colour * 1000 / FPS
        shift_ns = int(item["t_wrist_depth_ns"]) - int(item["t_wrist_ns"])
        assert abs(shift_ns / 1e6 - written_ms) < 0.01, (i, colour, depth)
        assert native_shift[i] == shift_ns
        looped = colour == RGBD["frames"] - 1 and depth < 5
        assert colour == depth or looped, (i, colour, depth)


def test_the_native_layout_holds_the_same_depth_with_its_scale_and_the_colour_intrinsics(recorded):
    [folder] = native_episode_dirs(Path(f"{recorded}_native"))
    episode = load_native_episode(folder, verify_checksums=True)
    native = np.stack(list(read_depth_video(episode.video_path("wrist_depth"), episode.depth["wrist_depth"])))
    dataset = LeRobotDataset("local/bag", root=recorded)
    assert np.array_equal(native[..., 0], np.stack([dataset[i][DEPTH].numpy()[0] for i in range(len(dataset))]))
    colour, depth = episode.camera_info["wrist"], episode.camera_info["wrist_depth"]
    written = RGBD["colour"]
    assert (depth.fx, depth.fy, depth.cx, depth.cy) == (written["fx"], written["fy"], written["ppx"], written["ppy"])
    assert depth.distortion_model == written["model"].name == colour.distortion_model
    assert (depth.width, depth.height) == (WIDTH, HEIGHT) and depth.fx == colour.fx
    assert depth.depth_scale_m == 0.001 and depth.sensor_depth_scale_m == RGBD["depth_units_m"]
    assert colour.depth_scale_m is None
    sidecar = json.loads(next((recorded / "meta" / "teledex_episodes").glob("*.json")).read_text())
    assert sidecar["camera_info"]["wrist_depth"]["sensor_depth_scale_m"] == RGBD["depth_units_m"]


def test_a_recording_of_another_camera_is_refused_in_one_line(recording, tmp_path):
    done = subprocess.run(record_argv(recording, tmp_path / "ds", serial="999"), env=command_env(tmp_path),
                          capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, done.stderr[-3000:]
    assert lines[-1].startswith("teledex-record: error:") and "different serial number" in lines[-1]
    assert "serial_number_or_name" in lines[-1] and not (tmp_path / "ds").exists()


def test_depth_cameras_that_would_record_something_else_are_refused(tmp_path):
    unaligned = RealSenseCameraConfig(SERIAL, fps=FPS, width=WIDTH, height=HEIGHT, use_depth=True)
    with pytest.raises(ValueError, match="cameras.wrist: LeRobot's intelrealsense .* use type teledex_realsense"):
        TeledexConfig(cameras={"wrist": unaligned})
    depth_only = TeledexRealSenseCameraConfig(SERIAL, fps=FPS, width=WIDTH, height=HEIGHT, use_rgb=False,
                                              use_depth=True)
    with pytest.raises(ValueError, match="cameras.wrist: use_rgb=false"):
        TeledexConfig(cameras={"wrist": depth_only})
    with pytest.raises(ValueError, match="playback_file .* is not a file"):
        TeledexRealSenseCameraConfig(SERIAL, playback_file=str(tmp_path / "missing.db3"))
    with pytest.raises(ValueError, match="serial_number_or_name 'D405'"):
        TeledexRealSenseCameraConfig("D405", playback_file=__file__)
