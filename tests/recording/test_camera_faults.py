"""Cameras are devices: a camera lost (its read fails) or stalled (its newest frame older than
--robot.camera_stall_ms) is a device fault like an arm's. The episode in progress is kept up to the fault and marked
(device_fault, its stream without a capture time: not sync-valid), the fault policy handles it, the message names
the camera and the fix, and a camera that comes back re-arms (a lost one is reconnected).

In-process, the simulated cameras playing each fault on the test's word (simulate_fault) at chosen control ticks:
losses on the fake backend with a camera capturing in its own thread (a lost camera's next read fails, whatever the
clock), stalls in a lockstep MuJoCo world (the world's clock ages the camera's frame by one control period per tick,
so every count is exact). docs/recording.md's table of camera faults is these tests' numbers.
"""

import signal
from pathlib import Path

import numpy as np
import pytest
from lerobot.configs.dataset import DatasetRecordConfig
from test_fault_recording import Keys, lerobot_rows, native_episodes
from test_recorder import at_ticks, press  # the control loop's ticks (every tick counts, recorded or not)

from lerobot_robot_teledex import TeledexConfig, TeledexRenderCameraConfig, TeledexWorldCameraConfig
from lerobot_teleoperator_teledex import TeledexReplayConfig
from lerobot_teleoperator_teledex.world_expert import TeledexWorldExpertConfig
from teledex_lerobot.cli.errors import run_command
from teledex_lerobot.recording import recorder as record_module
from teledex_lerobot.recording.recorder import Recorder, TeledexRecordConfig
from teledex_lerobot.world.world import WorldConfig

FPS = 25
SIMULATED_DEATH_ERROR = "TeledexRenderCamera(front) cannot render: RuntimeError: its capture failed (simulated)"


def camera_recorder(root: Path, episodes: int, keys: Keys | None, monkeypatch, world: bool = False,
                    **extra) -> Recorder:
    """One 160x120 camera named front: on the fake backend, or in a lockstep world driven by its scripted expert."""
    monkeypatch.setattr(record_module, "create_key_listener", keys.listener if keys else lambda *a, **k: None)
    if world:
        robot = TeledexConfig(backend="mujoco", preset_cameras=False, world=WorldConfig(clock="lockstep"),
                              cameras={"front": TeledexWorldCameraConfig(view="front", width=160, height=120,
                                                                         fps=FPS)})
        teleop = TeledexWorldExpertConfig()
    else:
        robot = TeledexConfig(backend="fake", cameras={"front": TeledexRenderCameraConfig(
            view="front", width=160, height=120, fps=FPS)})
        teleop = TeledexReplayConfig()
    return Recorder(TeledexRecordConfig(
        robot=robot, teleop=teleop,
        dataset=DatasetRecordConfig(repo_id="local/cameras", root=str(root), single_task="grasp", fps=FPS,
                                    episode_time_s=30, reset_time_s=0, num_episodes=episodes, push_to_hub=False),
        **extra))


def simulate(recorder: Recorder, fault: str | None):
    return lambda: recorder.robot.robot.cameras["front"].simulate_fault(fault)


def run_headless(recorder: Recorder, capsys) -> tuple[str, str]:
    """teledex-record's run without a keyboard, which ends on a fault nobody can clear: (output, its last line)."""
    with pytest.raises(SystemExit) as exit_:
        run_command("teledex-record", recorder.run)
    assert exit_.value.code == 2
    output, errors = capsys.readouterr()
    assert "Traceback" not in errors, errors[-3000:]
    return output, errors.strip().splitlines()[-1]


def episode_rows(root: Path, index: int):
    rows = lerobot_rows(root)
    return rows[rows["episode_index"] == index]


def test_a_camera_dying_mid_episode_keeps_the_episode_up_to_the_fault(tmp_path, monkeypatch, capsys):
    recorder = camera_recorder(tmp_path / "ds", 2, None, monkeypatch)
    at_ticks(recorder, {10: simulate(recorder, "die")})  # after tick 10's observation: tick 11's read fails
    output, last = run_headless(recorder, capsys)
    assert "Episode 0: stopped by a device fault (front), its frames marked from frame 10" in output, last
    message = f"camera front lost: {SIMULATED_DEATH_ERROR}"
    assert f"DEVICE FAULT: front: {message}" in output
    # one line naming the camera, what happened and the fix
    assert last.startswith(f"teledex-record: error: the session ended with device faults nobody cleared (front: "
                           f"{message}") and "re-arming reconnects it" in last and "--resume=true" in last
    rows = episode_rows(tmp_path / "ds", 0)
    assert rows["episode_index"].unique().tolist() == [0]  # the episode kept, and nothing after it
    assert rows["device_fault"].tolist() == [False] * 10 + [True]
    assert not rows["sync_valid"].iloc[-1] and (rows["t_front_ns"].to_numpy()[:10] > 0).all()
    assert rows["t_front_ns"].iloc[-1] == -1  # a camera in fault has no capture time
    assert (rows["t_arm_ns"].to_numpy() > 0).all()  # the arm and hand recorded on, measured
    [episode] = native_episodes(tmp_path / "ds_native")
    np.testing.assert_array_equal(episode.telemetry["device_fault"], rows["device_fault"].to_numpy())
    assert episode.metadata["faults"]["front"]["first_frame"] == 10 and \
        episode.metadata["faults"]["front"]["frames"] == 1
    assert episode.metadata["fault_policy"] == {"policy": "stop", "stopped_by_fault": True}


def test_an_unplugged_camera_reconnects_when_it_is_back_and_the_operator_re_arms(tmp_path, monkeypatch, capsys):
    keys = Keys()
    recorder = camera_recorder(tmp_path / "ds", 2, keys, monkeypatch)
    # episode 0: ticks 1-11, the camera unplugged at tick 10; `a` at 20 with it still out (refused: it cannot
    # reconnect), plugged back at 25, `a` at 30 reconnects it; episode 1 is ticks 31-45
    at_ticks(recorder, {10: simulate(recorder, "unplug"), 20: lambda: keys.dispatch("a"),
                        25: simulate(recorder, None), 30: lambda: keys.dispatch("a"), 45: press(recorder, "n")})
    assert recorder.run() == 2 and not recorder.session.unresolved_faults
    output = capsys.readouterr().out
    assert "DEVICE FAULT: front: camera front lost: TeledexRenderCamera(front) is not connected." in output
    assert ("Still in fault: front: camera front lost, and reconnecting failed: TeledexRenderCamera(front): no "
            "camera answers (simulated 'unplug'") in output
    assert "Re-armed: the devices are healthy." in output
    first, second = episode_rows(tmp_path / "ds", 0), episode_rows(tmp_path / "ds", 1)
    assert first["device_fault"].tolist() == [False] * 10 + [True]
    # the reconnected camera records with fresh capture times: its frames are new ones (the first tick may still
    # take the frame from before the unplug: a loaded machine renders the reconnected camera's next frame later than
    # the robot waits for it, CAMERA_WAIT_MS, and the sync check judges that frame's age)
    captured = second["t_front_ns"].to_numpy()
    assert not second["device_fault"].any() and len(second) == 15 and (captured > 0).all()
    assert np.all(np.diff(captured) >= 0) and (captured[1:] > first["t_front_ns"].iloc[9]).all()
    assert [bool(e.metadata["faults"]) for e in native_episodes(tmp_path / "ds_native")] == [True, False]


# Lockstep, a 25 fps camera in a 25 Hz loop: stalled after tick 10's frame (frame 9), its frame is one tick old at
# frame 10 (within its period: not in fault), two at frame 11 (the cause: marked from there), and past the default
# camera_stall_ms (2000) at tick 10 + 51, frame 60, when the fault latches.
STALL_FIRST_MARKED, STALL_DETECTED = 11, 60


def test_a_camera_stalled_for_good_stops_the_episode_marked_from_its_stall(tmp_path, monkeypatch, capsys):
    recorder = camera_recorder(tmp_path / "ds", 2, None, monkeypatch, world=True)
    at_ticks(recorder, {10: simulate(recorder, "stall")})
    output, last = run_headless(recorder, capsys)
    assert f"Episode 0: stopped by a device fault (front), its frames marked from frame {STALL_FIRST_MARKED}" in output
    assert "camera front stalled: no new frame for 2.0 s (limit --robot.camera_stall_ms=2000)" in last
    assert "raise --robot.camera_stall_ms" in last
    rows = episode_rows(tmp_path / "ds", 0)
    assert rows["device_fault"].tolist() == [False] * STALL_FIRST_MARKED + [True] * (
        STALL_DETECTED + 1 - STALL_FIRST_MARKED)
    stamps = rows["t_front_ns"].to_numpy()
    assert (stamps[STALL_FIRST_MARKED:] == -1).all() and stamps[10] == stamps[9] > 0  # frame 10: the old frame
    assert not rows["sync_valid"].to_numpy()[STALL_FIRST_MARKED:].any()
    [episode] = native_episodes(tmp_path / "ds_native")
    assert episode.metadata["faults"]["front"]["first_frame"] == STALL_FIRST_MARKED


def test_a_camera_stalled_3_s_is_re_armed_once_it_delivers_again(tmp_path, monkeypatch, capsys):
    keys = Keys()
    recorder = camera_recorder(tmp_path / "ds", 2, keys, monkeypatch, world=True)
    # stalled from tick 10 for 3 s (75 ticks): latched at tick 61 (episode 0 stops), `a` at 70 refused (still no
    # frame), the camera delivers again from tick 86, `a` at 90 re-arms; episode 1 is ticks 91-105
    at_ticks(recorder, {10: simulate(recorder, "stall"), 70: lambda: keys.dispatch("a"),
                        85: simulate(recorder, None), 90: lambda: keys.dispatch("a"), 105: press(recorder, "n")})
    assert recorder.run() == 2 and not recorder.session.unresolved_faults
    output = capsys.readouterr().out
    assert "Still in fault: front: camera front stalled" in output and "Re-armed: the devices are healthy." in output
    first, second = episode_rows(tmp_path / "ds", 0), episode_rows(tmp_path / "ds", 1)
    assert len(first) == STALL_DETECTED + 1 and int(first["device_fault"].to_numpy().argmax()) == STALL_FIRST_MARKED
    assert len(second) == 15 and not second["device_fault"].any() and second["sync_valid"].all()


def test_keep_and_mark_records_on_past_a_stall(tmp_path, monkeypatch, capsys):
    recorder = camera_recorder(tmp_path / "ds", 1, None, monkeypatch, world=True, fault_policy="keep-and-mark")
    at_ticks(recorder, {10: simulate(recorder, "stall"), 80: press(recorder, "n")})
    run_headless(recorder, capsys)
    rows = episode_rows(tmp_path / "ds", 0)
    assert len(rows) == 80 and rows["device_fault"].tolist() == [False] * STALL_FIRST_MARKED + [True] * (
        80 - STALL_FIRST_MARKED)


def test_sigterm_while_a_frame_is_stored_keeps_the_episode_it_says_it_kept(tmp_path, monkeypatch, capsys):
    """The stop waits until every sink has the frame: the episode is saved as far as it got and marked, as the
    command's last line says (before: a frame half-handed to the sinks dropped the whole episode)."""
    recorder = camera_recorder(tmp_path / "ds", 1, None, monkeypatch)
    native_add = []

    def add_then_sigterm(frame):  # LeRobot's sink has the frame; SIGTERM lands while the native one takes it
        native_add[0](frame)
        if len(native_add) == 1:
            native_add.append(frame)
            signal.raise_signal(signal.SIGTERM)

    def wrap_native():
        native_add.append(recorder.session.native.add)
        recorder.session.native.add = add_then_sigterm

    at_ticks(recorder, {20: wrap_native})
    with pytest.raises(SystemExit) as exit_:
        run_command("teledex-record", recorder.run)
    assert exit_.value.code == 143
    output, errors = capsys.readouterr()
    assert "Episode 0: interrupted after" in output and "saved and marked" in output
    assert "the episode in progress was saved as far as it got" in errors.strip().splitlines()[-1]
    rows = episode_rows(tmp_path / "ds", 0)
    [episode] = native_episodes(tmp_path / "ds_native")
    assert episode.metadata["interrupted"] == {"signal": "SIGTERM", "frames": len(rows)}
    assert len(episode.telemetry["qpos"]) == len(rows) >= 1
