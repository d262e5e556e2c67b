"""Metadata checked against the data (issue 35, item 4). A plausible wrong fps (30 written over 25 in info.json) is
caught by every reader in one line and repaired from the backup, since the timestamps and the native metadata both
say 25; where those sources disagree among themselves, nobody guesses. A data file that lost a column is one line
(exit 2), and teledex-repair restores the column from the native twins, or names it when they cannot give it back.
teledex-repair says so when it never looked at a native layout, and a dataset root that is a file gets the same one
line from every command.

The commands run in-process as their console scripts do (main(argv)), but teledex-record, which parses sys.argv,
runs as a child process; the dataset is recorded once per module by teledex-record's own Recorder (fake devices, one
small camera, two short episodes).
"""

import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from commands import command, command_env
from lerobot.configs.dataset import DatasetRecordConfig
from lerobot.datasets import LeRobotDataset
from test_corrupted_inputs import edit_json, native_episode, rehash, run, snapshot

from lerobot_robot_teledex import TeledexConfig, TeledexRenderCameraConfig
from lerobot_teleoperator_teledex import TeledexReplayConfig
from teledex_lerobot.cli import convert, merge, repair, sync_report
from teledex_lerobot.recording.recorder import Recorder, TeledexRecordConfig

INFO = "ds/meta/info.json"
BACKUP = "ds/meta/info.teledex-backup.json"
DATA_1 = "ds/data/chunk-000/file-001.parquet"  # episode 1's rows (each episode has its own file)
# The commands that read the LeRobot dataset: each must refuse metadata that its data contradicts
READERS = {
    "teledex-sync-report": (sync_report.main, lambda w: [str(w / "ds")]),
    "teledex-convert": (convert.main, lambda w: ["to-native", str(w / "ds"), str(w / "converted")]),
    "teledex-merge": (merge.main, lambda w: [str(w / "merged"), str(w / "ds"), "--repo-id", "local/merged"]),
}


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> Path:
    world = tmp_path_factory.mktemp("metadata") / "w"
    camera = TeledexRenderCameraConfig(view="oblique", width=160, height=120, fps=25)
    Recorder(TeledexRecordConfig(
        robot=TeledexConfig(backend="fake", cameras={"top": camera}), teleop=TeledexReplayConfig(),
        dataset=DatasetRecordConfig(repo_id="local/ds", root=str(world / "ds"), single_task="grasp", fps=25,
                                    episode_time_s=0.4, reset_time_s=0, num_episodes=2, push_to_hub=False))).run()
    return world


@pytest.fixture
def world(pristine, tmp_path, monkeypatch) -> Path:
    w = tmp_path / "w"
    shutil.copytree(pristine, w, symlinks=True)
    monkeypatch.chdir(w)
    return w


def set_fps(path: Path, fps) -> None:
    edit_json(path, lambda info: info.update(fps=fps))


def drop_column(path: Path, column: str) -> None:
    table = pq.read_table(path)
    pq.write_table(table.drop([column]), path)


def one_line(main, argv, capfd, program: str) -> str:
    """The command's one error line (exit 2, nothing else on stderr, no traceback), without its prefix."""
    code, out, err = run(main, argv, capfd)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, f"exit {code}\nstdout: {out[-2000:]}\nstderr: {err[-3000:]}"
    assert lines[0].startswith(f"{program}: error: "), lines[0]
    return lines[0].removeprefix(f"{program}: error: ")


def repaired(w: Path, capfd, *extra: str) -> str:
    code, out, err = run(repair.main, [str(w / "ds"), *extra], capfd)
    assert code == 0 and "Traceback" not in err, f"exit {code}\nstdout: {out}\nstderr: {err[-3000:]}"
    return out


def dropped_ticks(w: Path, capfd) -> int:
    code, out, err = run(sync_report.main, [str(w / "ds"), "--json", str(w / "report.json")], capfd)
    assert code == 0, err
    return json.loads((w / "report.json").read_text())["overall"]["timing"]["dropped_ticks"]


# ---- fps --------------------------------------------------------------------------------------------------------

def test_fps_30_written_over_25_is_caught_and_repaired(world, pristine, tmp_path, capfd):
    recorded_ticks = dropped_ticks(world, capfd)
    set_fps(world / INFO, 30)  # the backup, the sidecars, the native metadata and the timestamps all still say 25
    before = snapshot(tmp_path)
    for program, (main, argv) in READERS.items():
        line = one_line(main, argv(world), capfd, program)
        assert re.search(r"meta/info\.json says fps 30, but the timestamps in data/ and the episodes' metadata in "
                         r"meta/teledex_episodes/ say 25; run `teledex-repair .*ds` to restore it", line), line
    assert snapshot(tmp_path) == before  # no reader wrote anything
    out = repaired(world, capfd)
    assert re.search(r"meta/info\.json: fps 30 -> 25 \(from meta/info\.teledex-backup\.json, as the timestamps in "
                     r"data/, the episodes' metadata in meta/teledex_episodes/ and the native episodes' metadata in "
                     r".*ds_native say 25\)", out), out
    assert repaired(world, capfd).startswith("Nothing to repair: both formats are complete")
    assert json.loads((world / INFO).read_text()) == json.loads((pristine / INFO).read_text())
    assert LeRobotDataset("local/ds", root=world / "ds").fps == 25
    assert dropped_ticks(world, capfd) == recorded_ticks  # none invented


def test_fps_written_over_the_backup_too_is_restored_from_the_data(world, capfd):
    """The backup is a copy of info.json from before the last save: it can hold the same mistake. The data's own
    record of its rate then restores it."""
    set_fps(world / INFO, 30)
    set_fps(world / BACKUP, 30)
    out = repaired(world, capfd)
    assert re.search(r"meta/info\.json: fps 30 -> 25 \(from the data: the timestamps in data/, .* say 25\)", out), out
    assert json.loads((world / INFO).read_text())["fps"] == 25


def test_sources_that_disagree_about_the_rate_are_named_not_guessed(world, tmp_path, capfd):
    """The sidecars say 30 where the timestamps and the native metadata say 25: which is right cannot be told from
    the files, so every command names them and changes nothing, even with info.json agreeing with the majority."""
    for sidecar in (world / "ds/meta/teledex_episodes").glob("*.json"):
        edit_json(sidecar, lambda s: s["metadata"]["collection"].update(control_frequency_hz=30))
    before = snapshot(tmp_path)
    expected = (r"meta/info\.json says fps 25, but the data disagrees about its own rate: the timestamps in data/ say "
                r"25, the episodes' metadata in meta/teledex_episodes/ says 30.*does not guess.*set 'fps' in "
                r"meta/info\.json \(and the episodes' metadata\) by hand")
    for program, (main, argv) in {**READERS, "teledex-repair": (repair.main, lambda w: [str(w / "ds")])}.items():
        line = one_line(main, argv(world), capfd, program)
        assert re.search(expected, line), line
    assert snapshot(tmp_path) == before


# ---- columns ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("column", ["sync_valid", "action", "episode_uuid"])
def test_a_parquet_missing_a_column_is_one_line_and_repair_restores_it(column, world, pristine, tmp_path, capfd):
    drop_column(world / DATA_1, column)
    before = snapshot(tmp_path)
    for program, (main, argv) in READERS.items():
        line = one_line(main, argv(world), capfd, program)
        assert re.search(rf"ds/data/chunk-000/file-001\.parquet lacks the column\(s\) {column} that "
                         r".*ds/meta/info\.json declares; run `teledex-repair .*ds`", line), line
    assert snapshot(tmp_path) == before
    out = repaired(world, capfd)
    assert re.search(rf"data/chunk-000/file-001\.parquet: column\(s\) {column} restored from the native twins of "
                     r"episode\(s\) 1 \(the file as it was -> .*ds\.damaged/.*/data/chunk-000/file-001\.parquet\)",
                     out), out
    assert "[native]" not in out  # the pairs still hold: no native episode set aside
    assert pq.read_table(world / DATA_1).equals(pq.read_table(pristine / DATA_1))  # the very values recorded
    assert repaired(world, capfd).startswith("Nothing to repair: both formats are complete")
    dataset = LeRobotDataset("local/ds", root=world / "ds")
    assert column in dataset[len(dataset) - 1]
    code, out, err = run(convert.main, READERS["teledex-convert"][1](world), capfd)
    assert code == 0, err


@pytest.mark.parametrize("column, remove, why", [
    ("timestamp", None, "the native format does not hold timestamp"),
    ("sync_valid", "ds_native", r"there is no native layout to restore them from \(give --native-root"),
])
def test_a_lost_column_that_cannot_be_restored_is_named(column, remove, why, world, tmp_path, capfd):
    drop_column(world / DATA_1, column)
    if remove:
        shutil.rmtree(world / remove)
    before = snapshot(tmp_path)
    line = one_line(repair.main, [str(world / "ds")], capfd, "teledex-repair")
    assert re.search(rf"file-001\.parquet lacks the column\(s\) {column} that .*info\.json declares, and "
                     rf"teledex-repair cannot restore them: {why}.*restore the file from a copy of the dataset \(no "
                     r"data file was changed", line), line
    assert snapshot(tmp_path) == before


def test_a_twin_that_is_not_the_same_recording_restores_nothing(world, tmp_path, capfd):
    """A native episode 1 whose actions differ from the file's (another take): its sync flags are not taken."""
    drop_column(world / DATA_1, "sync_valid")
    folder = native_episode(world, 1, "ds_native")
    with np.load(folder / "telemetry.npz") as archive:
        telemetry = {key: archive[key] for key in archive.files}
    telemetry["action"] = telemetry["action"] + 0.1
    np.savez(folder / "telemetry.npz", **telemetry)
    rehash(folder)
    line = one_line(repair.main, [str(world / "ds")], capfd, "teledex-repair")
    assert re.search(r"cannot restore them: native episode 1 differs from the file in action: not the same "
                     r"recording", line), line


# ---- which roots repair looked at -------------------------------------------------------------------------------

def test_repair_says_when_it_did_not_look_at_the_native_layout(world, capfd):
    """Recorded with a custom --native.root: the default place holds nothing, and repair must not call both
    formats complete."""
    custom = world / "elsewhere" / "native"
    custom.parent.mkdir()
    (world / "ds_native").rename(custom)
    out = repaired(world, capfd)
    assert "both formats" not in out
    assert out.startswith("Nothing to repair in the LeRobot dataset: it is complete (2 episode(s)).")
    assert re.search(r"\[native\] not looked at: there is no native layout at .*ds_native.*--native-root PATH", out)
    assert repaired(world, capfd, "--native-root", str(custom)).startswith(
        "Nothing to repair: both formats are complete and hold the same 2 episode(s).")
    line = one_line(repair.main, [str(world / "ds"), "--native-root", str(world / "nowhere")], capfd,
                    "teledex-repair")
    assert re.search(r"--native-root .*nowhere does not exist", line), line


# ---- a root that is a file --------------------------------------------------------------------------------------

def test_a_dataset_root_that_is_a_file_gets_one_line_from_every_command(world, tmp_path, capfd):
    shutil.rmtree(world / "ds")
    (world / "ds").write_text("not a dataset\n")
    same = (f"{world / 'ds'} is a file, not a folder: a dataset root (LeRobot or native) is a folder; give the "
            "folder's path, or move the file away")
    in_process = {
        "teledex-repair": (repair.main, [str(world / "ds")]),
        "teledex-convert": (convert.main, ["to-native", str(world / "ds"), str(world / "out")]),
        "teledex-sync-report": (sync_report.main, [str(world / "ds")]),
        "teledex-merge": (merge.main, [str(world / "merged"), str(world / "ds"), "--repo-id", "local/m"]),
    }
    for program, (main, argv) in in_process.items():
        assert one_line(main, argv, capfd, program) == same, program
    # the file as a target: to-lerobot writes there
    to_lerobot = ["to-lerobot", str(world / "ds_native"), str(world / "ds"), "--repo-id", "local/ds"]
    assert one_line(convert.main, to_lerobot, capfd, "teledex-convert") == same
    for resume in ("false", "true"):
        done = subprocess.run(command("teledex-record", "--robot.type=teledex", "--robot.backend=fake",
                                      "--teleop.type=teledex_replay", "--dataset.repo_id=local/ds",
                                      f"--dataset.root={world / 'ds'}", "--dataset.single_task=grasp",
                                      "--dataset.num_episodes=1", "--dataset.push_to_hub=false", f"--resume={resume}"),
                              env=command_env(tmp_path), capture_output=True, text=True, timeout=300,
                              stdin=subprocess.DEVNULL)
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 2 and lines[-1] == f"teledex-record: error: {same}", done.stderr[-3000:]
        assert "Traceback" not in done.stderr
    assert (world / "ds").read_text() == "not a dataset\n"
