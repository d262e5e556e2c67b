"""Device faults are part of the data, and a fault decides what happens to the episode (--fault_policy).

In-process, on the fake backend with one device's fault latched and its cause removed at chosen control ticks (no
wall-clock dependence): the fault column in both formats and through both conversions, the stored action the held
target, no frame in fault sync-valid, each policy, the re-arm key refused while the cause is there, the non-zero exit.
Then (slow) teledex-record against teledex-sim in another process (the unmodified vendor SDKs on the teledex
loopback bus) with the simulator killed mid-episode: headless, and with a keyboard that re-arms once it is back.
"""

import subprocess
import sys
import threading

import numpy as np
import pandas as pd
import pytest
from device_harness import RELAXED_FEEDBACK_TIMEOUT_MS, TeledexSimProcess, wait_until
from lerobot.configs.dataset import DatasetRecordConfig
from test_recorder import at_ticks, press  # the control loop's ticks (every tick counts, recorded or not)

from lerobot_robot_teledex import TeledexConfig
from lerobot_teleoperator_teledex import TeledexReplayConfig
from teledex_lerobot.can.port import CanPortConfig
from teledex_lerobot.cli.errors import run_command
from teledex_lerobot.clock import now_ns
from teledex_lerobot.devices.device_fault import FEEDBACK_TIMEOUT, make_fault
from teledex_lerobot.recording import recorder as record_module
from teledex_lerobot.recording.conversions import lerobot_to_native, native_to_lerobot
from teledex_lerobot.recording.loop import RecordingSession
from teledex_lerobot.recording.recorder import Recorder, TeledexRecordConfig
from teledex_lerobot.storage.native import load_native_episode, native_episode_dirs

PULLED = "no feedback for 60 ms (cable pulled by the test)"


class Keys:
    """A keyboard the test presses: create_key_listener's stand-in."""

    def __init__(self):
        self.dispatch = None

    def listener(self, dispatch, **_):
        self.dispatch = dispatch
        return self

    def stop(self):
        pass


class CablePull:
    """One device of the connected robot, its fault latched and its cause removed on the test's word: a latched
    device drops new targets and holds its last one, and clearing re-latches while the cause is there. A silence
    begun before the latch is the fault's cause (since_ns), as a driver detecting it by its timeout reports it."""

    def __init__(self, device):
        self.device, self.cause, self.latched = device, False, False
        self.held, self.dropped, self.since_ns = None, [], None
        command = device.command

        def gated_command(positions):
            if self.latched:
                self.dropped.append(np.array(positions))
            else:
                self.held = np.array(positions)
                command(positions)

        device.command = gated_command
        device.fault = lambda: make_fault(FEEDBACK_TIMEOUT, PULLED, self.since_ns) if self.latched else None
        device.held_target = lambda: self.held if self.latched else None
        device.clear_fault = lambda: setattr(self, "latched", self.cause)

    def go_silent(self):
        self.since_ns = now_ns()

    def pull(self):
        self.cause = self.latched = True
        self.held_at_pull = self.held

    def plug_back(self):
        self.cause, self.since_ns = False, None


def make_recorder(root, episodes: int, keys: Keys | None, monkeypatch, **extra) -> Recorder:
    monkeypatch.setattr(record_module, "create_key_listener", keys.listener if keys else lambda *a, **k: None)
    robot = TeledexConfig(backend="fake")
    robot.cameras = {}
    return Recorder(TeledexRecordConfig(
        robot=robot, teleop=TeledexReplayConfig(),
        dataset=DatasetRecordConfig(repo_id="local/faults", root=str(root), single_task="grasp", fps=25,
                                    episode_time_s=30, reset_time_s=0, num_episodes=episodes, push_to_hub=False),
        **extra))


def hand_pull(recorder: Recorder) -> tuple[list[CablePull], dict]:
    """The hand's cable (pulls[0], from the first tick: the robot is connected then) and the tick script making it."""
    pulls = []
    return pulls, {1: lambda: pulls.append(CablePull(recorder.robot.robot.devices["hand"]))}


def lerobot_rows(root) -> pd.DataFrame:
    return pd.concat([pd.read_parquet(path) for path in sorted((root / "data").rglob("*.parquet"))])


def native_episodes(root):
    return [load_native_episode(folder) for folder in native_episode_dirs(root)]


def test_stop_policy_stops_marks_and_rearms_once_the_cause_is_gone(tmp_path, monkeypatch, capsys):
    keys = Keys()
    recorder = make_recorder(tmp_path / "ds", 2, keys, monkeypatch)
    pulls, script = hand_pull(recorder)
    # episode 0: ticks 1-10; the hand goes silent at tick 7 (frame 6 is checked after that), its fault latches at
    # tick 10 before the send (dropped: frame 9 holds the target); the operator presses `a` at tick 20 with the cable
    # still out (refused), plugs it back at 25 and re-arms at 30; episode 1 is ticks 31-45
    script.update({7: lambda: pulls[0].go_silent(), 10: lambda: pulls[0].pull(), 20: lambda: keys.dispatch("a"),
                   25: lambda: pulls[0].plug_back(),
                   30: lambda: keys.dispatch("a"), 45: press(recorder, "n")})
    at_ticks(recorder, script)
    assert recorder.run() == 2 and not recorder.session.unresolved_faults
    output = capsys.readouterr().out
    assert "Episode 0: stopped by a device fault (hand), its frames marked from frame 6" in output
    assert f"DEVICE FAULT: hand: {PULLED}" in output and f"Still in fault: hand: {PULLED}" in output
    assert "Re-armed: the devices are healthy." in output
    rows = lerobot_rows(tmp_path / "ds")
    first, second = (rows[rows["episode_index"] == i] for i in (0, 1))
    # episode 0 stopped at the latch, every frame since the silence began marked and not sync-valid (the hand has
    # no capture time there); episode 1 is clean
    assert first["device_fault"].tolist() == [False] * 6 + [True] * 4
    assert not first["sync_valid"].to_numpy()[6:].any()  # (before: as the machine's load allows)
    assert (first["t_hand_ns"].to_numpy()[6:] == -1).all() and (first["t_hand_ns"].to_numpy()[:6] > 0).all()
    assert not second["device_fault"].any() and len(second) == 15
    # the stored action of the frame in fault is the target the hand held, not the one the operator asked for
    hand = [i for i, name in enumerate(recorder.layout.action_names) if name.startswith("hand_")]
    stored = np.stack(first["action"].to_numpy())[-1, hand]
    np.testing.assert_allclose(stored, pulls[0].held_at_pull, atol=1e-6)
    assert any(not np.allclose(dropped, stored, atol=1e-6) for dropped in pulls[0].dropped)
    episodes = native_episodes(tmp_path / "ds_native")
    np.testing.assert_array_equal(episodes[0].telemetry["device_fault"], first["device_fault"].to_numpy())
    np.testing.assert_array_equal(episodes[0].telemetry["sync_valid"], first["sync_valid"].to_numpy())
    assert episodes[0].metadata["faults"] == {"hand": {"message": PULLED, "first_frame": 6, "frames": 4}}
    assert episodes[0].metadata["fault_policy"] == {"policy": "stop", "stopped_by_fault": True}
    assert episodes[1].metadata["faults"] == {} and not episodes[1].telemetry["device_fault"].any()
    # the fault column survives both conversions
    native_to_lerobot(tmp_path / "ds_native", tmp_path / "converted", "local/converted", progress=lambda _: None)
    np.testing.assert_array_equal(lerobot_rows(tmp_path / "converted")["device_fault"], rows["device_fault"])
    back = lerobot_to_native(tmp_path / "ds", tmp_path / "back", progress=lambda _: None)
    np.testing.assert_array_equal(load_native_episode(back[0]).telemetry["device_fault"],
                                  episodes[0].telemetry["device_fault"])


@pytest.mark.parametrize("policy, frames", [("stop", 10), ("keep-and-mark", 20)])
def test_without_a_keyboard_the_session_ends_marked_and_exits_with_code_2(tmp_path, monkeypatch, capsys, policy,
                                                                          frames):
    recorder = make_recorder(tmp_path / "ds", 3, None, monkeypatch, fault_policy=policy)
    pulls, script = hand_pull(recorder)
    script.update({10: lambda: pulls[0].pull(), 20: press(recorder, "n")})  # keep-and-mark records on to tick 20
    at_ticks(recorder, script)
    with pytest.raises(SystemExit) as exit_:
        run_command("teledex-record", recorder.run)
    assert exit_.value.code == 2
    output, errors = capsys.readouterr()
    assert "No keyboard to re-arm with: ending the session." in output
    assert "Traceback" not in errors
    assert errors.strip().splitlines()[-1] == (
        "teledex-record: error: the session ended with device faults nobody cleared (hand: "
        f"{PULLED}). The episodes saved are intact and every frame in fault is marked (device_fault); fix the cause, "
        "then record on with --resume=true.")
    rows = lerobot_rows(tmp_path / "ds")
    assert rows["episode_index"].unique().tolist() == [0]  # nothing recorded once the session knew of the fault
    assert rows["device_fault"].tolist() == [False] * 9 + [True] * (frames - 9)
    assert not rows["sync_valid"].to_numpy()[9:].any()
    [episode] = native_episodes(tmp_path / "ds_native")
    assert episode.metadata["fault_policy"] == {"policy": policy, "stopped_by_fault": policy == "stop"}
    assert episode.metadata["faults"]["hand"]["frames"] == frames - 9


def test_rerecord_policy_drops_the_episode_and_records_it_again_after_rearm(tmp_path, monkeypatch, capsys):
    keys = Keys()
    recorder = make_recorder(tmp_path / "ds", 1, keys, monkeypatch, fault_policy="rerecord")
    pulls, script = hand_pull(recorder)
    script.update({10: lambda: pulls[0].pull(), 15: lambda: pulls[0].plug_back(), 20: lambda: keys.dispatch("a"),
                   35: press(recorder, "n")})
    at_ticks(recorder, script)
    assert recorder.run() == 1
    assert "Episode 0 stopped by a device fault from frame 9: dropped, to be re-recorded" in capsys.readouterr().out
    rows = lerobot_rows(tmp_path / "ds")
    assert rows["episode_index"].unique().tolist() == [0] and len(rows) == 15  # the retake: ticks 21-35
    assert not rows["device_fault"].any()
    [episode] = native_episodes(tmp_path / "ds_native")
    assert episode.metadata["faults"] == {} and episode.metadata["fault_policy"]["policy"] == "rerecord"


def test_an_unknown_fault_policy_is_one_line():
    with pytest.raises(Exception, match="--fault_policy must be one of stop, rerecord, keep-and-mark"):
        TeledexRecordConfig(robot=TeledexConfig(backend="fake"), teleop=TeledexReplayConfig(),
                            dataset=DatasetRecordConfig(repo_id="local/x", root="/tmp/x", single_task="t"),
                            fault_policy="ignore")


# ---- against teledex-sim in another process ----------------------------------------------------------------------

SIM_DEVICES = ("--device", "piper:right:arm", "--device", "linkerhand_o6:right:hand")
# Not a timeout test: a simulator the loaded host stalls must not latch a fault of its own (a kill is silence forever)
SIM_ROBOT_FLAGS = ["--robot.type=teledex", "--robot.preset=piper_linkerhand_o6_single", "--robot.backend=real",
                   "--robot.cameras={}", "--robot.real.arm.interface=teledex", "--robot.real.arm.channel=arm",
                   "--robot.real.hand.interface=teledex", "--robot.real.hand.channel=hand",
                   f"--robot.real.feedback_timeout_ms={RELAXED_FEEDBACK_TIMEOUT_MS}"]
SIM_WARNINGS = pytest.mark.filterwarnings("ignore:The .bustype. argument is deprecated:DeprecationWarning")


@pytest.mark.slow
@SIM_WARNINGS
def test_a_killed_simulator_stops_and_marks_the_episode_and_the_exit_code_says_so(tmp_path):
    root = tmp_path / "killed"
    sim = TeledexSimProcess(*SIM_DEVICES)
    recorder = subprocess.Popen(
        [sys.executable, "-m", "teledex_lerobot.cli.record", *SIM_ROBOT_FLAGS, "--teleop.type=teledex_replay",
         "--dataset.repo_id=local/killed", f"--dataset.root={root}", "--dataset.single_task=grasp",
         "--dataset.fps=25", "--dataset.episode_time_s=30", "--dataset.reset_time_s=0", "--dataset.num_episodes=3",
         "--dataset.push_to_hub=false"],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = []
    try:
        for line in recorder.stdout:  # the first progress line: episode 0 is recording
            lines.append(line)
            if line.startswith("  episode 0"):
                sim.kill()
                break
        output, errors = recorder.communicate(timeout=120)
    finally:
        sim.stop()
        if recorder.poll() is None:
            recorder.kill()
    output = "".join(lines) + output
    assert recorder.returncode == 2, output + errors
    # the operator is told, then the session ends: there is no key to re-arm with
    assert "Episode 0: stopped by a device fault" in output
    assert "DEVICE FAULT:" in output and "No keyboard to re-arm with: ending the session." in output
    last = errors.strip().splitlines()[-1]
    assert last.startswith("teledex-record: error: the session ended with device faults nobody cleared") and \
        "Traceback" not in errors, errors
    # one episode in each format: the stopped one, its frames marked from the silence on, none of them sync-valid
    rows = lerobot_rows(root)
    assert rows["episode_index"].unique().tolist() == [0]
    flags = rows["device_fault"].to_numpy()
    first = int(np.argmax(flags))
    assert flags[first:].all() and not flags[:first].any() and not rows["sync_valid"].to_numpy()[first:].any()
    [episode] = native_episodes(tmp_path / "killed_native")
    np.testing.assert_array_equal(episode.telemetry["device_fault"], flags)
    assert episode.metadata["fault_policy"] == {"policy": "stop", "stopped_by_fault": True}
    assert episode.metadata["faults"] and set(episode.metadata["faults"]) <= {"arm", "hand"}
    assert min(fault["first_frame"] for fault in episode.metadata["faults"].values()) == first


@pytest.mark.slow
@SIM_WARNINGS
def test_rearming_after_the_simulator_returns_records_clean_episodes(tmp_path, monkeypatch):
    keys = Keys()
    monkeypatch.setattr(record_module, "create_key_listener", keys.listener)
    recording = threading.Event()  # set by the first progress line of an episode
    print_progress = RecordingSession._print_progress
    monkeypatch.setattr(RecordingSession, "_print_progress",
                        lambda session, *args: (recording.set(), print_progress(session, *args)))
    robot = TeledexConfig(preset="piper_linkerhand_o6_single", backend="real")
    robot.cameras = {}
    robot.real.arm, robot.real.hand = CanPortConfig("teledex", "arm"), CanPortConfig("teledex", "hand")
    robot.real.feedback_timeout_ms = RELAXED_FEEDBACK_TIMEOUT_MS
    dataset = DatasetRecordConfig(repo_id="local/rearm", root=str(tmp_path / "rearm"), single_task="grasp", fps=25,
                                  episode_time_s=4, reset_time_s=0, num_episodes=3, push_to_hub=False)
    recorder = Recorder(TeledexRecordConfig(robot=robot, teleop=TeledexReplayConfig(), dataset=dataset))
    sims = [TeledexSimProcess(*SIM_DEVICES)]
    failure = []

    def operator():
        """Kill the simulator in episode 0, bring it back once the recorder waits, press `a` until re-armed."""
        try:
            assert recording.wait(120) and keys.dispatch is not None  # episode 0 is recording
            session = recorder.session
            sims[0].kill()
            assert wait_until(lambda: len(session.saved_uuids) == 1, 30)  # episode 0, stopped and saved
            sims.append(TeledexSimProcess(*SIM_DEVICES))
            assert wait_until(lambda: (keys.dispatch("a"), not session.robot.device_faults())[1], 30, period_s=0.2)
        except BaseException as error:
            failure.append(error)
            if keys.dispatch is not None:
                keys.dispatch("q")  # the operator gives up: the session ends

    thread = threading.Thread(target=operator, daemon=True)
    thread.start()
    try:
        saved = recorder.run()
    finally:
        thread.join(timeout=60)
        for sim in sims:
            sim.stop()
    assert not failure, failure
    assert saved == 3 and not recorder.session.unresolved_faults
    rows = lerobot_rows(tmp_path / "rearm")
    by_episode = rows.groupby("episode_index")["device_fault"]
    assert by_episode.any().tolist() == [True, False, False]  # episode 0 stopped marked, then two clean ones
    assert by_episode.last()[0]
    metadata = [episode.metadata for episode in native_episodes(tmp_path / "rearm_native")]
    assert [m["fault_policy"]["stopped_by_fault"] for m in metadata] == [True, False, False]
    assert [bool(m["faults"]) for m in metadata] == [True, False, False]
