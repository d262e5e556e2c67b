"""A real station's timing in the world, on demand (issue 32 part 2: teledex_lerobot/world/station_timing.py): camera
frames and joint measurements reach the reader late, in order, some frames never; stamps stay the captures'; the
settings are seeded and recorded, and the recorder's sync validation sees the lag in the recorded stamps."""

import json

import numpy as np
import pyarrow.parquet as pq
import pytest
from lerobot.configs.dataset import DatasetRecordConfig

from lerobot_robot_teledex import TeledexConfig, TeledexWorldCameraConfig
from lerobot_robot_teledex.cameras.world_camera import TeledexWorldCamera
from lerobot_teleoperator_teledex.world_expert import TeledexWorldExpertConfig
from teledex_lerobot.devices.simulated import SimDynamicsConfig
from teledex_lerobot.errors import ConfigError
from teledex_lerobot.presets import load_preset
from teledex_lerobot.recording.recorder import Recorder, TeledexRecordConfig
from teledex_lerobot.rig import Rig
from teledex_lerobot.storage.sync_readers import sync_from_lerobot, sync_from_native
from teledex_lerobot.world.devices import WorldJointDevice, WorldRunner
from teledex_lerobot.world.station_timing import StationTimingConfig, Transport
from teledex_lerobot.world.world import LOCKSTEP, World, WorldConfig

TICK_NS = 40_000_000  # 25 Hz


def test_the_link_delivers_late_in_order_and_loses_what_it_drops():
    link = Transport(latency_ms=30.0, jitter_ms=20.0, drop=0.0, seed=1, name="camera")
    for index in range(50):
        link.send(index, index * TICK_NS)
    arrived = [link.arrived(t * 10_000_000) for t in range(250)]
    delivered = [item for items in arrived for item in items]
    assert delivered == list(range(50))  # every item, in order, whatever the jitter
    first_seen = {item: t for t, items in enumerate(arrived) for item in items}
    assert all(first_seen[i] * 10_000_000 >= i * TICK_NS for i in range(50))  # never before its capture
    lossy = Transport(latency_ms=0.0, jitter_ms=0.0, drop=0.25, seed=2, name="camera")
    for index in range(400):
        lossy.send(index, 0)
    assert len(lossy.arrived(0)) + lossy.lost == 400 and 70 <= lossy.lost <= 130


@pytest.mark.parametrize(("field", "value", "says"), [("camera_latency_ms", -5.0, "delays and rates are >= 0"),
                                                      ("camera_drop", 1.0, "0 <= p < 1")])
def test_bad_timing_is_refused_naming_the_setting(field, value, says):
    with pytest.raises(ConfigError, match=f"world.timing.{field}={value}.*{says}"):
        WorldConfig(timing=StationTimingConfig(**{field: value})).validate()


def lockstep_world(timing: StationTimingConfig) -> tuple[WorldRunner, dict[str, WorldJointDevice], World]:
    rig = Rig.from_preset(load_preset("piper_linkerhand_o6_single"))
    world = World(rig, WorldConfig(clock=LOCKSTEP, timing=timing), {"top": "top"})
    runner = WorldRunner(world, lockstep=True)
    devices = {role: WorldJointDevice(runner, role, SimDynamicsConfig(noise_std=0.0), 100.0) for role in rig.parts}
    return runner, devices, world


def test_joint_measurements_are_read_the_configured_latency_after_their_capture():
    lags = {}
    for latency_ms in (0.0, 25.0):
        runner, devices, _ = lockstep_world(StationTimingConfig(joint_latency_ms=latency_ms))
        runner.start()
        runner.reset_episode(0)
        lag = []
        for _ in range(20):
            runner.advance(TICK_NS)
            lag.append((runner.clock.now_ns() - devices["arm"].read().capture_ns) / 1e6)
        lags[latency_ms] = lag[5:]
        runner.stop()
    assert max(lags[0.0]) < 10.0  # the newest measurement at the 100 Hz feedback rate
    assert all(25.0 <= lag < 25.0 + 10.0 for lag in lags[25.0])


def test_a_lockstep_camera_shows_frames_the_configured_latency_old_and_keeps_the_last_when_one_is_lost():
    runner, _, _ = lockstep_world(StationTimingConfig(camera_latency_ms=100.0, camera_drop=0.3, seed=3))
    camera = TeledexWorldCamera(TeledexWorldCameraConfig(view="top", width=32, height=24, fps=25))
    camera.attach_world(runner)
    runner.start()
    runner.reset_episode(0)
    camera.connect()
    lags = []
    for _ in range(60):
        runner.advance(TICK_NS)
        camera.async_read()
        lags.append((runner.clock.now_ns() - camera.capture_ns) / 1e6)
    camera.disconnect()
    runner.stop()
    lags = np.array(lags[10:])
    assert lags.min() >= 100.0  # nothing newer than the link's latency
    assert np.sum(np.isclose(lags, 120.0)) > 20  # most ticks: the frame captured 3 ticks ago (the next is 80 ms old)
    assert lags.max() >= 160.0  # a lost frame: the reader keeps the one before, one tick older


def test_the_recorder_sees_the_lag_and_records_the_timing(tmp_path):
    """teledex-record in a lockstep world with a station's camera latency and input stalls: the frames' camera stamps
    are that much older than the frame, the input's stop while it stalls (what the sync validation judges), and each
    episode's metadata says what timing it was recorded with."""
    root = tmp_path / "lagged"
    timing = StationTimingConfig(camera_latency_ms=60.0, joint_latency_ms=8.0, input_stalls_per_min=40.0,
                                 input_stall_ms=400.0, seed=4)
    Recorder(TeledexRecordConfig(
        robot=TeledexConfig(backend="mujoco", preset_cameras=False,
                            cameras={"top": TeledexWorldCameraConfig(view="oblique", width=32, height=24, fps=25)},
                            world=WorldConfig(seed=0, clock=LOCKSTEP, timing=timing)),
        teleop=TeledexWorldExpertConfig(), settle_s=-1,
        dataset=DatasetRecordConfig(repo_id="local/lagged", root=str(root), single_task="cube", fps=25,
                                    episode_time_s=3.0, reset_time_s=0, num_episodes=1, push_to_hub=False,
                                    video=True))).run()
    (episode,) = sync_from_lerobot(root)
    names = episode.source_names
    stamps = {name: episode.source_timestamps_ns[5:, names.index(name)] for name in ("top", "arm", "input")}
    camera_age_ms = (episode.frame_ns[5:] - stamps["top"]) / 1e6
    assert np.all((camera_age_ms >= 60.0) & (camera_age_ms < 100.0)), camera_age_ms  # the latency, + the frame phase
    # the robot reads its joints nearest the camera's capture (8 ms late, at 100 Hz): so they are as old
    assert np.all(np.abs(stamps["arm"] - stamps["top"]) <= 18e6)
    input_age_ms = (episode.frame_ns[5:] - stamps["input"]) / 1e6
    assert np.all(episode.max_diff_ms[5:][input_age_ms == 0] >= 60.0)  # a fresh input: the sync sees the lag
    stalled = input_age_ms >= 200.0  # the input delivered nothing new for 5 ticks and more
    assert stalled.any() and input_age_ms.max() < 440.0, input_age_ms
    assert not episode.valid[5:][stalled].any()  # a stale input makes the frame invalid
    actions = np.stack(pq.read_table(next((root / "data").glob("*/*.parquet"))).column("action").to_pylist())[5:]
    held = np.flatnonzero(np.diff(stamps["input"]) == 0) + 1  # frames whose input delivered nothing new
    assert len(held) and np.array_equal(actions[held], actions[held - 1])  # the robot was sent the same action
    native = sync_from_native(root.parent / f"{root.name}_native")  # the paired native layout: the same stamps
    assert np.array_equal(native[0].source_timestamps_ns, episode.source_timestamps_ns)
    (metadata,) = [json.loads(p.read_text()) for p in (root.parent / f"{root.name}_native").glob("*/*/metadata.json")]
    assert metadata["world"]["timing"]["camera_latency_ms"] == 60.0
