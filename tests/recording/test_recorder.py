"""teledex-record's control flow in-process: keyboard controls, success labels, the timing policy, a full disk at
each point of a save, and every observation (tactile included) in both formats."""

import errno
from pathlib import Path

import numpy as np
import pytest
from filesystems import tmpfs
from lerobot.configs.dataset import DatasetRecordConfig
from lerobot.datasets import LeRobotDataset
from lerobot.datasets.dataset_writer import DatasetWriter

from lerobot_robot_teledex import TeledexConfig, TeledexRenderCameraConfig
from lerobot_teleoperator_teledex import TeledexReplayConfig
from teledex_lerobot.cli.errors import UserError
from teledex_lerobot.recording import lerobot_dataset
from teledex_lerobot.recording.recorder import Recorder, TeledexRecordConfig
from teledex_lerobot.storage import native as native_storage
from teledex_lerobot.storage.native import load_native_episode, native_episode_dirs
from teledex_lerobot.storage.repair import committed_episodes
from teledex_lerobot.sync import TimingPolicy


def make_recorder(root: Path, episodes: int, seconds: float, **extra) -> Recorder:
    # one small camera: the keys' and episodes' tests judge ticks, which a loaded machine's video encoding would drop
    camera = TeledexRenderCameraConfig(view="oblique", width=160, height=120, fps=25)
    return Recorder(TeledexRecordConfig(
        robot=TeledexConfig(backend="fake", cameras={"top": camera}),
        teleop=TeledexReplayConfig(),
        dataset=DatasetRecordConfig(repo_id="local/keys", root=str(root), single_task="grasp", fps=25,
                                    episode_time_s=seconds, reset_time_s=0, num_episodes=episodes,
                                    push_to_hub=False, video=True),
        **extra))


def at_ticks(recorder: Recorder, script: dict[int, callable]) -> None:
    """Runs actions from inside the control loop at given tick counts: deterministic, unlike wall-clock timers."""
    get_action = recorder.teleop.get_action
    ticks = iter(range(1, 10**6))

    def get_action_and_act():
        tick = next(ticks)
        if tick in script:
            script[tick]()
        return get_action()

    recorder.teleop.get_action = get_action_and_act


def press(recorder: Recorder, key: str):
    return lambda: recorder.session.events.on_key(key)


def pairs(root: Path) -> list[tuple[int, str]]:
    lerobot = [(int(e["episode_index"]), e["episode_uuid"]) for e in committed_episodes(root)]
    native = [(e.index, e.episode_uuid) for e in map(load_native_episode, native_episode_dirs(Path(f"{root}_native")))]
    assert lerobot == native
    return native


def test_discard_success_labels_and_early_end(tmp_path):
    recorder = make_recorder(tmp_path / "ds", episodes=2, seconds=30.0)
    # tick 10: discard the first take; the retake (ticks 11-30) is marked a success and saved at tick 30; the next
    # (ticks 31-45) is marked a failure and saved at tick 45
    at_ticks(recorder, {10: press(recorder, "d"), 20: press(recorder, "s"), 30: press(recorder, "n"),
                        40: press(recorder, "f"), 45: press(recorder, "n")})
    recorder.run()
    dataset = LeRobotDataset("local/keys", root=tmp_path / "ds")
    assert dataset.meta.total_episodes == 2
    lengths = [dataset.meta.episodes[i]["length"] for i in range(2)]
    assert lengths == [20, 15]
    episodes = [load_native_episode(d) for d in native_episode_dirs(tmp_path / "ds_native")]
    assert [e.metadata["episode"]["success"] for e in episodes] == [True, False]
    assert [len(e.telemetry["qpos"]) for e in episodes] == lengths
    assert [u for _, u in pairs(tmp_path / "ds")] == [e.episode_uuid for e in episodes]


def test_a_timed_input_is_told_when_each_episode_begins_and_how_long_it_lasts(tmp_path):
    """On a robot that is no world (nothing resets it between episodes) too: the operator's page counts down."""
    recorder = make_recorder(tmp_path / "ds", episodes=2, seconds=0.4)
    told = []
    recorder.teleop.episode_started = lambda s: told.append((s, len(recorder.session.saved_uuids)))
    recorder.run()
    assert told == [(0.4, 0), (0.4, 1)]  # each before its episode's frames, after the last one's save


def test_rerecord_then_quit_saves_the_take_in_progress(tmp_path):
    recorder = make_recorder(tmp_path / "ds", episodes=3, seconds=1.0)
    at_ticks(recorder, {5: press(recorder, "r"), 15: press(recorder, "q")})  # quitting keeps the current take
    recorder.run()
    dataset = LeRobotDataset("local/keys", root=tmp_path / "ds")
    assert dataset.meta.total_episodes == 1 and dataset.meta.episodes[0]["length"] == 10
    assert [p.name for p in native_episode_dirs(tmp_path / "ds_native")] == ["episode_000000"]



def test_a_one_frame_episode_is_not_saved_and_the_dataset_stays_readable(tmp_path, capsys):
    """Seen under load (a fault at the first frame of an episode): LeRobot 0.6.1 stores a one-frame episode's
    statistics as integers, the others' as floats, and the dataset no longer loads. Such a take is reported and not
    saved; the session records another."""
    recorder = make_recorder(tmp_path / "ds", episodes=2, seconds=30.0)
    # episode 0 ends at tick 25, the next take at its first tick (26), its retake after 20 (ticks, not seconds: a
    # loaded machine drops ticks)
    at_ticks(recorder, {25: press(recorder, "n"), 26: press(recorder, "n"), 46: press(recorder, "n")})
    recorder.run()
    assert "had 1 frame(s); not saved" in capsys.readouterr().out
    dataset = LeRobotDataset("local/keys", root=tmp_path / "ds")
    assert [dataset.meta.episodes[i]["length"] for i in range(dataset.meta.total_episodes)] == [25, 20]
    assert len(pairs(tmp_path / "ds")) == 2

def stall(seconds: float):
    import time

    return lambda: time.sleep(seconds)


def test_dropped_ticks_are_in_both_formats_and_the_policy_marks_them(tmp_path):
    recorder = make_recorder(tmp_path / "ds", episodes=1, seconds=30.0)
    # two stalls of 0.2 s (5 periods) inside the loop, then the episode ends at tick 40
    at_ticks(recorder, {10: stall(0.2), 20: stall(0.2), 40: press(recorder, "n")})
    recorder.run()
    episode = load_native_episode(native_episode_dirs(tmp_path / "ds_native")[0])
    timing = episode.metadata["timing"]
    assert timing["gaps"] >= 2 and timing["dropped_ticks"] >= 8 and not timing["within_policy"]
    assert timing["frames_expected"] == timing["frames_stored"] + timing["dropped_ticks"]
    dataset = LeRobotDataset("local/keys", root=tmp_path / "ds")
    gaps = np.asarray(dataset.hf_dataset["frame_after_gap"]).reshape(-1)
    intervals = np.asarray(dataset.hf_dataset["frame_interval_ms"]).reshape(-1)
    assert np.array_equal(gaps, episode.telemetry["frame_after_gap"])
    assert np.allclose(intervals, episode.telemetry["frame_interval_ns"] / 1e6, atol=1e-3)


def test_rerecord_policy_records_a_slow_episode_again(tmp_path):
    recorder = make_recorder(tmp_path / "ds", episodes=1, seconds=1.0,
                             timing=TimingPolicy(max_dropped_fraction=0.05, on_exceed="rerecord"))
    at_ticks(recorder, {5: stall(0.4)})  # only the first take stalls
    recorder.run()
    [(_, episode_uuid)] = pairs(tmp_path / "ds")
    assert load_native_episode(native_episode_dirs(tmp_path / "ds_native")[0]).metadata["timing"]["within_policy"]


def test_existing_root_and_read_only_roots_fail_cleanly(tmp_path):
    (tmp_path / "exists").mkdir()
    with pytest.raises(UserError, match="already exists: pass --resume=true"):
        make_recorder(tmp_path / "exists", 1, 1.0).run()
    with tmpfs(tmp_path / "ro", "1m", read_only=True) as read_only:
        with pytest.raises(UserError, match="Cannot write in .*ro .*Read-only"):
            make_recorder(read_only / "ds", 1, 1.0).run()
        recorder = make_recorder(tmp_path / "ok", 1, 1.0)  # LeRobot root writable, native root not
        recorder.cfg.native.root = str(read_only / "native")
        with pytest.raises(UserError, match="Cannot write in .*ro .*Read-only"):
            recorder.run()
    assert not (tmp_path / "ok").exists()  # nothing left behind: the next run needs no --resume


def torn_footer_on_second_close(real):
    """The disk fills while LeRobot writes the second episode's parquet footer: the rows are on disk without their
    footer, and its metadata row is flushed later anyway (on close, or by LeRobot's garbage-collection safety net)."""
    closes = []

    def wrapper(writer):
        if writer._pq_writer is not None:
            closes.append(1)
            if len(closes) == 2:
                path = Path(writer._pq_writer.where)
                real(writer)
                path.write_bytes(path.read_bytes()[:-8])  # the footer's length and closing magic never made it
                raise OSError(errno.ENOSPC, "No space left on device")
        return real(writer)
    return wrapper


@pytest.mark.parametrize("where, pairs_after_repair", [("native staging", 1), ("lerobot save", 1),
                                                       ("lerobot parquet footer", 1), ("after lerobot finalize", 2),
                                                       ("native commit", 2)])
def test_disk_full_at_each_save_step_keeps_pairs(tmp_path, monkeypatch, where, pairs_after_repair):
    """The second episode's save fails; after teledex-repair the formats hold the same episodes: the first, and the
    second too when the disk filled once LeRobot's episode was written (its commit raised, but took effect; the native
    staging is complete: repair commits it)."""
    recorder = make_recorder(tmp_path / "ds", episodes=3, seconds=0.4)
    calls = []

    def fail_on_second(real, after: bool = False):
        def wrapper(*args, **kwargs):
            calls.append(1)
            if len(calls) == 2:
                if after:
                    real(*args, **kwargs)
                raise OSError(errno.ENOSPC, "No space left on device")
            return real(*args, **kwargs)
        return wrapper

    if where == "native staging":
        monkeypatch.setattr(native_storage.np, "savez", fail_on_second(native_storage.np.savez))
    elif where == "lerobot save":
        monkeypatch.setattr(lerobot_dataset._Dataset, "save_episode",
                            fail_on_second(lerobot_dataset._Dataset.save_episode))
    elif where == "lerobot parquet footer":
        monkeypatch.setattr(DatasetWriter, "close_writer", torn_footer_on_second_close(DatasetWriter.close_writer))
    elif where == "after lerobot finalize":
        monkeypatch.setattr(lerobot_dataset._Dataset, "finalize",
                            fail_on_second(lerobot_dataset._Dataset.finalize, after=True))
    else:
        monkeypatch.setattr(native_storage.NativeSink, "commit", fail_on_second(native_storage.NativeSink.commit))
    with pytest.raises(UserError, match="Disk full.*intact.*teledex-repair"):
        recorder.run()
    monkeypatch.undo()
    from teledex_lerobot.cli.repair import repair

    repair(tmp_path / "ds", None)
    saved = pairs(tmp_path / "ds")
    assert len(saved) == pairs_after_repair
    for folder in native_episode_dirs(tmp_path / "ds_native"):
        load_native_episode(folder, verify_checksums=True)


class _Keyboard:
    def stop(self):
        pass


def test_confirm_gated_episodes(tmp_path, monkeypatch, capsys):
    """--confirm_episodes: each episode's summary waits for the operator's verdict; a discarded take is not saved,
    the kept one is, with the summary and the verdict in its metadata."""
    monkeypatch.setattr("teledex_lerobot.recording.recorder.create_key_listener", lambda *a, **k: _Keyboard())
    recorder = make_recorder(tmp_path / "ds", episodes=1, seconds=30.0, confirm_episodes=True)
    # the first take ends at tick 10 and is discarded in review at tick 15; the second ends at tick 25 and is kept
    at_ticks(recorder, {10: press(recorder, "n"), 15: press(recorder, "d"), 25: press(recorder, "n"),
                        30: press(recorder, "k")})
    recorder.run()
    output = capsys.readouterr().out
    assert output.count("Keep it? k / enter = keep, d = discard, r = re-record") == 2
    assert "Episode 0 discarded" in output
    (episode,) = [load_native_episode(d) for d in native_episode_dirs(tmp_path / "ds_native")]
    assert len(episode.telemetry["qpos"]) == 10  # ticks 16-25: the review's ticks are not recorded
    review = episode.metadata["review"]
    assert review["decision"] == "kept" and review["summary"]["frames_stored"] == 10
    assert set(review["summary"]) == {"duration_s", "sync_success_rate", "dropped_ticks", "frames_stored", "faults"}


def test_confirm_needs_a_keyboard_and_creates_nothing_without_one(tmp_path, monkeypatch):
    monkeypatch.setattr("teledex_lerobot.recording.recorder.create_key_listener", lambda *a, **k: None)
    recorder = make_recorder(tmp_path / "ds", episodes=1, seconds=1.0, confirm_episodes=True)
    with pytest.raises(UserError, match="no keyboard can be read here"):
        recorder.run()
    assert not (tmp_path / "ds").exists() and not (tmp_path / "ds_native").exists()


def test_an_input_that_never_sent_is_missing_in_every_frame_not_now(tmp_path):
    """No packet ever reached the teleoperator: the frames' input has no capture time and none is sync-valid (the
    recorder used to stamp a silent input with the tick's time: "sync ok 100 %" beside stale diagnostics)."""
    from lerobot_teleoperator_teledex import TeledexXRConfig
    from teledex_lerobot.sync.timesync import NO_STAMP

    root = tmp_path / "ds"
    recorder = Recorder(TeledexRecordConfig(
        robot=TeledexConfig(backend="fake"),
        teleop=TeledexXRConfig(preset="piper_linkerhand_o6_single", source="unix", socket_path=str(tmp_path / "xr"),
                               keyboard=False),
        dataset=DatasetRecordConfig(repo_id="local/silent", root=str(root), single_task="grasp", fps=25,
                                    episode_time_s=30, reset_time_s=0, num_episodes=1, push_to_hub=False,
                                    video=False)))
    at_ticks(recorder, {20: press(recorder, "n")})
    recorder.run()
    episode = load_native_episode(native_episode_dirs(Path(f"{root}_native"))[0])
    input_column = list(episode.telemetry["source_names"]).index("input")
    assert (episode.telemetry["source_timestamps_ns"][:, input_column] == NO_STAMP).all()
    assert not episode.telemetry["sync_valid"].any() and episode.metadata["sync"]["sync_success_rate"] == 0
    dataset = LeRobotDataset("local/silent", root=root)
    assert not np.asarray(dataset.hf_dataset["sync_valid"]).any()
    assert (np.asarray(dataset.hf_dataset["t_input_ns"]) == NO_STAMP).all()
