"""teledex-record with backend=real: the composite robot records through the unmodified vendor SDKs (piper_sdk,
linkerbot) against the wire-protocol simulators, with the same features as backend=sim."""

import numpy as np
import pytest
from device_harness import RELAXED_FEEDBACK_TIMEOUT_MS, unique_channel
from lerobot.configs.dataset import DatasetRecordConfig
from lerobot.datasets import LeRobotDataset
from piper_sdk import C_PiperInterface_V2

from lerobot_robot_teledex import TeledexConfig
from lerobot_teleoperator_teledex import TeledexReplayConfig
from teledex_lerobot.can.port import CanPortConfig
from teledex_lerobot.devices.agilex.simulator import PiperSimConfig, PiperSimulator
from teledex_lerobot.devices.linkerhand.simulator import LinkerHandSimConfig, LinkerHandSimulator
from teledex_lerobot.recording.recorder import Recorder, TeledexRecordConfig
from teledex_lerobot.storage.native import load_native_episode, native_episode_dirs

pytestmark = [pytest.mark.slow,
              pytest.mark.filterwarnings("ignore:The .bustype. argument is deprecated:DeprecationWarning")]


def test_records_through_vendor_sdks_like_sim(tmp_path):
    C_PiperInterface_V2._instances.clear()
    arm_channel, hand_channel = unique_channel("rec-arm"), unique_channel("rec-hand")
    piper = PiperSimulator(PiperSimConfig(channel=arm_channel, initial_positions=(0, 1.0, -1.0, 0, 0.6, 0, 0)))
    hand = LinkerHandSimulator(LinkerHandSimConfig(model="linkerhand_o6", channel=hand_channel))
    piper.start()
    hand.start()
    try:
        robot = TeledexConfig(backend="real")
        robot.real.arm = CanPortConfig("virtual", arm_channel)
        robot.real.hand = CanPortConfig("virtual", hand_channel)
        robot.real.feedback_timeout_ms = RELAXED_FEEDBACK_TIMEOUT_MS  # not a fault test: tolerate a loaded CI
        dataset_config = DatasetRecordConfig(repo_id="local/real", root=str(tmp_path / "real"), single_task="grasp",
                                             fps=25, episode_time_s=2, reset_time_s=0, num_episodes=1,
                                             push_to_hub=False)
        Recorder(TeledexRecordConfig(robot=robot, teleop=TeledexReplayConfig(), dataset=dataset_config)).run()
    finally:
        hand.stop()
        piper.stop()
        C_PiperInterface_V2._instances.clear()
    real = LeRobotDataset("local/real", root=tmp_path / "real")
    sim_dataset_config = DatasetRecordConfig(repo_id="local/sim", root=str(tmp_path / "sim"), single_task="grasp",
                                             fps=25, episode_time_s=0.5, reset_time_s=0, num_episodes=1,
                                             push_to_hub=False)
    Recorder(TeledexRecordConfig(robot=TeledexConfig(backend="sim"), teleop=TeledexReplayConfig(),
                                 dataset=sim_dataset_config)).run()
    sim = LeRobotDataset("local/sim", root=tmp_path / "sim")
    assert real.meta.total_episodes == 1 and real.meta.total_frames >= 20  # a rate test it is not
    assert {k: (v["dtype"], tuple(v["shape"]), v.get("names")) for k, v in real.features.items()} == \
        {k: (v["dtype"], tuple(v["shape"]), v.get("names")) for k, v in sim.features.items()}
    episode = load_native_episode(native_episode_dirs(tmp_path / "real_native")[0])
    assert episode.metadata["hardware"]["backend"] == "real"
    # every source stamped every frame (the rate is not judged here: the SDKs, both simulators and the recorder share
    # one interpreter, which starves on a 2-core machine)
    assert np.all(episode.telemetry["source_timestamps_ns"] > 0)
    qpos = episode.telemetry["qpos"]
    assert (qpos.max(axis=0) - qpos.min(axis=0)).max() > 0.05  # the simulated hardware moved
