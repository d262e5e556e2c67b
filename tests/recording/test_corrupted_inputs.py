"""One line for every bad file (issue 23): every command that reads files, given a corrupted input (a JSON field of
the wrong type, a symlink loop, a truncated or empty or missing file, a manifest whose SHA-256 does not match, a name
that walks out of its folder), ends with one line on stderr naming the file, the field and the fix, exit code 2, no
traceback, and leaves every file it was given as it was (nothing written anywhere either, not at ../../x).
teledex-repair instead restores what it can (and says how) or names what it cannot; it never calls a dataset whose
info.json is invalid complete.

The commands run in-process, as their console scripts do (main(argv)), on small datasets recorded once per module by
teledex-record's own Recorder (fake devices, a few frames, one small camera).
"""

import fnmatch
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from commands import command_env
from lerobot.configs.dataset import DatasetRecordConfig

from lerobot_robot_teledex import TeledexConfig
from lerobot_teleoperator_teledex import TeledexReplayConfig
from teledex_lerobot.cli import calibrate_hand, convert, hand_inspect, merge, repair, sync_report
from teledex_lerobot.kinematics.catalogue import resolve_urdf
from teledex_lerobot.paths import STREAMS_DIR
from teledex_lerobot.recording.recorder import Recorder, TeledexRecordConfig

# ---- the files every case starts from ----------------------------------------------------------------------------


def record(root: Path, episodes: int) -> None:
    Recorder(TeledexRecordConfig(
        robot=TeledexConfig(backend="fake"), teleop=TeledexReplayConfig(),
        dataset=DatasetRecordConfig(repo_id=f"local/{root.name}", root=str(root), single_task="grasp", fps=25,
                                    episode_time_s=0.2, reset_time_s=0, num_episodes=episodes,
                                    push_to_hub=False))).run()


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> Path:
    """ds (+ ds_native): two episodes; ds2 (+ ds2_native): one, the second station of a merge; an operator stream,
    a recorded session and a hand URDF."""
    world = tmp_path_factory.mktemp("pristine") / "w"
    world.mkdir()
    record(world / "ds", 2)
    record(world / "ds2", 1)
    shutil.copyfile(STREAMS_DIR / "open_close.npz", world / "stream.npz")
    shutil.copyfile(STREAMS_DIR / "open_close.datagrams.jsonl", world / "session.datagrams.jsonl")
    shutil.copyfile(resolve_urdf("linkerhand_o6", "right"), world / "hand.urdf")
    return world


# ---- the commands ------------------------------------------------------------------------------------------------
# name -> (program, its main, its argv in the world w)
COMMANDS: dict[str, tuple[str, Callable, Callable[[Path], list[str]]]] = {
    "sync-report lerobot": ("teledex-sync-report", sync_report.main, lambda w: [str(w / "ds")]),
    "sync-report native": ("teledex-sync-report", sync_report.main, lambda w: [str(w / "ds_native")]),
    "convert to-native": ("teledex-convert", convert.main,
                          lambda w: ["to-native", str(w / "ds"), str(w / "converted_native")]),
    "convert to-lerobot": ("teledex-convert", convert.main,
                           lambda w: ["to-lerobot", str(w / "ds_native"), str(w / "converted"), "--repo-id",
                                      "local/converted"]),
    "convert to-vitra": ("teledex-convert", convert.main,
                         lambda w: ["to-vitra", str(w / "ds_native"), str(w / "vitra")]),
    "convert stream-to-datagrams": ("teledex-convert", convert.main,
                                    lambda w: ["stream-to-datagrams", str(w / "stream.npz"),
                                               str(w / "out.datagrams.jsonl")]),
    "repair": ("teledex-repair", repair.main, lambda w: [str(w / "ds")]),
    "merge": ("teledex-merge", merge.main,
              lambda w: [str(w / "merged"), str(w / "ds"), str(w / "ds2"), "--repo-id", "local/merged"]),
    "calibrate-hand": ("teledex-calibrate-hand", calibrate_hand.main,
                       lambda w: ["--hand", "linkerhand_o6", "--operator", "alice",
                                  "--recording", str(w / "session.datagrams.jsonl")]),
    "hand-inspect": ("teledex-hand-inspect", hand_inspect.main,
                     lambda w: [str(w / "hand.urdf"), "--png", str(w / "hand.png")]),
}


# ---- corruptions -------------------------------------------------------------------------------------------------

def native_episode(w: Path, index: int = 1, root: str = "ds_native") -> Path:
    return next((w / root).glob(f"session_*/episode_{index:06d}"))


def sidecar(w: Path, index: int = 1) -> Path:
    """ds's sidecar of episode `index` (named by the uuid its native twin's manifest holds)."""
    episode_uuid = json.loads((native_episode(w, index) / "manifest.json").read_text())["episode_uuid"]
    return w / "ds" / "meta" / "teledex_episodes" / f"{episode_uuid}.json"


def edit_json(path: Path, change: Callable[[dict], object]) -> None:
    """Rewrite a JSON file with change(data) (None: data changed in place)."""
    data = json.loads(path.read_text())
    changed = change(data)
    path.write_text(json.dumps(data if changed is None else changed, indent=2))


def rehash(folder: Path) -> None:
    """The manifest made to match the files again: a file consistently written but wrong, not a damaged one."""
    def update(manifest: dict) -> None:
        for name, entry in manifest["files"].items():
            data = (folder / name).read_bytes()
            entry.update(bytes=len(data), sha256=hashlib.sha256(data).hexdigest())
    edit_json(folder / "manifest.json", update)


def edit_native_metadata(change: Callable[[dict], object], index: int = 1) -> Callable[[Path], None]:
    def corrupt(w: Path) -> None:
        folder = native_episode(w, index)
        edit_json(folder / "metadata.json", change)
        rehash(folder)
    return corrupt


def setter(dotted: str, value) -> Callable[[dict], None]:
    *parents, leaf = dotted.split(".")

    def change(data: dict) -> None:
        for key in parents:
            data = data[key]
        data[leaf] = value
    return change


def cut(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[:len(data) // 2])


def empty(path: Path) -> None:
    path.write_bytes(b"")


def missing(path: Path) -> None:
    path.unlink()


def loop(path: Path) -> None:
    """The file replaced by a symlink to itself (ELOOP on every open)."""
    path.unlink() if path.is_file() or path.is_symlink() else shutil.rmtree(path)
    path.symlink_to(path.name)


def same_size_edit(path: Path) -> None:
    """A byte changed, the size kept: only the SHA-256 can tell."""
    text = path.read_text()
    assert '"grasp"' in text
    path.write_text(text.replace('"grasp"', '"grasq"', 1))


def on(relative: str | Callable[[Path], Path], *damages: Callable[[Path], None]) -> Callable[[Path], None]:
    def corrupt(w: Path) -> None:
        path = relative(w) if callable(relative) else w / relative
        for damage in damages:
            damage(path)
    return corrupt


def all_of(*corruptions: Callable[[Path], None]) -> Callable[[Path], None]:
    def corrupt(w: Path) -> None:
        for each in corruptions:
            each(w)
    return corrupt


def remove(relative: str) -> Callable[[Path], None]:
    def corrupt(w: Path) -> None:
        path = w / relative
        path.unlink() if path.is_file() else shutil.rmtree(path)
    return corrupt


def rewrite_npz(relative: str, **replace) -> Callable[[Path], None]:
    def corrupt(w: Path) -> None:
        with np.load(w / relative, allow_pickle=False) as archive:
            arrays = {key: archive[key] for key in archive.files}
        np.savez(w / relative, **{**arrays, **replace})
    return corrupt


INFO = "ds/meta/info.json"
BACKUP = "ds/meta/info.teledex-backup.json"
DATA_1 = "ds/data/chunk-000/file-001.parquet"
EPISODES_1 = "ds/meta/episodes/chunk-000/file-001.parquet"
TRAVERSAL = "../../../../x"  # from the deepest folder a command writes into, out of the world


def telemetry(w: Path) -> Path:
    return native_episode(w) / "telemetry.npz"


def manifest(w: Path) -> Path:
    return native_episode(w) / "manifest.json"


def metadata(w: Path) -> Path:
    return native_episode(w) / "metadata.json"


def manifest_field(dotted: str, value) -> Callable[[Path], None]:
    return on(manifest, lambda p: edit_json(p, setter(dotted, value)))


# ---- the table ---------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Case:
    command: str
    name: str
    corrupt: Callable[[Path], None]
    expect: str  # a regex the error line (or, repaired, the output) must match
    repaired: bool = False  # teledex-repair: exit 0, having done what `expect` says
    changes: tuple[str, ...] = ()  # repaired: the files it may change (globs in the world), besides <root>.damaged/
    usage: bool = False  # argparse's own error: its usage lines come first
    argv: Callable[[Path], list[str]] | None = None  # other than the command's usual arguments

    @property
    def id(self) -> str:
        return f"{self.command}: {self.name}"


FIX = r".*teledex-repair"  # the fix every dataset error names
# info.json restored whole from the recorder's backup, written before the last save: its counts are recomputed, and
# with them the statistics
FROM_BACKUP = (INFO, "ds/meta/stats.json")
NATIVE_1 = "ds_native/session_*/episode_000001*"
DROP_1 = ("ds/meta/info.json", "ds/meta/stats.json", "ds/data/chunk-000/file-001.parquet",
          "ds/meta/episodes/chunk-000/file-001.parquet", "ds/videos/*/chunk-000/file-001.mp4", NATIVE_1,
          "ds/meta/teledex_episodes/*")

LEROBOT_INFO_CASES = [
    ("fps 'fast'", on(INFO, lambda p: edit_json(p, setter("fps", "fast"))), r"info\.json.*'fps'.*'fast'" + FIX),
    ("features a list", on(INFO, lambda p: edit_json(p, lambda d: d.update(features=list(d["features"])))),
     r"info\.json.*'features'" + FIX),
    ("info.json a list", on(INFO, lambda p: edit_json(p, lambda d: [d])), r"info\.json.*(list|object)" + FIX),
    ("info.json empty", on(INFO, empty), r"info\.json.*not valid JSON" + FIX),
    ("info.json missing", on(INFO, missing), r"info\.json is missing" + FIX),
    ("info.json a symlink loop", on(INFO, loop), r"info\.json cannot be read \(Too many levels of symbolic" + FIX),
    ("data parquet cut", on(DATA_1, cut), r"file-001\.parquet.*(truncated|cannot be read)" + FIX),
    ("sidecar sync_policy a list", on(sidecar, lambda p: edit_json(p, setter("sync_policy", [100.0]))),
     r"teledex_episodes/.*\.json 'sync_policy' is a list.*restore it from a copy"),
]
NATIVE_CASES = [
    ("telemetry.npz cut", on(telemetry, cut), r"telemetry\.npz.*truncated" + FIX),
    ("telemetry.npz empty", on(telemetry, empty), r"telemetry\.npz.*truncated" + FIX),
    ("telemetry.npz missing", on(telemetry, missing), r"telemetry\.npz.*missing" + FIX),
    ("telemetry.npz a symlink loop", on(telemetry, loop), r"telemetry\.npz.*missing" + FIX),
    ("metadata.json SHA-256 wrong", on(metadata, same_size_edit), r"metadata\.json.*SHA-256.*manifest" + FIX),
    ("metadata.json control_frequency_hz 'fast'", edit_native_metadata(setter("collection.control_frequency_hz",
                                                                              "fast")),
     r"metadata\.json.*'collection\.control_frequency_hz'.*'fast'" + FIX),
    ("metadata.json a list", edit_native_metadata(lambda d: [d]), r"metadata\.json.*(list|object)" + FIX),
    ("manifest.json files a list", manifest_field("files", ["telemetry.npz"]), r"manifest\.json.*'files'" + FIX),
    ("manifest.json frames 'many'", manifest_field("frames", "many"), r"manifest\.json.*'frames'.*'many'" + FIX),
    ("manifest.json empty", on(manifest, empty), r"manifest\.json.*not valid JSON" + FIX),
    ("manifest.json missing", on(manifest, missing), r"manifest\.json.*missing" + FIX),
    ("episode uuid ../../x", manifest_field("episode_uuid", TRAVERSAL), r"manifest\.json.*'episode_uuid'.*uuid"),
]
CASES = [
    *[Case(command, name, corrupt, expect) for command in ("sync-report lerobot", "convert to-native", "merge")
      for name, corrupt, expect in LEROBOT_INFO_CASES],
    Case("sync-report lerobot", "data parquet missing", remove(DATA_1), r"file-001\.parquet.*missing" + FIX),
    Case("convert to-native", "data parquet missing", remove(DATA_1), r"file-001\.parquet.*missing" + FIX),
    Case("convert to-native", "episodes parquet cut", on(EPISODES_1, cut),
         r"episodes/chunk-000/file-001\.parquet.*(truncated|cannot be read)" + FIX),
    Case("merge", "episodes parquet cut", on(EPISODES_1, cut),
         r"episodes/chunk-000/file-001\.parquet.*(truncated|cannot be read)" + FIX),
    Case("convert to-native", "session id ../../x", on(sidecar, lambda p: edit_json(p, setter(
        "metadata.episode.session_id", TRAVERSAL))),
         r"teledex_episodes/.*\.json 'metadata\.episode\.session_id' is '\.\./\.\./\.\./\.\./x', not a name.*restore"),
    Case("sync-report lerobot", "dataset root a symlink loop", on("ds", loop), r"ds.*not a folder"),
    Case("sync-report native", "native root a symlink loop", on("ds_native", loop), r"ds_native.*not a folder"),
    *[Case(command, name, corrupt, expect)
      for command in ("sync-report native", "convert to-lerobot", "convert to-vitra", "merge")
      for name, corrupt, expect in NATIVE_CASES],
    Case("convert to-lerobot", "camera_info.json a list", on(lambda w: native_episode(w) / "camera_info.json",
                                                             lambda p: edit_json(p, lambda d: [d]),
                                                             lambda p: rehash(p.parent)),
         r"camera_info\.json" + FIX),
    Case("convert to-lerobot", "camera_info.json depth_scale_m 'mm'", on(
        lambda w: native_episode(w) / "camera_info.json", lambda p: edit_json(p, setter("top.depth_scale_m", "mm")),
        lambda p: rehash(p.parent)), r"camera_info\.json: camera 'top' has depth_scale_m 'mm'" + FIX),
    Case("convert to-lerobot", "manifest.json depth_min 'near'", manifest_field("depth", {"top": {
        "depth_min": "near", "depth_max": 10.0, "shift": 3.5, "use_log": True}}), r"manifest\.json.*'depth'" + FIX),
    Case("convert to-lerobot", "manifest.json depth of no camera", manifest_field("depth", {"side": {
        "depth_min": 0.01, "depth_max": 10.0, "shift": 3.5, "use_log": True}}),
         r"manifest\.json: depth streams \['side'\] are not among its cameras" + FIX),
    Case("convert to-vitra", "episode id ../../x", edit_native_metadata(setter("episode.episode_id", TRAVERSAL)),
         r"metadata\.json.*'episode\.episode_id'.*'\.\./\.\./\.\./\.\./x'" + FIX),
    Case("convert to-vitra", "hardware.rigs base_pose 'here'", edit_native_metadata(
        lambda data: setter("hardware.rigs", {"left": {**data["hardware"]["rig"], "base_pose": "here"}})(data)),
         r"metadata\.json: 'hardware\.rigs\.left\.base_pose' is not a 4x4 pose" + FIX),
    # teledex-repair: what it can restore, it does; what it cannot, it names (and changes nothing)
    Case("repair", "fps 'fast'", on(INFO, lambda p: edit_json(p, setter("fps", "fast"))),
         r"meta/info\.json: fps 'fast' -> 25 \(from meta/info\.teledex-backup\.json, as the timestamps in data/",
         True, (INFO,)),
    Case("repair", "fps 'fast', no backup", all_of(remove(BACKUP), on(INFO, lambda p: edit_json(
        p, setter("fps", "fast")))), r"meta/info\.json: fps 'fast' -> 25 \(from the data: .*the native episodes' "
         r"metadata in .*ds_native say 25\)", True, (INFO,)),
    Case("repair", "fps 'fast', no backup, no native root", all_of(remove(BACKUP), remove("ds_native"), on(
        INFO, lambda p: edit_json(p, setter("fps", "fast")))),
         r"meta/info\.json: fps 'fast' -> 25 \(from the data: the timestamps in data/", True, (INFO,)),
    Case("repair", "fps 0, no backup, no native root, no data", all_of(remove(BACKUP), remove("ds_native"), remove(
        "ds/data"), remove("ds/meta/teledex_episodes"), on(INFO, lambda p: edit_json(p, setter("fps", 0)))),
         r"info\.json.*'fps' is 0.*cannot be restored"),
    Case("repair", "features a list", on(INFO, lambda p: edit_json(p, lambda d: d.update(
        features=list(d["features"])))), r"meta/info\.json: features .* \(from meta/info\.teledex-backup\.json\)",
         True, (INFO,)),
    Case("repair", "features a list, no backup", all_of(remove(BACKUP), on(INFO, lambda p: edit_json(
        p, lambda d: d.update(features=list(d["features"]))))), r"info\.json.*'features'.*cannot be restored"),
    Case("repair", "info.json a list", on(INFO, lambda p: edit_json(p, lambda d: [d])),
         r"restored meta/info\.json from meta/info\.teledex-backup\.json", True, FROM_BACKUP),
    Case("repair", "info.json empty", on(INFO, empty), r"restored meta/info\.json from", True, FROM_BACKUP),
    Case("repair", "info.json missing", on(INFO, missing), r"restored meta/info\.json from", True, FROM_BACKUP),
    Case("repair", "info.json a symlink loop", on(INFO, loop), r"restored meta/info\.json from", True, FROM_BACKUP),
    Case("repair", "info.json empty, no backup", all_of(remove(BACKUP), on(INFO, empty)),
         r"info\.json.*no valid meta/info\.teledex-backup\.json"),
    Case("repair", "data parquet cut", on(DATA_1, cut), r"set aside data/chunk-000/file-001\.parquet", True, DROP_1),
    Case("repair", "episodes parquet cut", on(EPISODES_1, cut),
         r"set aside meta/episodes/chunk-000/file-001\.parquet", True, DROP_1),
    Case("repair", "telemetry.npz cut", on(telemetry, cut), r"set aside session_.*episode_000001.*truncated", True,
         (NATIVE_1,)),
    Case("repair", "metadata.json SHA-256 wrong", on(metadata, same_size_edit),
         r"set aside session_.*episode_000001.*SHA-256", True, (NATIVE_1,)),
    Case("repair", "metadata.json control_frequency_hz 'fast'", edit_native_metadata(setter(
        "collection.control_frequency_hz", "fast")), r"set aside session_.*episode_000001.*control_frequency_hz",
         True, (NATIVE_1,)),
    Case("repair", "episode uuid ../../x", manifest_field("episode_uuid", TRAVERSAL),
         r"set aside session_.*episode_000001.*episode_uuid", True, (NATIVE_1,)),
    # an operator stream, a recorded session, a URDF: read without LeRobot
    *[Case("convert stream-to-datagrams", name, corrupt, r"stream\.npz" + expect) for name, corrupt, expect in [
        ("stream cut", on("stream.npz", cut), ".*not an operator stream .npz, cut or damaged"),
        ("stream empty", on("stream.npz", empty), ".*not an .npz archive"),
        ("stream missing", on("stream.npz", missing), ".*not a file"),
        ("stream a symlink loop", on("stream.npz", loop), ".*not a file"),
        ("stream timestamps strings", rewrite_npz("stream.npz", timestamps_ns=np.array(["fast"] * 3)),
         ".*'timestamps_ns'"),
    ]],
    *[Case("calibrate-hand", name, corrupt, r"session\.datagrams\.jsonl" + expect) for name, corrupt, expect in [
        ("session cut mid-line", on("session.datagrams.jsonl", cut), r": line \d+: not a .*; record the session again"),
        ("session empty", on("session.datagrams.jsonl", empty), " is empty; record the session again"),
        ("session missing", on("session.datagrams.jsonl", missing), " does not exist; give a recorded session"),
        ("session a symlink loop", on("session.datagrams.jsonl", loop), " is a symbolic link loop.*replace the link"),
        ("session header a list", on("session.datagrams.jsonl", lambda p: p.write_text(
            "[]\n" + p.read_text().split("\n", 1)[1])), ": line 1: .*not a JSON object.*record the session again"),
    ]],
    Case("calibrate-hand", "operator ../../x", lambda w: None, r"argument --operator: operator name", usage=True,
         argv=lambda w: ["--hand", "linkerhand_o6", "--operator", "../../x", "--recording",
                         str(w / "session.datagrams.jsonl")]),
    Case("calibrate-hand", "hand URDF empty", on("hand.urdf", empty), r"hand\.urdf at line 1.*Fix the XML syntax",
         argv=lambda w: ["--hand", str(w / "hand.urdf"), "--operator", "alice", "--recording",
                         str(w / "session.datagrams.jsonl")]),
    *[Case("hand-inspect", name, on("hand.urdf", damage), r"hand\.urdf" + expect) for name, damage, expect in [
        ("URDF cut", cut, r" at line \d+.*Fix the XML syntax"),
        ("URDF empty", empty, " at line 1.*Fix the XML syntax"),
        ("URDF missing", missing, ". Give an existing .urdf path"),
        ("URDF a symlink loop", loop, ". Give an existing .urdf path"),
        ("URDF joint limit 'fast'", lambda p: p.write_text(p.read_text().replace('lower="', 'lower="fast', 1)),
         r", joint '.*': <limit lower=\"fast.*not a number; fix the URDF"),
    ]],
]


def argv_of(case: Case, w: Path) -> list[str]:
    return (case.argv or COMMANDS[case.command][2])(w)


# ---- running a case ----------------------------------------------------------------------------------------------

def snapshot(root: Path) -> dict[str, str]:
    """Every path under root (symlinks not followed) -> what it is: a file's SHA-256, a link's target, a folder."""
    entries = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder) / name
            relative = str(path.relative_to(root))
            if path.is_symlink():
                entries[relative] = f"link -> {os.readlink(path)}"
            elif path.is_dir():
                entries[relative] = "folder"
            else:
                entries[relative] = hashlib.sha256(path.read_bytes()).hexdigest()
    return entries


def run(main: Callable, argv: list[str], capfd) -> tuple[int | str, str, str]:
    """(exit code, or the exception that escaped as a traceback would; stdout; stderr)."""
    try:
        main(argv)
        code = 0
    except SystemExit as end:
        code = end.code if isinstance(end.code, int) else (0 if end.code is None else 1)
    except Exception as error:  # a traceback for the user
        code = "traceback: " + "".join(traceback.format_exception_only(error)).strip()
    out, err = capfd.readouterr()
    return code, out, err


@pytest.fixture
def world(pristine, tmp_path, monkeypatch) -> Path:
    w = tmp_path / "deep" / "deeper" / "w"  # a traversal out of w still lands inside tmp_path, where it is seen
    shutil.copytree(pristine, w, symlinks=True)
    monkeypatch.setenv("TELEDEX_CALIBRATIONS_DIR", str(w / "calibrations"))
    monkeypatch.chdir(w)
    return w


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_a_corrupted_input_gets_one_line(case: Case, world: Path, pristine: Path, tmp_path, capfd):
    program, main, _ = COMMANDS[case.command]
    case.corrupt(world)
    capfd.readouterr()
    before = snapshot(tmp_path)
    code, out, err = run(main, argv_of(case, world), capfd)
    after = snapshot(tmp_path)
    lines = err.strip().splitlines()
    if not case.repaired:
        assert code == 2, f"exit {code}\nstdout: {out[-2000:]}\nstderr: {err[-3000:]}"
        if case.usage:  # argparse: `usage: ...` (wrapped), then its one error line
            assert lines[0].startswith("usage: ") and not any("error" in line for line in lines[:-1]), err
            lines = lines[-1:]
        assert len(lines) == 1, f"{len(lines)} lines on stderr:\n{err[-3000:]}"
        assert lines[0].startswith(f"{program}: error: "), lines[0]
        assert re.search(case.expect, lines[0]), f"{case.expect!r} not in {lines[0]!r}"
        assert after == before, f"changed: {sorted(set(after.items()) ^ set(before.items()))}"
        return
    assert code == 0, f"exit {code}\nstdout: {out[-2000:]}\nstderr: {err[-3000:]}"
    assert "Traceback" not in err, err
    assert re.search(case.expect, out), f"{case.expect!r} not in\n{out}"
    allowed = [*case.changes, "ds.damaged*", "ds_native.damaged*"]  # what is set aside moves to <root>.damaged/
    prefix = f"{world.relative_to(tmp_path)}/"

    def may_change(relative: str) -> bool:
        return relative.startswith(prefix) and any(fnmatch.fnmatch(relative[len(prefix):], each) for each in allowed)

    changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k) and not may_change(k))
    assert not changed, f"changed beyond {allowed}: {changed}"
    again_code, again, again_err = run(main, argv_of(case, world), capfd)
    assert again_code == 0 and "Traceback" not in again_err, f"second repair: {again_code}\n{again}\n{again_err}"
    if case.changes in ((INFO,), FROM_BACKUP):  # info.json is whole again, and says so
        assert again.startswith("Nothing to repair"), again
        info = json.loads((world / INFO).read_text())
        assert info["fps"] == 25 and isinstance(info["features"], dict)
        recorded = json.loads((pristine / INFO).read_text())
        assert [info[k] for k in ("total_episodes", "total_frames")] == [recorded[k] for k in ("total_episodes",
                                                                                             "total_frames")]


@pytest.mark.parametrize("command", ["sync-report lerobot", "sync-report native", "repair", "hand-inspect"])
def test_the_good_files_pass(command, world, capfd):
    """The same commands on the uncorrupted files: the table's errors come from the corruptions alone."""
    code, out, err = run(COMMANDS[command][1], COMMANDS[command][2](world), capfd)
    assert code == 0, f"{code}\n{out}\n{err}"
    if command == "repair":
        assert out.startswith("Nothing to repair"), out
    if command == "hand-inspect":
        assert (world / "hand.png").is_file() and "thumb" in out


def test_the_paths_without_lerobot_fail_without_it(world, tmp_path):
    """sync-report on a native root, to-vitra and stream-to-datagrams read no LeRobot file: their one line comes
    without LeRobot ever being imported (they work where it is not installed)."""
    cut(telemetry(world))
    cut(world / "stream.npz")
    calls = [("sync_report", [str(world / "ds_native")]),
             ("convert", ["to-vitra", str(world / "ds_native"), str(world / "vitra")]),
             ("convert", ["stream-to-datagrams", str(world / "stream.npz"), str(world / "out.datagrams.jsonl")])]
    script = f"""
import importlib, sys
for module, argv in {calls!r}:
    try:
        importlib.import_module(f"teledex_lerobot.cli.{{module}}").main(argv)
    except SystemExit as end:
        assert end.code == 2, (argv, end.code)
    else:
        raise AssertionError(f"{{argv}} did not fail")
assert not [m for m in sys.modules if m.split(".")[0] == "lerobot"], "LeRobot was imported"
"""
    done = subprocess.run([sys.executable, "-c", script], env=command_env(tmp_path), capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stderr.strip().splitlines()
    assert [line.split(": error: ")[0] for line in lines] == ["teledex-sync-report", "teledex-convert",
                                                              "teledex-convert"], done.stderr
