"""Depth a policy can use (issue 35): LeRobot 0.6.1's ACT and Diffusion stop on a dataset with a depth feature (a
1-channel map into a 3-channel ResNet; Diffusion wants every image the colour cameras' shape), and LeRobot decodes
"nothing seen" as 10 mm. `teledex-convert to-training` writes a copy in which each depth map is a 3-channel grey
picture, nothing seen black and every seen depth at least RENDER_FLOOR; lerobot-train trains ACT and Diffusion on it
as docs/recording.md says, and `lerobot-edit-dataset remove_feature` is the documented way to drop depth instead.
The VITRA export carries the head camera's depth in millimetres with nothing seen 0.

The dataset: the MuJoCo world's oblique camera with depth, two 1 s episodes at 160x120, recorded once by
teledex-record's Recorder."""

import contextlib
import io
import json
import subprocess
from pathlib import Path

import h5py
import numpy as np
import pyarrow.parquet as pq
import pytest
from commands import command, command_env, run
from lerobot.configs.dataset import DatasetRecordConfig
from lerobot.datasets import LeRobotDataset
from vitra_format import vitra_problems

from lerobot_robot_teledex import TeledexConfig, TeledexWorldCameraConfig
from lerobot_teleoperator_teledex.world_expert import TeledexWorldExpertConfig
from teledex_lerobot.cli import convert
from teledex_lerobot.recording.depth_training import DEPTH_RENDERING, RENDER_FLOOR, render_depth
from teledex_lerobot.recording.lerobot_dataset import read_depth_video
from teledex_lerobot.recording.recorder import Recorder, TeledexRecordConfig
from teledex_lerobot.storage.native import load_native_episode, native_episode_dirs
from teledex_lerobot.storage.teledex_columns import SIDECAR_DIR
from teledex_lerobot.world.world import LOCKSTEP, WorldConfig

FPS, WIDTH, HEIGHT = 25, 160, 120
COLOUR, DEPTH = "observation.images.top", "observation.images.top_depth"
NEAR_M, FAR_M = 0.1, 3.0  # teledex-convert to-training's defaults
# lerobot-train as docs/recording.md gives it, offline, with policies small enough for a few CPU steps
TRAIN = ("--policy.device=cpu", "--policy.push_to_hub=false", "--policy.pretrained_backbone_weights=null",
         "--steps=2", "--batch_size=2", "--log_freq=1", "--save_freq=2", "--num_workers=0", "--wandb.enable=false")
TINY_ACT = ("--policy.type=act", "--policy.chunk_size=10", "--policy.n_action_steps=10", "--policy.dim_model=64",
            "--policy.dim_feedforward=128", "--policy.n_heads=2", "--policy.n_encoder_layers=1",
            "--policy.n_decoder_layers=1")
TINY_DIFFUSION = ("--policy.type=diffusion", "--policy.horizon=8", "--policy.n_action_steps=4",
                  "--policy.drop_n_last_frames=3", "--policy.down_dims=[32,64]",
                  "--policy.diffusion_step_embed_dim=32")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """The dataset's root, and what teledex-record printed."""
    root = tmp_path_factory.mktemp("depth_training") / "world"
    camera = TeledexWorldCameraConfig(view="oblique", width=WIDTH, height=HEIGHT, fps=FPS, use_depth=True)
    robot = TeledexConfig(backend="mujoco", preset_cameras=False, cameras={"top": camera},
                          world=WorldConfig(seed=0, clock=LOCKSTEP))
    dataset = DatasetRecordConfig(repo_id="local/rgbd", root=str(root), single_task="cube", fps=FPS,
                                  episode_time_s=1.0, reset_time_s=0, num_episodes=2, push_to_hub=False)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        Recorder(TeledexRecordConfig(robot=robot, teleop=TeledexWorldExpertConfig(), settle_s=-1,
                                     dataset=dataset)).run()
    return root, printed.getvalue()


@pytest.fixture(scope="module")
def training(recorded, tmp_path_factory):
    root, _ = recorded
    target = tmp_path_factory.mktemp("training") / "world_training"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        convert.main(["to-training", str(root), str(target)])
    return target, printed.getvalue()


def test_the_rendering_tells_nothing_seen_from_every_depth():
    depth_mm = np.array([[0, 50, 100, 300], [1000, 2500, 3000, 9000]], dtype=np.uint16)
    grey = render_depth(depth_mm, NEAR_M, FAR_M)
    assert grey.shape == (2, 4, 3) and grey.dtype == np.uint8
    assert np.array_equal(grey[..., 0], grey[..., 1]) and np.array_equal(grey[..., 0], grey[..., 2])
    values = grey[..., 0].ravel()
    assert values[0] == 0  # nothing seen: black
    assert values[1] == values[2] == 255  # near_m and nearer
    assert values[6] == values[7] == RENDER_FLOOR  # far_m and farther
    assert np.all(np.diff(values[2:7].astype(int)) < 0)  # nearer is brighter
    # log: the same ratio of distances, the same step of grey
    steps = render_depth(np.array([[200, 400, 800]]), NEAR_M, FAR_M)[0, :, 0].astype(int)
    assert abs((steps[0] - steps[1]) - (steps[1] - steps[2])) <= 1


def test_teledex_record_says_how_to_train_on_depth(recorded):
    _, printed = recorded
    assert "Depth (observation.images.top_depth) is LeRobot's 1-channel depth feature" in printed
    assert "teledex-convert to-training" in printed and "remove_feature" in printed


def test_the_training_copy_renders_depth_and_keeps_everything_else(recorded, training):
    root, _ = recorded
    target, printed = training
    assert f"{DEPTH}: rendered for training (3-channel grey, 0.1..3.0 m;" in printed
    info = json.loads((target / "meta" / "info.json").read_text())
    feature = info["features"][DEPTH]
    assert feature["shape"] == [HEIGHT, WIDTH, 3] and feature["dtype"] == "video"
    assert feature["info"]["is_depth_map"] is False and feature["info"]["video.channels"] == 3
    assert feature["info"][DEPTH_RENDERING]["near_m"] == NEAR_M and feature["info"][DEPTH_RENDERING]["far_m"] == FAR_M
    original, copy = LeRobotDataset("local/rgbd", root=root), LeRobotDataset("local/rgbd_training", root=target)
    assert copy.meta.depth_keys == [] and copy.meta.total_episodes == 2 and len(copy) == len(original)
    for i in (0, FPS - 1, FPS, len(copy) - 1):  # both episodes' first and last frames
        depth_mm = original[i][DEPTH].numpy()[0]  # float millimetres; nothing seen decodes as depth_min, 10 mm
        nothing = depth_mm <= 10
        assert 0.1 < nothing.mean() < 0.5  # the world's sky
        grey = (copy[i][DEPTH].numpy() * 255).round()  # (3, H, W) in [0, 1], as lerobot-train gets it
        assert grey.shape == (3, HEIGHT, WIDTH)
        assert np.all(grey[:, nothing] == 0)
        assert grey[:, ~nothing].min() >= RENDER_FLOOR - 1  # the YUV round trip: within one level
        expected = render_depth(np.where(nothing, 0, depth_mm), NEAR_M, FAR_M).transpose(2, 0, 1)
        assert np.abs(grey - expected).max() <= 1
        assert np.array_equal(copy[i][COLOUR].numpy(), original[i][COLOUR].numpy())
    for path in [*(root / "videos" / COLOUR).rglob("*.mp4"), *(root / SIDECAR_DIR).iterdir()]:  # byte for byte
        assert path.read_bytes() == (target / path.relative_to(root)).read_bytes()
    stats = json.loads((target / "meta" / "stats.json").read_text())[DEPTH]
    assert np.shape(stats["mean"]) == (3, 1, 1) and stats["min"] == [[[0.0]]] * 3
    assert 0.2 < stats["mean"][0][0][0] < 0.8
    for path in (target / "meta" / "episodes").rglob("*.parquet"):
        assert np.shape(pq.read_table(path).column(f"stats/{DEPTH}/mean").to_pylist()[0]) == (3, 1, 1)
    assert json.loads((root / "meta" / "info.json").read_text())["features"][DEPTH]["shape"] == [HEIGHT, WIDTH, 1]


def test_to_training_refuses_in_one_line(recorded, training, tmp_path, capsys):
    root, _ = recorded
    target, _ = training
    for argv, message in (
            ([str(root), str(tmp_path / "a"), "--near-m", "2", "--far-m", "1"], "--near-m 2.0 and --far-m 1.0"),
            ([str(target), str(tmp_path / "b")], "has no depth feature"),
            ([str(root), str(target)], "exists and is not empty")):
        with pytest.raises(SystemExit) as end:
            convert.main(["to-training", *argv])
        err = capsys.readouterr().err.strip()
        assert end.value.code == 2 and len(err.splitlines()) == 1 and message in err, err
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_the_vitra_export_carries_depth(recorded, tmp_path, capsys):
    root, _ = recorded
    native = Path(f"{root}_native")
    convert.main(["to-vitra", str(native), str(tmp_path / "vitra")])
    printed = capsys.readouterr().out
    # nothing is left out silently: the world's state has no place in VITRA's layout
    assert "not exported, VITRA's layout has no place for them (one camera and its depth): environment_state" in printed
    for folder in native_episode_dirs(native):
        episode = load_native_episode(folder)
        exported = tmp_path / "vitra" / f"{folder.name}.h5"
        assert not vitra_problems(exported)
        recorded_mm = np.stack(list(read_depth_video(episode.video_path("top_depth"), episode.depth["top_depth"])))
        with h5py.File(exported) as h5:
            depth = h5["observation/camera/depth"]
            assert depth.dtype == np.uint16 and depth.shape == (len(episode.telemetry["qpos"]), HEIGHT, WIDTH)
            assert (depth.attrs["unit"], depth.attrs["nothing_seen"], depth.attrs["stream"]) == ("mm", 0, "top_depth")
            values = depth[()]
        nothing = recorded_mm[..., 0] == 10  # LeRobot's depth_min: what it makes of nothing seen
        assert 0.1 < nothing.mean() < 0.5
        assert np.all(values[nothing] == 0)
        assert np.array_equal(values[~nothing], recorded_mm[..., 0][~nothing])


def train(dataset: Path, output: Path, *policy: str) -> subprocess.CompletedProcess:
    return subprocess.run(command("lerobot-train", "--dataset.repo_id=local/rgbd", f"--dataset.root={dataset}",
                                  *policy, *TRAIN, f"--output_dir={output}"),
                          env={**command_env(output.parent), "OMP_NUM_THREADS": "1"}, capture_output=True,
                          text=True, timeout=600, stdin=subprocess.DEVNULL)


def trained_inputs(output: Path) -> dict:
    model = output / "checkpoints" / "000002" / "pretrained_model"
    assert (model / "model.safetensors").is_file()
    return json.loads((model / "config.json").read_text())["input_features"]


@pytest.mark.slow
def test_act_stops_on_the_recorded_depth_feature(recorded, tmp_path):
    """Why the copy exists: LeRobot 0.6.1's ACT feeds the 1-channel depth map to its 3-channel ResNet."""
    root, _ = recorded
    done = train(root, tmp_path / "act", *TINY_ACT)
    assert done.returncode != 0 and "to have 3 channels, but got 1 channels" in done.stderr, done.stderr[-2000:]


@pytest.mark.slow
@pytest.mark.parametrize("policy", [TINY_ACT, TINY_DIFFUSION], ids=["act", "diffusion"])
def test_act_and_diffusion_train_on_the_training_copy(training, tmp_path, policy):
    target, _ = training
    done = train(target, tmp_path / "out", *policy)
    assert done.returncode == 0, done.stderr[-4000:]
    inputs = trained_inputs(tmp_path / "out")
    assert inputs[DEPTH] == {"type": "VISUAL", "shape": [3, HEIGHT, WIDTH]}  # depth is one of the policy's inputs
    assert inputs[COLOUR] == {"type": "VISUAL", "shape": [3, HEIGHT, WIDTH]}


@pytest.mark.slow
def test_dropping_depth_as_documented_trains_act(recorded, tmp_path):
    root, _ = recorded
    run(command("lerobot-edit-dataset", "--repo_id=local/rgbd", f"--root={root}", f"--new_root={tmp_path / 'rgb'}",
                "--operation.type=remove_feature", f"--operation.feature_names=['{DEPTH}']"), tmp_path)
    done = train(tmp_path / "rgb", tmp_path / "act", *TINY_ACT)
    assert done.returncode == 0, done.stderr[-4000:]
    assert DEPTH not in trained_inputs(tmp_path / "act") and COLOUR in trained_inputs(tmp_path / "act")
