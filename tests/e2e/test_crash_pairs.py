"""A recording killed (SIGKILL) at 20 instants spread over an episode and its save window: after teledex-repair both
formats hold the same episodes with the same uuids, nothing saved is lost, and recording resumes."""

import contextlib
import io
import os
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest
from commands import command, command_env, run

from teledex_lerobot.cli.repair import repair
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
    # one small camera: the saves' files are what is killed, not the pictures
    return command("teledex-record", "--robot.type=teledex", "--robot.backend=fake", "--robot.id=k",
                   "--robot.cameras={top: {type: teledex_render, view: top, width: 160, height: 120, fps: 25}}",
                   "--teleop.type=teledex_replay", "--teleop.id=k", "--dataset.repo_id=local/kill",
                   f"--dataset.root={root}", "--dataset.single_task=grasp", "--dataset.fps=25",
                   "--dataset.num_episodes=1", "--dataset.episode_time_s=1.6", "--dataset.reset_time_s=0",
                   "--dataset.push_to_hub=false", f"--resume={str(resume).lower()}")


def pairs(root: Path) -> list[tuple[int, str]]:
    """(index, uuid) of every episode, checked to be the same in both formats."""
    lerobot = [(int(e["episode_index"]), e["episode_uuid"]) for e in committed_episodes(root)]
    native = [(e.index, e.episode_uuid) for e in map(load_native_episode, native_episode_dirs(Path(f"{root}_native")))]
    assert lerobot == native, (lerobot, native)
    for _, episode_uuid in native:
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


def kill_at(root: Path, kind: str, delay_s: float, resume: bool, tmp: Path) -> str | None:
    """Run a recording of one episode and kill it at the instant; if it ends before its episode starts, its output
    instead."""
    process = subprocess.Popen(record_args(root, resume), env=command_env(tmp), stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    output, index = [], None
    for line in process.stdout:
        output.append(line)
        if line.startswith("Recording episode"):
            index = int(line.split()[2])
            break
        assert time.monotonic() < deadline, "the recording did not start its episode"
    if index is None:
        process.wait()
        return "".join(output[-30:])
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


@pytest.mark.long
def test_sigkill_at_20_instants_leaves_pairs_only(tmp_path):
    root = tmp_path / "ds"
    kept: set[str] = set()
    outcomes = []
    for number, (kind, delay) in enumerate(KILLS):
        existed = root.exists()
        ended_early = kill_at(root, kind, delay, resume=existed, tmp=tmp_path)
        if ended_early is not None:
            # A resumed recording that ended before its episode. Seen twice in CI; the second time its output showed
            # the cause (a kill inside LeRobot's write of stats.json, fixed in repair and tested below). Kept as a
            # warning for any other cause; what is tested holds either way: repair, then the recording resumes.
            warnings.warn(f"kill {number}: the recording ended before its episode:\n{ended_early}", stacklevel=1)
            if (root / "meta" / "info.json").exists():
                repair(root, None)
            assert kill_at(root, kind, delay, resume=root.exists(), tmp=tmp_path) is None, "the recording does not " \
                "resume"
        if not (root / "meta" / "info.json").exists():
            continue  # killed before the dataset existed: nothing to repair (the next run starts it anew)
        repaired = io.StringIO()
        with contextlib.redirect_stdout(repaired):
            repair(root, None)
        after = pairs(root)
        uuids = {u for _, u in after}
        assert kept <= uuids, f"kill {number} ({kind}+{delay}s) lost saved episodes {kept - uuids}"
        outcomes.append((kind, delay, len(uuids - kept), "committed" in repaired.getvalue()))
        kept = uuids
    assert "Nothing to repair" in run(command("teledex-repair", str(root)), tmp_path)  # and it is idempotent
    from lerobot.datasets import LeRobotDataset

    dataset = LeRobotDataset("local/kill", root=root)
    assert dataset.meta.total_episodes == len(kept)
    # kills after LeRobot's commit keep the episode (repair commits the native staging); kills before it do not
    assert any(rolled for *_, rolled in outcomes) and any(not new for _, _, new, _ in outcomes), outcomes
    assert all(new for kind, _, new, _ in outcomes if kind == "native"), outcomes


# Run teledex-record, dying (as SIGKILL would: nothing flushed) halfway through the call of LeRobot's `argv[1]`
# (which writes meta/`argv[2]` in place, not atomically, during an episode's save) where `argv[3]` holds, an
# expression of the call's `value` and of `calls`, how many calls came before it.
DIE_IN_WRITE = """
import os, sys
from lerobot.datasets import dataset_metadata
from teledex_lerobot.cli import record

name, file, when = sys.argv.pop(1), sys.argv.pop(1), sys.argv.pop(1)
real = getattr(dataset_metadata, name)

def dying(value, root):
    real(value, root)
    if eval(when, {"value": value, "calls": dying.calls}):
        path = root / "meta" / file
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
        os._exit(137)
    dying.calls += 1

dying.calls = 0
setattr(dataset_metadata, name, dying)
record.main()
"""
# (what is written, the writer, when to die in it, how many episodes are saved before)
METADATA_WRITES = {
    "stats.json, first episode": ("stats.json", "write_stats", "calls == 0", 0),
    "stats.json, second episode": ("stats.json", "write_stats", "calls == 1", 1),
    "info.json, second episode": ("info.json", "write_info", "value.total_episodes == 2", 1),
    "tasks.parquet, a new task on resume": ("tasks.parquet", "write_tasks", "calls == 0", 1),
}


def record_then_die_in(root: Path, tmp: Path, write: str, file: str, when: str, episodes: int, resume: bool,
                       task: str = "grasp") -> None:
    args = record_args(root, resume)
    args[args.index("--dataset.num_episodes=1")] = f"--dataset.num_episodes={episodes}"
    args[args.index("--dataset.single_task=grasp")] = f"--dataset.single_task={task}"
    died = subprocess.run([sys.executable, "-c", DIE_IN_WRITE, write, file, when, *args[1:]],
                          env=command_env(tmp), capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=300)
    assert died.returncode == 137, died.stdout[-3000:] + died.stderr[-3000:]


@pytest.mark.parametrize("case", METADATA_WRITES)
def test_killed_while_lerobot_writes_metadata_resumes_after_repair(tmp_path, case):
    """Seen in CI: the first episode's stats.json torn, its metadata never flushed; repair found "nothing to repair"
    and the recording did not resume (JSONDecodeError). After repair the dataset resumes, keeping what was saved: the
    episode being saved is rolled back, the ones before it are kept."""
    from lerobot.datasets import LeRobotDataset

    file, write, when, saved = METADATA_WRITES[case]
    root = tmp_path / "ds"
    if file == "tasks.parquet":
        run(record_args(root, resume=False), tmp_path)
        record_then_die_in(root, tmp_path, write, file, when, 1, resume=True, task="place")
    else:
        record_then_die_in(root, tmp_path, write, file, when, saved + 1, resume=False)
    repaired = io.StringIO()
    with contextlib.redirect_stdout(repaired):
        repair(root, None)
    # the torn file is set aside and restored, rebuilt or recomputed (not merely recounted)
    assert any(file in line and "total_episodes" not in line for line in repaired.getvalue().splitlines()), \
        repaired.getvalue()
    assert len(pairs(root)) == saved
    resumed = record_args(root, resume=True)
    resumed[resumed.index("--dataset.single_task=grasp")] = "--dataset.single_task=place"
    run(resumed, tmp_path)
    assert len(pairs(root)) == saved + 1
    dataset = LeRobotDataset("local/kill", root=root)
    assert dataset.meta.stats["action"]["mean"].shape
    assert dataset.meta.tasks.index.tolist() == ["grasp"] * bool(saved) + ["place"]
    first_frames = dataset.meta.episodes["dataset_from_index"]
    assert [dataset[int(i)]["task"] for i in first_frames] == dataset.meta.tasks.index.tolist()
