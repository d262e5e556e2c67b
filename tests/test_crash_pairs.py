"""A recording killed (SIGKILL) at 20 instants spread over an episode and its save window: after teledex-repair both
formats hold the same episodes with the same uuids, nothing saved is lost, and recording resumes."""

import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest
from commands import command, command_env, run

from teledex_lerobot.storage.native import load_native_episode, native_episode_dirs
from teledex_lerobot.storage.repair import committed_episodes

pytestmark = pytest.mark.slow

# Instants: seconds into the second episode of a run, or the moment a file of its save appears (+ a delay in s).
# The save goes: LeRobot stages (sidecar) -> native stages (.partial/manifest.json) -> LeRobot commits (data parquet,
# then episode metadata) -> native commits (episode folder renamed into place).
KILLS = [("time", 0.05), ("time", 0.3), ("time", 0.6), ("time", 0.9), ("time", 1.2), ("time", 1.5),
         ("sidecar", 0.0), ("sidecar", 0.01), ("staged", 0.0), ("staged", 0.003), ("staged", 0.01),
         ("data", 0.0), ("data", 0.002), ("data", 0.01), ("meta", 0.0), ("meta", 0.002), ("meta", 0.02),
         ("native", 0.0), ("native", 0.002), ("native", 0.05)]


def record_args(root: Path, resume: bool) -> list[str]:
    return command("teledex-record", "--robot.type=teledex", "--robot.backend=fake", "--robot.id=k",
                   "--teleop.type=teledex_replay", "--teleop.id=k", "--dataset.repo_id=local/kill",
                   f"--dataset.root={root}", "--dataset.single_task=grasp", "--dataset.fps=25",
                   "--dataset.num_episodes=2", "--dataset.episode_time_s=1.6", "--dataset.reset_time_s=0",
                   "--dataset.push_to_hub=false", f"--resume={str(resume).lower()}")


def pairs(root: Path) -> list[tuple[int, str]]:
    """(index, uuid) of every episode, checked to be the same in both formats."""
    lerobot = [(int(e["episode_index"]), e["episode_uuid"]) for e in committed_episodes(root)]
    native = [(e.index, e.episode_uuid) for e in map(load_native_episode, native_episode_dirs(Path(f"{root}_native")))]
    assert lerobot == native, (lerobot, native)
    for index, episode_uuid in native:
        assert (root / "meta" / "teledex_episodes" / f"{episode_uuid}.json").is_file()
    return native


def save_marker(root: Path, kind: str, index: int):
    native = Path(f"{root}_native")
    if kind == "sidecar":
        known = set((root / "meta" / "teledex_episodes").glob("*.json"))
        return lambda: set((root / "meta" / "teledex_episodes").glob("*.json")) - known
    if kind == "staged":
        return lambda: list(native.glob(f"session_*/episode_{index:06d}.partial/manifest.json"))
    if kind == "data":
        known = set(root.glob("data/*/*.parquet"))
        return lambda: set(root.glob("data/*/*.parquet")) - known
    if kind == "meta":
        known = set(root.glob("meta/episodes/*/*.parquet"))
        return lambda: set(root.glob("meta/episodes/*/*.parquet")) - known
    return lambda: list(native.glob(f"session_*/episode_{index:06d}"))


def kill_at(root: Path, kind: str, delay_s: float, resume: bool, tmp: Path) -> set[str]:
    """Run a recording, kill it at the instant, return the uuids it reported saved."""
    process = subprocess.Popen(record_args(root, resume), env=command_env(tmp), stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, stdin=subprocess.DEVNULL)
    saved, episodes_started = set(), 0
    deadline = time.monotonic() + 180
    for line in process.stdout:
        if match := re.match(r"Saved episode \d+ \(([0-9a-f-]+)\)", line):
            saved.add(match.group(1))
        if line.startswith("Recording episode"):
            episodes_started += 1
            if episodes_started == 2:
                index = int(line.split()[2])
                break
        assert time.monotonic() < deadline and process.poll() is None, "the recording ended before episode 2"
    if kind == "time":
        time.sleep(delay_s)
    else:
        appeared = save_marker(root, kind, index)
        while not appeared():
            assert process.poll() is None and time.monotonic() < deadline, f"{kind} never appeared"
            time.sleep(0.0005)
        time.sleep(delay_s)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    process.stdout.close()
    return saved


def test_sigkill_at_20_instants_leaves_pairs_only(tmp_path):
    root = tmp_path / "ds"
    kept: set[str] = set()
    outcomes = []
    for number, (kind, delay) in enumerate(KILLS):
        kept |= kill_at(root, kind, delay, resume=number > 0, tmp=tmp_path)
        repair_output = run(command("teledex-repair", str(root)), tmp_path)
        after = pairs(root)
        uuids = {u for _, u in after}
        assert kept <= uuids, f"kill {number} ({kind}+{delay}s) lost saved episodes {kept - uuids}"
        kept = uuids  # a committed second episode also counts as saved from now on
        outcomes.append((kind, delay, len(after), "committed" in repair_output))
    run(command("teledex-repair", str(root)), tmp_path)  # idempotent: nothing left to do
    assert "Nothing to repair" in run(command("teledex-repair", str(root)), tmp_path)
    from lerobot.datasets import LeRobotDataset

    dataset = LeRobotDataset("local/kill", root=root)
    assert dataset.meta.total_episodes == len(kept) >= 20
    # the save-window kills hit both sides of the decisive commit: some episodes were rolled forward by the repair
    assert any(rolled for *_, rolled in outcomes), outcomes
