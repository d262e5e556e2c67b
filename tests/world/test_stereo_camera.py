"""A stereo camera pair rendered by the MuJoCo world (stereo_baseline_m): one side-by-side frame, left eye | right
eye, as a ZED camera delivers it. Its geometry is MuJoCo's own stereo (the camera's ipd), checked against the
pinhole model: a point at depth z shows fx * baseline / z pixels farther left in the right eye, and where the
recorded calibration (the left eye's intrinsics and pose, the right eye the baseline along its x) puts it. A camera
without a baseline renders exactly as before. The calibration goes to camera_info.json and to the headset page."""

import json

import mujoco
import numpy as np
import pytest

from lerobot_robot_teledex import (
    Teledex,
    TeledexConfig,
    TeledexRenderCamera,
    TeledexRenderCameraConfig,
    TeledexWorldCameraConfig,
)
from lerobot_robot_teledex.cameras.camera_info import stream_infos
from teledex_lerobot.errors import ConfigError
from teledex_lerobot.geometry.camera import CameraInfo
from teledex_lerobot.presets import load_preset
from teledex_lerobot.rig import Rig
from teledex_lerobot.storage import native
from teledex_lerobot.storage.frame import FrameLayout, RecordedFrame
from teledex_lerobot.storage.native import NativeFormatError, NativeSink, load_native_episode
from teledex_lerobot.storage.sink import EpisodeHeader
from teledex_lerobot.sync import SyncPolicy, validate_timestamps
from teledex_lerobot.viewer.headset import camera_header
from teledex_lerobot.world.camera import WorldRenderer
from teledex_lerobot.world.world import LOCKSTEP, World, WorldConfig

WIDTH, HEIGHT = 320, 240  # each eye's
BASELINE_M = 0.063


@pytest.fixture(scope="module")
def world():
    """The task's layout with the arm turned out of the top view; a camera and a stereo pair at the same place."""
    rig = Rig.from_preset(load_preset("piper_linkerhand_o6_single"))
    world = World(rig, WorldConfig(task="cube_assembly"), {"one": "top", "pair": "top"}, {"pair": BASELINE_M})
    world.reset(0)
    world.data.qpos[world.model.joint(f"arm/{rig.parts['arm'].joints[0]}").qposadr[0]] = 1.2
    return world


def green(image: np.ndarray) -> np.ndarray:
    """Where the green half is (the only green in the top view)."""
    r, g, b = np.moveaxis(image.astype(int), -1, 0)
    mask = (g - r > 60) & (g - b > 30)
    assert mask.sum() > 100
    return mask


def green_centroid(image: np.ndarray) -> np.ndarray:
    v, u = np.nonzero(green(image))
    return np.array([u.mean(), v.mean()])


def test_the_right_eye_sees_a_point_shifted_left_by_its_disparity_where_the_calibration_puts_it(world):
    one, pair = WorldRenderer(world, "one", WIDTH, HEIGHT), WorldRenderer(world, "pair", WIDTH, HEIGHT)
    try:
        image, depth = one.render_rgbd()
        frame = pair.render()
        left_pose, centre_pose = pair.base_from_camera, one.base_from_camera
    finally:
        one.close()
        pair.close()
    assert frame.shape == (HEIGHT, 2 * WIDTH, 3) and pair.baseline_m == BASELINE_M and one.baseline_m == 0
    centre, left, right = green_centroid(image), green_centroid(frame[:, :WIDTH]), green_centroid(frame[:, WIDTH:])
    k = pair.intrinsics
    z_m = float(np.median(depth[..., 0][green(image)])) / 1000  # its top face, square to the camera (2 mm deep)
    disparity = k.fx * BASELINE_M / z_m  # 28 px at the half's 0.52 m
    assert left[0] - right[0] == pytest.approx(disparity, abs=1.0)
    assert left[0] - centre[0] == pytest.approx(disparity / 2, abs=0.5)  # the eyes either side of the camera
    assert left[1] == pytest.approx(right[1], abs=0.2) == pytest.approx(centre[1], abs=0.2)  # no vertical shift
    # the recorded calibration: the left eye's pose is the camera's moved half the baseline along its x; the half's
    # centre, seen by the camera, projected with it (and, the baseline along x, into the right eye's half)
    np.testing.assert_allclose(np.linalg.inv(centre_pose) @ left_pose[:, 3], [-BASELINE_M / 2, 0, 0, 1], atol=1e-9)
    seen = centre_pose @ [*(z_m * np.array([(centre[0] - k.cx) / k.fx, (centre[1] - k.cy) / k.fy, 1.0])), 1.0]
    in_left = (np.linalg.inv(left_pose) @ seen)[:3]
    for point, offset, centroid in ((in_left, 0, left), (in_left - [BASELINE_M, 0, 0], WIDTH, right)):
        projected = [k.fx * point[0] / point[2] + k.cx + offset, k.fy * point[1] / point[2] + k.cy]
        np.testing.assert_allclose(projected, centroid + [offset, 0], atol=0.5)


def test_a_camera_without_a_baseline_renders_as_mujocos_default_camera_did(world):
    """It is written with ipd 0: MuJoCo's default ipd (0.068) put its eyes apart, and a mono render their average."""
    renderer = WorldRenderer(world, "one", WIDTH, HEIGHT)
    try:
        ours = renderer.render()
    finally:
        renderer.close()
    model = mujoco.MjModel.from_xml_string(world.xml.replace(' ipd="0.0"', ""))
    assert model.camera("one").ipd[0] == pytest.approx(0.068)
    data = mujoco.MjData(model)
    data.qpos[:] = world.data.qpos
    mujoco.mj_kinematics(model, data)
    mujoco.mj_camlight(model, data)
    with mujoco.Renderer(model, HEIGHT, WIDTH) as before:
        for flag in (mujoco.mjtRndFlag.mjRND_SHADOW, mujoco.mjtRndFlag.mjRND_REFLECTION):
            before.scene.flags[flag] = False
        before.update_scene(data, camera="one")
        assert np.array_equal(ours, before.render())


@pytest.mark.parametrize("baseline", [-0.06, 63.0, float("nan")])
def test_a_baseline_that_is_no_stereo_cameras_is_refused_naming_the_field(baseline):
    for config in (TeledexRenderCameraConfig, TeledexWorldCameraConfig):
        with pytest.raises(ConfigError, match=r"stereo_baseline_m=.*distance between its eyes in metres"):
            config(view="top", stereo_baseline_m=baseline)


def test_a_stereo_pair_has_no_depth_map_and_the_stick_figure_no_pair():
    with pytest.raises(ConfigError, match="use_depth with stereo_baseline_m=0.063.*use_depth=false"):
        TeledexWorldCameraConfig(view="top", use_depth=True, stereo_baseline_m=0.063)
    with pytest.raises(ConfigError, match="stick-figure camera draws one view.*teledex_world"):
        TeledexRenderCamera(TeledexRenderCameraConfig(view="top", stereo_baseline_m=0.063))


def test_the_headset_header_says_stereo_and_a_single_camera_does_not():
    pair = CameraInfo(2 * WIDTH, HEIGHT, 200.0, 200.0, 159.5, 119.5, stereo_baseline_m=BASELINE_M)
    assert camera_header("top", pair)["stereo"] == {"baseline_m": BASELINE_M}
    assert camera_header("top", pair)["width"] == 2 * WIDTH  # the frame's: both eyes
    assert "stereo" not in camera_header("top", CameraInfo(WIDTH, HEIGHT, 200.0, 200.0, 159.5, 119.5))


def test_a_recorded_pair_keeps_its_calibration_in_camera_info_json(tmp_path):
    """The robot's stereo camera: its frame both eyes wide, its calibration (the left eye's, and the baseline) into
    a native episode and back; a reader refuses a baseline that is no distance."""
    eye_width, height = 160, 120
    camera = TeledexWorldCameraConfig(view="top", width=eye_width, height=height, fps=25, stereo_baseline_m=BASELINE_M)
    robot = Teledex(TeledexConfig(backend="mujoco", preset_cameras=False, cameras={"top": camera},
                                  world=WorldConfig(seed=0, clock=LOCKSTEP)))
    assert robot.observation_features["top"] == (height, 2 * eye_width, 3)
    robot.connect()
    try:
        images = []
        for _ in range(3):
            images.append(robot.get_observation()["top"])
            robot.world.advance(40_000_000)
        infos = stream_infos(robot.cameras)
    finally:
        robot.disconnect()
    info = infos["top"]
    assert images[0].shape == (height, 2 * eye_width, 3)
    assert (info.width, info.height, info.stereo_baseline_m) == (2 * eye_width, height, BASELINE_M)
    assert (info.cx, info.cy) == ((eye_width - 1) / 2, (height - 1) / 2)  # the left eye's
    assert camera_header("top", info)["stereo"] == {"baseline_m": BASELINE_M}

    layout = FrameLayout(state_names=("a",), action_names=("a",), tactile_names=(), cameras={"top": images[0].shape},
                         source_names=("top",), fps=25)
    sink = NativeSink(tmp_path / "session", layout, infos)
    header = EpisodeHeader.new(0, "test")
    sink.begin(header)
    for t, image in enumerate(images):
        now = 1_000_000_000 + t * 40_000_000
        sink.add(RecordedFrame(np.zeros(1), np.zeros(1), np.zeros(0), {"top": image},
                               validate_timestamps({"top": now}, now, SyncPolicy())))
    sink.stage({"episode": {"task_name": "test", "episode_uuid": header.episode_uuid}})
    sink.commit()
    assert load_native_episode(sink.final_dir).camera_info["top"] == info

    stored = json.loads((sink.final_dir / "camera_info.json").read_text())
    stored["top"]["stereo_baseline_m"] = -BASELINE_M
    (tmp_path / "bad.json").write_text(json.dumps(stored))
    with pytest.raises(NativeFormatError, match="stereo_baseline_m -0.063, not a positive number of metres"):
        native._camera_info(tmp_path / "bad.json", "fix")
