"""teledex-repair is itself crash-safe: killed at each of its steps (every rename and file replacement it makes, the
only ways it changes the dataset), the next repair finishes the job, and the dataset ends as one uninterrupted repair
leaves it: the same pairs, counts and statistics, nothing lost, nothing deleted."""

import json
import os
import shutil
from pathlib import Path

import pytest
from lerobot.configs.dataset import DatasetRecordConfig

from lerobot_robot_teledex import TeledexConfig
from lerobot_teleoperator_teledex import TeledexReplayConfig
from teledex_lerobot.cli.repair import repair
from teledex_lerobot.recording.recorder import Recorder, TeledexRecordConfig
from teledex_lerobot.storage.native import load_native_episode, native_episode_dirs
from teledex_lerobot.storage.repair import committed_episodes

pytestmark = pytest.mark.slow


class Killed(BaseException):
    """The process dies here: nothing catches it, nothing after it runs."""


def damaged_dataset(root: Path) -> None:
    """Two recorded episodes, then what kills leave behind: the recorder died between LeRobot's commit of episode 1
    and the native one (its folder still staged), LeRobot's staging folder and frames of an episode never saved, a
    sidecar of an episode never committed, info.json counts of before the last save."""
    Recorder(TeledexRecordConfig(
        robot=TeledexConfig(backend="fake"), teleop=TeledexReplayConfig(),
        dataset=DatasetRecordConfig(repo_id="local/repair", root=str(root), single_task="grasp", fps=25,
                                    episode_time_s=1.0, reset_time_s=0, num_episodes=2, push_to_hub=False))).run()
    last = native_episode_dirs(Path(f"{root}_native"))[-1]
    last.rename(last.with_name(f"{last.name}.partial"))
    (root / "tmp_never_saved").mkdir()
    (root / "images" / "observation.images.top").mkdir(parents=True)
    (root / "meta" / "teledex_episodes" / "00000000-0000-0000-0000-000000000000.json").write_text("{}")
    info = json.loads((root / "meta" / "info.json").read_text())
    info["total_episodes"], info["total_frames"] = 1, 25
    (root / "meta" / "info.json").write_text(json.dumps(info))


def outcome(root: Path) -> tuple:
    lerobot = [(int(e["episode_index"]), e["episode_uuid"]) for e in committed_episodes(root)]
    native = [(e.index, e.episode_uuid) for e in map(load_native_episode, native_episode_dirs(Path(f"{root}_native")))]
    info = json.loads((root / "meta" / "info.json").read_text())
    stats = json.loads((root / "meta" / "stats.json").read_text())
    leftovers = sorted(p.name for p in root.iterdir() if p.name.startswith(("tmp", "images")))
    return lerobot, native, info["total_episodes"], info["total_frames"], stats, leftovers


def files(folder: Path) -> int:
    return sum(p.is_file() for p in folder.rglob("*"))


def repair_killed_at(root: Path, step: int, monkeypatch) -> int:
    """Run repair, dying at its `step`-th rename or replacement; how many it made (all of them: it was not killed)."""
    made = 0

    def counted(function):
        def wrapper(*args, **kwargs):
            nonlocal made
            made += 1
            if made == step:
                raise Killed
            return function(*args, **kwargs)
        return wrapper

    with monkeypatch.context() as patch:
        patch.setattr(os, "rename", counted(os.rename))
        patch.setattr(os, "replace", counted(os.replace))
        try:
            repair(root, None)
        except Killed:
            pass
    return made


def test_repair_killed_at_each_step_is_finished_by_the_next(tmp_path, monkeypatch):
    pristine = tmp_path / "pristine" / "ds"
    damaged_dataset(pristine)
    reference = tmp_path / "reference" / "ds"
    shutil.copytree(pristine.parent, reference.parent, dirs_exist_ok=True)
    steps = repair_killed_at(reference, 0, monkeypatch)  # uninterrupted
    expected = outcome(reference)
    assert expected[0] == expected[1] and len(expected[0]) == 2 and expected[2] == 2  # the staged twin committed
    assert expected[5] == [] and steps >= 5
    for step in range(1, steps + 1):
        run_dir = tmp_path / f"killed_{step}"
        shutil.copytree(pristine.parent, run_dir)
        before = files(run_dir)
        repair_killed_at(run_dir / "ds", step, monkeypatch)
        repair(run_dir / "ds", None)  # the next repair, uninterrupted
        assert outcome(run_dir / "ds") == expected, f"killed at step {step} of {steps}"
        assert files(run_dir) >= before, step  # whatever was set aside was moved, not deleted
