"""Tactile round trip: a real-backend LinkerHand L10 with its tactile matrices on (our CAN driver against the
in-process simulator on python-can's virtual bus), recorded to both formats, then converted both ways: the taxels
are their own array / feature everywhere, never inside qpos / observation.state, with consistent names and shapes."""

import json

import numpy as np
import pytest
from device_harness import bus_config, unique_channel
from lerobot.configs.dataset import DatasetRecordConfig
from lerobot.datasets import LeRobotDataset

from lerobot_robot_teledex import TeledexHandConfig
from lerobot_robot_teledex.cameras.config_render_camera import TeledexRenderCameraConfig
from lerobot_teleoperator_teledex import TeledexReplayConfig
from teledex_lerobot.devices.linkerhand.config import LinkerHandConfig
from teledex_lerobot.devices.linkerhand.simulator import LinkerHandSimConfig, LinkerHandSimulator
from teledex_lerobot.recording.conversions import lerobot_to_native, native_to_lerobot
from teledex_lerobot.recording.recorder import Recorder, TeledexRecordConfig
from teledex_lerobot.storage.native import load_native_episode, native_episode_dirs

pytestmark = [pytest.mark.slow,
              pytest.mark.filterwarnings("ignore:The .bustype. argument is deprecated:DeprecationWarning")]
ROWS, COLUMNS = 12, 6  # the L10's matrix per finger
FINGERS = ("thumb", "index", "middle", "ring", "pinky")


def test_tactile_in_both_formats_and_through_both_conversions(tmp_path):
    channel = unique_channel("tactile")
    simulator = LinkerHandSimulator(LinkerHandSimConfig(model="linkerhand_l10", channel=channel)).start()
    try:
        robot = TeledexHandConfig(model="linkerhand_l10", backend="real",
                                  real=bus_config(hand_channel=channel, linkerhand=LinkerHandConfig(tactile=True)),
                                  cameras={"top": TeledexRenderCameraConfig(width=64, height=48, fps=25)})
        dataset = DatasetRecordConfig(repo_id="local/tactile", root=str(tmp_path / "ds"), single_task="grasp",
                                      fps=25, episode_time_s=3, reset_time_s=0, num_episodes=1,
                                      push_to_hub=False)
        Recorder(TeledexRecordConfig(robot=robot, teleop=TeledexReplayConfig(replay_file="open_close"),
                                     dataset=dataset)).run()
    finally:
        simulator.stop()

    episode = load_native_episode(native_episode_dirs(tmp_path / "ds_native")[0], verify_checksums=True)
    t = episode.telemetry
    joints, taxels = episode.names("state_names"), episode.names("tactile_names")
    assert len(taxels) == len(FINGERS) * ROWS * COLUMNS == 360
    assert taxels[0] == "hand_tactile_thumb_r0c0" and taxels[-1] == f"hand_tactile_pinky_r{ROWS - 1}c{COLUMNS - 1}"
    assert joints == episode.names("action_names") and len(joints) == 10 and not set(joints) & set(taxels)
    frames = len(t["frame_timestamps_ns"])
    assert t["qpos"].shape == (frames, 10) and t["action"].shape == (frames, 10) and t["tactile"].shape == (frames, 360)
    assert t["tactile"].max() > 0  # the simulated hand touched something: real readings, not zero fill
    metadata = episode.metadata
    assert metadata["collection"]["tactile_sensors"] == ["hand"] and metadata["collection"]["tactile_dim"] == 360
    assert metadata["collection"]["qpos_dim"] == 10

    lerobot = LeRobotDataset("local/tactile", root=tmp_path / "ds")
    assert lerobot.features["observation.state"]["names"] == joints
    assert lerobot.features["observation.tactile"]["names"] == taxels
    assert tuple(lerobot.features["observation.tactile"]["shape"]) == (360,)
    item = lerobot[frames - 1]
    assert item["observation.state"].shape == (10,) and item["observation.tactile"].shape == (360,)
    assert np.array_equal(np.stack(lerobot.hf_dataset["observation.tactile"]), t["tactile"])

    lerobot_to_native(tmp_path / "ds", tmp_path / "back_native", progress=lambda _: None)
    native_to_lerobot(tmp_path / "back_native", tmp_path / "back_lerobot", "local/back", progress=lambda _: None)
    back = load_native_episode(native_episode_dirs(tmp_path / "back_native")[0])
    for key in t:
        assert np.array_equal(back.telemetry[key], t[key]), key
    assert back.episode_uuid == episode.episode_uuid and back.metadata == metadata
    again = LeRobotDataset("local/back", root=tmp_path / "back_lerobot")
    for key in ("observation.state", "observation.tactile", "action"):
        assert again.features[key]["names"] == lerobot.features[key]["names"]
        assert np.array_equal(np.stack(again.hf_dataset[key]), np.stack(lerobot.hf_dataset[key])), key
    info = json.loads((tmp_path / "back_lerobot" / "meta" / "info.json").read_text())
    assert info["features"]["observation.state"]["shape"] == [10]
