"""The sync rule's version (issue 34): a recording stores, beside its thresholds, the version of the rule that judged
its frames (session.json, each episode's metadata.json and LeRobot sidecar), and teledex-convert judges every stored
frame again by that version, never by whatever rule is today's. A recording stamped with version 1 converts exactly
as one from before the version was stored (which counts as version 1); once the rule changes (a version 2 here),
both still convert by version 1; one judged by a version this teledex-lerobot does not know is refused in one line,
and nothing is written.

The commands run in-process (main(argv)) on one small recording made once per module by teledex-record's Recorder
(fake devices, a few frames).
"""

import json
import re
import shutil
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from test_corrupted_inputs import edit_json, native_episode, record, rehash, run, sidecar, snapshot

from teledex_lerobot.cli import convert
from teledex_lerobot.errors import DataError
from teledex_lerobot.recording.conversions import layout_of, native_frames
from teledex_lerobot.storage.native import load_native_episode, native_episode_dirs
from teledex_lerobot.storage.sync_rule import RULE_VERSION
from teledex_lerobot.storage.teledex_columns import SYNC_VALID
from teledex_lerobot.sync import SYNC_RULE_VERSION, SYNC_RULES, SyncPolicy

CONVERSIONS = {
    "to-lerobot": lambda w: ["to-lerobot", str(w / "ds_native"), str(w / "converted"), "--repo-id",
                             "local/converted"],
    "to-native": lambda w: ["to-native", str(w / "ds"), str(w / "converted")],
}


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> Path:
    world = tmp_path_factory.mktemp("rule") / "w"
    world.mkdir()
    record(world / "ds", 1)
    return world


def copy_of(pristine: Path, where: Path) -> Path:
    shutil.copytree(pristine, where, symlinks=True)
    return where


def session_json(w: Path) -> Path:
    return next((w / "ds_native").glob("session_*/session.json"))


def stored_policies(w: Path) -> list[dict]:
    """Every copy of the sync policy the recording stores."""
    metadata = json.loads((native_episode(w, 0) / "metadata.json").read_text())
    lerobot_sidecar = json.loads(sidecar(w, 0).read_text())
    return [json.loads(session_json(w).read_text())["sync_policy"], metadata["sync"]["policy"],
            lerobot_sidecar["sync_policy"], lerobot_sidecar["metadata"]["sync"]["policy"]]


def set_rule_version(w: Path, version: int | None) -> None:
    """Every stored policy says this version; None: none, as a recording from before the version was stored."""
    def stamp(policy: dict) -> None:
        policy.pop(RULE_VERSION, None)
        if version is not None:
            policy[RULE_VERSION] = version

    episode = native_episode(w, 0)
    edit_json(episode / "metadata.json", lambda metadata: stamp(metadata["sync"]["policy"]))
    rehash(episode)
    edit_json(session_json(w), lambda session: stamp(session["sync_policy"]))

    def stamp_sidecar(data: dict) -> None:
        stamp(data["sync_policy"])
        stamp(data["metadata"]["sync"]["policy"])
    edit_json(sidecar(w, 0), stamp_sidecar)


def converted(w: Path, direction: str, capfd) -> dict:
    """What the conversion wrote, but for the stored policies: the LeRobot data, or the native telemetry and
    metadata."""
    code, out, err = run(convert.main, CONVERSIONS[direction](w), capfd)
    assert code == 0, f"exit {code}\nstdout: {out[-2000:]}\nstderr: {err[-3000:]}"
    if direction == "to-lerobot":
        table = pa.concat_tables([pq.read_table(p) for p in sorted((w / "converted" / "data").rglob("*.parquet"))])
        return table.to_pydict()
    (folder,) = native_episode_dirs(w / "converted")
    episode = load_native_episode(folder, verify_checksums=True)
    metadata = json.loads(json.dumps(episode.metadata))
    del metadata["sync"]["policy"]
    return {"telemetry": {key: values.tolist() for key, values in episode.telemetry.items()}, "metadata": metadata}


def test_the_recording_stores_its_rule_version_beside_the_thresholds(pristine):
    assert stored_policies(pristine) == 4 * [{**asdict(SyncPolicy()), RULE_VERSION: SYNC_RULE_VERSION}]
    assert SYNC_RULE_VERSION == 1  # today's rule; a new one gets a new version, and this test a second recording


@pytest.mark.parametrize("direction", CONVERSIONS)
def test_version_1_converts_as_a_recording_without_a_version_does(pristine, tmp_path, capfd, direction):
    stamped = copy_of(pristine, tmp_path / "stamped")
    unstamped = copy_of(pristine, tmp_path / "unstamped")
    set_rule_version(unstamped, None)
    assert stored_policies(unstamped) == 4 * [asdict(SyncPolicy())]
    written = converted(stamped, direction, capfd)
    assert written == converted(unstamped, direction, capfd)
    recorded = load_native_episode(native_episode(pristine, 0)).telemetry
    valid = written[SYNC_VALID] if direction == "to-lerobot" else written["telemetry"]["sync_valid"]
    assert np.array_equal(np.asarray(valid).reshape(-1), recorded["sync_valid"])  # as recorded


def test_after_the_rule_changes_a_recording_is_judged_by_its_own_version(pristine, tmp_path, monkeypatch):
    """A version 2 that judges every frame out of sync: recordings of version 1, stamped or not, still convert by
    version 1; one stamped 2 is judged by it (and then disagrees with what was recorded)."""
    def never_in_sync(timestamps_ns, checked_ns, policy):
        return replace(SYNC_RULES[1](timestamps_ns, checked_ns, policy), valid=False)
    monkeypatch.setitem(SYNC_RULES, 2, never_in_sync)

    def frames_valid(w: Path) -> list[bool]:
        episode = load_native_episode(native_episode(w, 0))
        return [frame.packet.valid for frame in native_frames(episode, layout_of(episode))]

    recorded = load_native_episode(native_episode(pristine, 0)).telemetry["sync_valid"].tolist()
    assert any(recorded)
    assert frames_valid(pristine) == recorded
    unstamped = copy_of(pristine, tmp_path / "unstamped")
    set_rule_version(unstamped, None)
    assert frames_valid(unstamped) == recorded
    judged_by_2 = copy_of(pristine, tmp_path / "judged_by_2")
    set_rule_version(judged_by_2, 2)
    with pytest.raises(DataError, match=r"sync_valid disagrees .* \(sync rule version 2\)"):
        frames_valid(judged_by_2)


@pytest.mark.parametrize("direction", CONVERSIONS)
def test_a_rule_newer_than_this_teledex_lerobot_is_refused_in_one_line(pristine, tmp_path, capfd, direction):
    w = copy_of(pristine, tmp_path / "w")
    set_rule_version(w, 2)
    before = snapshot(tmp_path)
    code, out, err = run(convert.main, CONVERSIONS[direction](w), capfd)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, f"exit {code}\nstdout: {out[-2000:]}\nstderr: {err[-3000:]}"
    where = r"ds_native/session_[^/]+/episode_000000/metadata\.json" if direction == "to-lerobot" \
        else r"ds/meta/teledex_episodes/[0-9a-f-]+\.json"
    assert re.fullmatch(rf"teledex-convert: error: \S*{where}: its frames were judged by sync rule version 2, newer "
                        r"than this teledex-lerobot knows \(up to 1\); install a newer teledex-lerobot to convert it",
                        lines[0]), lines[0]
    assert snapshot(tmp_path) == before  # nothing written
