"""teledex-record's control flow in-process: keyboard controls, success labels, and a full disk."""

import errno
from pathlib import Path

import pytest
from lerobot.configs.dataset import DatasetRecordConfig
from lerobot.datasets import LeRobotDataset

from lerobot_robot_teledex import TeledexConfig
from lerobot_teleoperator_teledex import TeledexReplayConfig
from teledex_lerobot.cli.record import Recorder, TeledexRecordConfig
from teledex_lerobot.storage import native as native_storage
from teledex_lerobot.storage.native import load_native_episode, native_episode_dirs


def make_recorder(root: Path, episodes: int, seconds: float) -> Recorder:
    return Recorder(TeledexRecordConfig(
        robot=TeledexConfig(backend="fake"),
        teleop=TeledexReplayConfig(),
        dataset=DatasetRecordConfig(repo_id="local/keys", root=str(root), single_task="grasp", fps=25,
                                    episode_time_s=seconds, reset_time_s=0, num_episodes=episodes,
                                    push_to_hub=False, video=True),
    ))


def press_keys_at_ticks(recorder: Recorder, script: dict[int, str]) -> None:
    """Presses keys from inside the control loop, at given tick counts: deterministic, unlike wall-clock timers."""
    get_action = recorder.teleop.get_action
    ticks = iter(range(1, 10**6))

    def get_action_and_press():
        tick = next(ticks)
        if tick in script:
            recorder.events.on_key(script[tick])
        return get_action()

    recorder.teleop.get_action = get_action_and_press


def test_discard_success_labels_and_early_end(tmp_path):
    recorder = make_recorder(tmp_path / "ds", episodes=2, seconds=30.0)
    # tick 10: discard the first take; the retake (ticks 11-30) is marked a success and saved at tick 30; the next
    # (ticks 31-45) is marked a failure and saved at tick 45
    press_keys_at_ticks(recorder, {10: "d", 20: "s", 30: "n", 40: "f", 45: "n"})
    recorder.run()
    dataset = LeRobotDataset("local/keys", root=tmp_path / "ds")
    assert dataset.meta.total_episodes == 2
    lengths = [dataset.meta.episodes[i]["length"] for i in range(2)]
    assert lengths == [20, 15]
    episodes = [load_native_episode(d) for d in native_episode_dirs(tmp_path / "ds_native")]
    assert [e.metadata["episode"]["success"] for e in episodes] == [True, False]
    assert [len(e.telemetry["qpos"]) for e in episodes] == lengths


def test_rerecord_then_quit_saves_the_take_in_progress(tmp_path):
    recorder = make_recorder(tmp_path / "ds", episodes=3, seconds=1.0)
    press_keys_at_ticks(recorder, {5: "r", 15: "q"})  # as in lerobot-record, quitting keeps the current take
    recorder.run()
    dataset = LeRobotDataset("local/keys", root=tmp_path / "ds")
    assert dataset.meta.total_episodes == 1 and dataset.meta.episodes[0]["length"] == 10
    assert [p.name for p in native_episode_dirs(tmp_path / "ds_native")] == ["episode_000000"]


def test_disk_full_keeps_both_formats_consistent(tmp_path, monkeypatch):
    recorder = make_recorder(tmp_path / "ds", episodes=3, seconds=0.5)
    saves = []
    real_savez = native_storage.np.savez

    def savez_until_disk_full(*args, **kwargs):
        saves.append(1)
        if len(saves) == 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_savez(*args, **kwargs)

    monkeypatch.setattr(native_storage.np, "savez", savez_until_disk_full)
    with pytest.raises(SystemExit, match="Disk full.*intact.*teledex-repair"):
        recorder.run()
    monkeypatch.undo()
    assert LeRobotDataset("local/keys", root=tmp_path / "ds").meta.total_episodes == 1
    assert [p.name for p in native_episode_dirs(tmp_path / "ds_native")] == ["episode_000000"]
    load_native_episode(native_episode_dirs(tmp_path / "ds_native")[0], verify_checksums=True)
