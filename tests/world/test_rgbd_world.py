"""RGB-D in the MuJoCo world: a world camera with use_depth records its depth map (uint16 millimetres, aligned to its
colour by construction) as LeRobot's depth video in the dataset and in the native layout; LeRobotDataset decodes it;
it is the depth MuJoCo rendered, within LeRobot's quantization only; with the recorded intrinsics and pose it puts the
table where the table is; the conversions keep it."""

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from lerobot.configs import DepthEncoderConfig
from lerobot.configs.dataset import DatasetRecordConfig
from lerobot.configs.video import DEFAULT_DEPTH_MAX, DEFAULT_DEPTH_MIN, DEFAULT_DEPTH_SHIFT, DEPTH_QMAX
from lerobot.datasets import LeRobotDataset
from lerobot.datasets.depth_utils import dequantize_depth, quantize_depth

from lerobot_robot_teledex import Teledex, TeledexConfig, TeledexWorldCameraConfig
from lerobot_teleoperator_teledex.world_expert import TeledexWorldExpertConfig
from teledex_lerobot.cli.errors import UserError
from teledex_lerobot.recording.conversions import lerobot_to_native, native_to_lerobot
from teledex_lerobot.recording.lerobot_dataset import read_depth_video
from teledex_lerobot.recording.recorder import Recorder, TeledexRecordConfig
from teledex_lerobot.storage.errors import DatasetError
from teledex_lerobot.storage.native import load_native_episode, native_episode_dirs
from teledex_lerobot.world.camera import WorldRenderer
from teledex_lerobot.world.world import LOCKSTEP, REAL_TIME, World, WorldConfig

FPS, WIDTH, HEIGHT = 25, 160, 120
DEPTH = "observation.images.top_depth"


def recorder(root: Path, video: bool = True, clock: str = LOCKSTEP, seconds: float = 2.0, **options) -> Recorder:
    camera = TeledexWorldCameraConfig(view="oblique", width=WIDTH, height=HEIGHT, fps=FPS, use_depth=True)
    robot = TeledexConfig(backend="mujoco", preset_cameras=False, cameras={"top": camera},
                          world=WorldConfig(seed=0, clock=clock))
    dataset = DatasetRecordConfig(repo_id="local/rgbd", root=str(root), single_task="cube", fps=FPS,
                                  episode_time_s=seconds, reset_time_s=0, num_episodes=1, push_to_hub=False,
                                  video=video)
    return Recorder(TeledexRecordConfig(robot=robot, teleop=TeledexWorldExpertConfig(), settle_s=-1, dataset=dataset,
                                        **options))


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    root = tmp_path_factory.mktemp("rgbd") / "world"
    run = recorder(root)
    run.run()
    return root, run.robot.robot.rig


def decoded(dataset: LeRobotDataset, key: str = DEPTH) -> np.ndarray:
    """Every frame's depth as LeRobotDataset returns it (float32 millimetres, (1, H, W)), as (N, H, W)."""
    return np.stack([dataset[i][key].numpy()[0] for i in range(len(dataset))])


def through_quantization(millimetres: np.ndarray) -> np.ndarray:
    """What LeRobot's default depth quantization (lossless codec) gives back for uint16 millimetres."""
    codes = quantize_depth(millimetres, video_backend=None)
    return dequantize_depth(codes, output_unit="mm", output_tensor=False, output_channel_last=True)[..., 0]


def half_quantum_mm(depth_mm: np.ndarray) -> np.ndarray:
    """Half of LeRobot's default log quantum at each depth (about 0.7 mm at 0.5 m)."""
    log_range = np.log(DEFAULT_DEPTH_MAX + DEFAULT_DEPTH_SHIFT) - np.log(DEFAULT_DEPTH_MIN + DEFAULT_DEPTH_SHIFT)
    return (depth_mm / 1000 + DEFAULT_DEPTH_SHIFT) * log_range / DEPTH_QMAX * 1000 / 2


def the_native_episode(root: Path):
    [folder] = native_episode_dirs(Path(f"{root}_native"))
    return load_native_episode(folder, verify_checksums=True)


def test_depth_is_lerobots_depth_feature_and_decodes_to_the_rendered_depth(recorded):
    root, rig = recorded
    dataset = LeRobotDataset("local/rgbd", root=root)
    assert dataset.meta.depth_keys == [DEPTH]
    feature = json.loads((root / "meta" / "info.json").read_text())["features"][DEPTH]
    assert feature["shape"] == [HEIGHT, WIDTH, 1]
    info = feature["info"]
    assert info["is_depth_map"] is True and info["depth_unit"] == "mm"
    assert (info["video.codec"], info["video.pix_fmt"], info["video.depth_min"]) == ("hevc", "gray12le", 0.01)
    depth = decoded(dataset)
    assert depth.shape == (2 * FPS, HEIGHT, WIDTH)
    # frame 0 shows the reset world: render it again, independently of the recording
    world = World(rig, WorldConfig(task="cube_assembly"), {"top": "oblique"})
    world.reset(0)
    renderer = WorldRenderer(world, "top", WIDTH, HEIGHT)
    _, rendered = renderer.render_rgbd()
    renderer.close()
    assert np.array_equal(depth[0], through_quantization(rendered[..., 0]))  # the codec is lossless
    seen = rendered[..., 0] > 0
    error = np.abs(depth[0] - rendered[..., 0])[seen]
    assert error.max() <= half_quantum_mm(rendered[..., 0][seen]).max() + 0.5  # the quantization's only
    assert 250 < np.median(depth[0][seen]) < 1500  # the workspace, from half a metre away
    assert np.all(depth[0][~seen] == DEFAULT_DEPTH_MIN * 1000)  # no depth (0) comes back as LeRobot's depth_min
    assert np.abs(depth[-1] - depth[0]).max() > 20  # the robot moved


def test_the_recorded_intrinsics_and_pose_put_the_table_where_it_is(recorded):
    """The table top (the world's z = 0; in the arm's base frame, where camera poses are given, the base's height
    above) from each table pixel's ray, through the intrinsics and pose the native camera_info.json records for the
    depth stream, is at the depth recorded there."""
    root, rig = recorded
    episode = the_native_episode(root)
    camera = episode.camera_info["top_depth"]
    assert camera.depth_scale_m == 0.001 and camera.sensor_depth_scale_m is None
    colour = episode.camera_info["top"]
    assert (camera.fx, camera.cx, camera.world_from_camera) == (colour.fx, colour.cx, colour.world_from_camera)
    world = World(rig, WorldConfig(task="cube_assembly"), {"top": "oblique"})
    world.reset(0)
    renderer = WorldRenderer(world, "top", WIDTH, HEIGHT)
    renderer.render()
    renderer._renderer.enable_segmentation_rendering()  # which geom each pixel shows: not the depth
    segments = renderer._renderer.render()
    renderer.close()
    from mujoco import mjtObj  # here: teledex_lerobot.world chose MuJoCo's headless OpenGL before it loads

    table = (segments[..., 0] == world.model.geom("table").id) & (segments[..., 1] == mjtObj.mjOBJ_GEOM)
    v, u = np.mgrid[0:HEIGHT, 0:WIDTH]
    rays = np.stack([(u - camera.cx) / camera.fx, (v - camera.cy) / camera.fy, np.ones((HEIGHT, WIDTH))], axis=-1)
    pose = np.array(camera.world_from_camera)  # in the arm's base frame, where the table top is at -base height
    table_z = -world.base_pose()[2, 3]
    expected_mm = (table_z - pose[2, 3]) / (rays @ pose[:3, :3].T)[..., 2] * 1000  # optical-axis depth at the top
    depth = next(read_depth_video(episode.video_path("top_depth"), episode.depth["top_depth"]))[..., 0]
    error = (depth - expected_mm)[table]
    assert table.sum() > 0.3 * table.size
    # half a quantum, the two roundings to whole millimetres (rendered, decoded) and a little for the renderer
    assert np.all(np.abs(error) <= half_quantum_mm(expected_mm[table]) + 1.1), np.abs(error).max()
    assert abs(error.mean()) < 0.2


def test_the_native_layout_holds_the_same_depth_with_its_quantization_and_stamps(recorded):
    root, _ = recorded
    episode = the_native_episode(root)  # every file's SHA-256 checked
    assert episode.manifest["cameras"]["top_depth"] == "videos/top_depth.mp4"
    assert "videos/top_depth.mp4" in episode.manifest["files"]
    assert episode.depth == {"top_depth": {"depth_min": 0.01, "depth_max": 10.0, "shift": 3.5, "use_log": True}}
    native = np.stack(list(read_depth_video(episode.video_path("top_depth"), episode.depth["top_depth"])))[..., 0]
    assert np.array_equal(native, decoded(LeRobotDataset("local/rgbd", root=root)))
    # the depth stream is a sync source of its own, captured with the colour by the same render
    names = list(episode.names("source_names"))
    stamps = episode.telemetry["source_timestamps_ns"]
    assert "top_depth" in names
    assert np.array_equal(stamps[:, names.index("top_depth")], stamps[:, names.index("top")])
    assert episode.telemetry["sync_valid"].all()
    assert episode.metadata["cameras"]["top"]["depth"] is True


def test_the_conversions_keep_depth_both_ways(recorded, tmp_path):
    root, _ = recorded
    original = decoded(LeRobotDataset("local/rgbd", root=root))
    lerobot_to_native(root, tmp_path / "native", progress=lambda _: None)
    [folder] = native_episode_dirs(tmp_path / "native")
    converted = load_native_episode(folder, verify_checksums=True)
    assert converted.depth == the_native_episode(root).depth
    assert converted.camera_info["top_depth"] == the_native_episode(root).camera_info["top_depth"]
    frames = np.stack(list(read_depth_video(converted.video_path("top_depth"), converted.depth["top_depth"])))
    assert np.array_equal(frames[..., 0], original)  # the packets, copied
    native_to_lerobot(tmp_path / "native", tmp_path / "again", "local/again", progress=lambda _: None)
    again = LeRobotDataset("local/again", root=tmp_path / "again")
    assert again.meta.depth_keys == [DEPTH]
    assert np.array_equal(decoded(again), original)  # decoded, encoded again: the same codes


def test_in_real_time_the_camera_thread_records_depth_with_its_colour(tmp_path):
    recorder(tmp_path / "real_time", clock=REAL_TIME, seconds=1.0).run()
    dataset = LeRobotDataset("local/rgbd", root=tmp_path / "real_time")
    depth = decoded(dataset)
    # how many of the second's ticks a loaded machine keeps varies (20 of 25 once, beside another test worker): what
    # is judged is that every kept frame has its depth, captured with its colour
    assert len(depth) >= 5 and 250 < np.median(depth[0]) < 1500
    stamps = np.array([[int(dataset[i][f"t_{s}_ns"]) for s in ("top", "top_depth")] for i in range(len(dataset))])
    assert np.array_equal(stamps[:, 0], stamps[:, 1])


def test_resuming_with_another_depth_quantization_is_refused(recorded, tmp_path):
    """LeRobot decodes every episode with the quantization info.json holds (the first episode's)."""
    root, _ = recorded
    shutil.copytree(root, tmp_path / "world")
    shutil.copytree(f"{root}_native", tmp_path / "world_native")
    before = (tmp_path / "world" / "meta" / "info.json").read_text()
    resumed = recorder(tmp_path / "world", resume=True)
    resumed.cfg.dataset.depth_encoder = DepthEncoderConfig(depth_max=3.0)
    with pytest.raises(DatasetError, match="depth quantization of observation.images.top_depth: .*'depth_max': 10.0"):
        resumed.run()
    assert (tmp_path / "world" / "meta" / "info.json").read_text() == before


def test_depth_is_off_by_default_and_needs_lerobots_videos(tmp_path):
    plain = Teledex(TeledexConfig(backend="mujoco", preset_cameras=False,
                                  cameras={"top": TeledexWorldCameraConfig(width=WIDTH, height=HEIGHT, fps=FPS)}))
    assert set(plain.observation_features) >= {"top"} and "top_depth" not in plain.observation_features
    with pytest.raises(UserError, match="--dataset.video=false with depth \\(top_depth\\)"):
        recorder(tmp_path / "images", video=False)
    assert not (tmp_path / "images").exists()

