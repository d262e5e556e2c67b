"""Repair what a killed recording left behind, and reconcile the two formats by episode uuid, losing nothing saved.

Nothing is deleted: whatever is set aside moves to `<root>.damaged/<timestamp>/`, its path kept, so it can still be
inspected. Every step is a rename or an atomic file replacement, so a repair that is itself killed leaves a dataset
that the next repair finishes.

LeRobot dataset: a torn, empty, missing or looping info.json is restored from the recorder's last good copy, and so
is a field of the wrong type; what cannot be restored is named, and nothing is changed. Its fps is checked against
the rate the data records (the timestamps in data/, the episodes' metadata in the sidecars and the native twins;
storage/data_checks.py says which wins): one they agree on replaces a wrong or lost fps, from the backup where it
holds the same; sources that disagree among themselves are named and nothing is guessed. A data file that lost a
column info.json declares gets it back from the native twins of its episodes, once each twin is found to hold the
same values in every column the file kept (the file as it was is kept aside); a column the twins cannot give back
is named, and no row is ever dropped to make a file fit. Parquet files without a footer
(written when the process died) are set aside, and so are data, video and episode-metadata files no committed
episode refers to (an episode whose save was cut short), LeRobot's leftover staging folders, and sidecars of
episodes that were never committed; the last episodes' metadata rows are dropped when their rows or video never
closed (LeRobot flushes the metadata even after its parquet footer failed); info.json's counts and stats.json are
recomputed from the committed episodes (with none committed, stats.json is set aside), and tasks.parquet holds
their tasks only.
Native layout: a staged episode (`.partial`) whose uuid the LeRobot dataset committed is committed too (the
recorder died between the two commits); every other staged episode, every episode that does not load, and every
episode whose uuid is not the LeRobot episode's at the same index is set aside. LeRobot episodes with no native twin
are reported.
"""

import json
import os
import shutil
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from . import data_checks, fields
from .errors import DatasetError
from .lerobot_meta import INFO_COUNTS, INFO_FIELDS, field_problem, info_path, read_info, read_json, sidecar_path
from .native import (
    PARTIAL_SUFFIX,
    NativeEpisode,
    NativeFormatError,
    episode_dir_name,
    episode_index_of,
    fsync_dir,
    load_native_episode,
    write_json_atomic,
)
from .teledex_columns import EPISODE_UUID, INFO_BACKUP, SIDECAR_DIR, uuid_from_int64_pair


class Repair:
    def __init__(self, root: Path):
        self.root = Path(root)
        self.quarantine = self.root.with_name(f"{self.root.name}.damaged") / datetime.now().strftime("%Y%m%d-%H%M%S-%f")
        self.actions: list[str] = []
        # of the actions, those that leave the statistics as they were: fields of info.json restored, and a data
        # file's lost columns restored with the values they had
        self.stats_kept_actions = 0

    def set_aside(self, path: Path, why: str) -> None:
        target = self.quarantine / path.relative_to(self.root)
        target.parent.mkdir(parents=True, exist_ok=True)
        os.rename(path, target)  # same file system (a sibling folder): atomic, nothing copied
        self.actions.append(f"set aside {path.relative_to(self.root)} ({why}) -> {target}")

    def replace(self, path: Path, staged: Path, what: str) -> None:
        """path becomes staged (atomically); the file as it was is kept in the quarantine (a hard link where the
        file system allows it, else a copy), so a repair killed at any point leaves one or the other at path."""
        target = self.quarantine / path.relative_to(self.root)
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(path, target)
        except OSError:
            shutil.copy2(path, target)
        os.replace(staged, path)
        fsync_dir(path.parent)
        self.actions.append(f"{path.relative_to(self.root)}: {what} (the file as it was -> {target})")


def _readable(path: Path) -> bool:
    try:
        pq.ParquetFile(path)
        return True
    except (pa.ArrowInvalid, OSError):
        return False


def _readable_json(path: Path) -> bool:
    try:
        json.loads(path.read_text())
        return True
    except (OSError, json.JSONDecodeError):
        return False


def _backup(root: Path) -> dict | None:
    try:
        backup = json.loads((root / INFO_BACKUP).read_text())
    except (OSError, ValueError):
        return None
    return backup if isinstance(backup, dict) else None


def _rate_sources(root: Path, native_root: Path | None) -> data_checks.RateSources:
    """Where the data records its rate: every readable data file's timestamps, every sidecar, every native episode."""
    return {data_checks.TIMESTAMPS: data_checks.timestamp_rates(sorted((root / "data").glob("*/*.parquet"))),
            data_checks.SIDECARS: data_checks.sidecar_rates(sorted((root / SIDECAR_DIR).glob("*.json"))),
            f"the native episodes' metadata in {native_root}": data_checks.native_rates(native_root)}


def _fps_of_data(root: Path, info: dict, backup: dict | None, native_root: Path | None) -> tuple[int, str] | None:
    """(the rate the data records, from where it is restored: the backup where it holds that rate), None where no
    source holds one; DatasetError where they disagree (storage/data_checks.py: which source wins)."""
    sources = _rate_sources(root, native_root)
    rate = data_checks.data_rate(root, info.get("fps"), sources)
    if rate is None:
        return None
    said = data_checks.describe(sources)
    return rate, (f"{INFO_BACKUP}, as {said}" if backup is not None and backup.get("fps") == rate
                  else f"the data: {said}")


def _restored_fields(repair: Repair, info: dict, native_root: Path | None) -> dict:
    """Every invalid field of info.json (but the counts, recomputed anyway), and an fps the data contradicts ->
    (its value restored, from where); DatasetError naming the first that cannot be, or a rate the data disagrees
    about, before anything is changed."""
    path = info_path(repair.root)
    backup = _backup(repair.root)
    restored = {}
    for field in INFO_FIELDS:
        wrong = None if field in INFO_COUNTS else field_problem(info, field)
        if field == "fps" and (of_data := _fps_of_data(repair.root, info, backup, native_root)) is not None:
            if wrong is not None or info["fps"] != of_data[0]:
                restored[field] = of_data
            continue
        if wrong is None:
            continue
        if backup is None or field not in backup or field_problem(backup, field) is not None:
            sources = (f"{INFO_BACKUP}, the timestamps in data/, the episodes' metadata (sidecars"
                       f"{f', native episodes at {native_root}' if native_root else ''})" if field == "fps"
                       else str(INFO_BACKUP))
            raise DatasetError(f"{path} {wrong}, and it cannot be restored (nothing valid in {sources}); set it by "
                               "hand or restore meta/info.json from a copy of the dataset (nothing was changed)")
        restored[field] = (backup[field], str(INFO_BACKUP))
    return restored


def _load_info(repair: Repair, native_root: Path | None = None) -> dict:
    """info.json, valid: restored from the recorder's backup when it cannot be read or is not an object, each invalid
    field restored where it can be; the invalid file is set aside."""
    path = info_path(repair.root)
    backup = repair.root / INFO_BACKUP
    try:
        info = read_json(path, "")
        why = None if isinstance(info, dict) else f"{path} holds {fields.shown(info)}, not a JSON object"
    except DatasetError as err:
        if not backup.is_file() and not path.exists() and not path.is_symlink():
            raise DatasetError(f"{path} is missing: {repair.root} is not a LeRobot dataset") from None
        why = str(err).removesuffix("; ")
    if why is not None:
        info = _backup(repair.root)
        if info is None:
            raise DatasetError(f"{why}, and there is no valid {INFO_BACKUP} to restore it from; restore "
                               "meta/info.json from a copy of the dataset (nothing was changed)")
        restored = _restored_fields(repair, info, native_root)  # the backup too must be valid, or be made so
        if path.exists() or path.is_symlink():
            repair.set_aside(path, "torn or unreadable: the process died while LeRobot rewrote it")
        changed = [f"{field} {fields.shown(info.get(field))} -> {fields.shown(value)} (from {source})"
                   for field, (value, source) in restored.items()]
        for field, (value, _) in restored.items():
            info[field] = value
        write_json_atomic(path, info)
        repair.actions.append(f"restored meta/info.json from {INFO_BACKUP}" + "".join(
            f"; its {change}" for change in changed))
        return info
    restored = _restored_fields(repair, info, native_root)
    if restored:
        start = len(repair.actions)
        changes = {field: (info.get(field, fields.ABSENT), value, source)
                   for field, (value, source) in restored.items()}
        for field, (value, _) in restored.items():
            info[field] = value
        repair.set_aside(path, f"wrong {', '.join(restored)}")
        write_json_atomic(path, info)
        for field, (old, value, source) in changes.items():
            old_text = "missing" if old is fields.ABSENT else fields.shown(old)
            repair.actions.append(f"meta/info.json: {field} {old_text} -> {fields.shown(value)} (from {source})")
        repair.stats_kept_actions += len(repair.actions) - start
    return info


def _unreadable(root: Path, path: Path, err: Exception) -> DatasetError:
    return DatasetError(f"{path} cannot be read, truncated? ({err}); run `teledex-repair {root}` to set it aside")


# The columns LeRobot writes for every episode in meta/episodes (and, per video feature, its videos/<key>/... ones):
# nothing else holds them, so a file lacking one is named, never guessed at.
EPISODES_COLUMNS = ("episode_index", "tasks", "length", "data/chunk_index", "data/file_index",
                    "meta/episodes/chunk_index", "meta/episodes/file_index")
VIDEO_COLUMNS = ("chunk_index", "file_index", "from_timestamp", "to_timestamp")


def committed_episodes(root: Path, complete: bool = False) -> list[dict]:
    """The LeRobot dataset's committed episodes (meta/episodes rows), each with its episode uuid when it has one.
    complete (every reader but teledex-repair): info.json's fields are checked, every data and video file the
    episodes refer to must be there, every column info.json declares in the data files, and info.json's fps the
    rate the data records (storage/data_checks.py)."""
    root = Path(root)
    files = sorted((root / "meta" / "episodes").glob("*/*.parquet"))
    if not files:
        return []
    info = read_info(root) if complete else json.loads(info_path(root).read_text())
    video_keys = [k for k, f in info["features"].items() if f["dtype"] == "video"]
    required = [*EPISODES_COLUMNS, *(f"videos/{key}/{column}" for key in video_keys for column in VIDEO_COLUMNS)]
    tables = []
    for path in files:
        try:
            tables.append(pq.read_table(path))
        except (pa.ArrowInvalid, OSError) as err:
            raise _unreadable(root, path, err) from None
        if missing := [column for column in required if column not in tables[-1].column_names]:
            raise DatasetError(f"{path} lacks the column(s) {', '.join(missing)} that LeRobot writes for every "
                               "episode, and teledex-repair cannot restore them (nothing else holds them): restore "
                               "the file from a copy of the dataset")
    episodes = pa.concat_tables(tables, promote_options="default").to_pylist()
    data_files = sorted({_data_file(root, info, e) for e in episodes})
    if complete:
        if video_keys and info.get("video_path") is None:
            raise DatasetError(f"{info_path(root)} has video features {video_keys} but no 'video_path'; copy it "
                               f"from {INFO_BACKUP} or from a copy of the dataset")
        for episode in episodes:
            for path in [_data_file(root, info, episode), *_video_files(root, info, episode, video_keys)]:
                if not path.is_file():
                    raise DatasetError(f"{path} is missing (meta/episodes lists episode {episode['episode_index']} "
                                       f"in it); run `teledex-repair {root}` to drop the episodes it held")
    uuids: dict[int, str] = {}
    for path in data_files:
        try:
            columns = set(pq.ParquetFile(path).schema_arrow.names) if path.is_file() else set()
        except (pa.ArrowInvalid, OSError) as err:
            raise _unreadable(root, path, err) from None
        if complete:
            data_checks.check_columns(root, path, columns, info["features"])
        if {"episode_index", EPISODE_UUID} <= columns:
            data = pq.read_table(path, columns=["episode_index", EPISODE_UUID]).to_pydict()
            for index, pair in zip(data["episode_index"], data[EPISODE_UUID], strict=True):
                if int(index) not in uuids:
                    uuids[int(index)] = uuid_from_int64_pair(pair)
    for episode in episodes:
        episode["episode_uuid"] = uuids.get(int(episode["episode_index"]))
    if complete:
        sidecars = {sidecar_path(root, u): f"episode {i}" for i, u in sorted(uuids.items())}
        indices = {int(e["episode_index"]) for e in episodes}
        data_checks.check_fps(root, info, {
            data_checks.TIMESTAMPS: data_checks.timestamp_rates(data_files, indices),
            data_checks.SIDECARS: data_checks.sidecar_rates([p for p in sidecars if p.is_file()], sidecars.get)})
    return sorted(episodes, key=lambda e: e["episode_index"])


def _data_file(root: Path, info: dict, episode: dict) -> Path:
    return root / info["data_path"].format(chunk_index=episode["data/chunk_index"],
                                           file_index=episode["data/file_index"])


def _video_files(root: Path, info: dict, episode: dict, video_keys: list[str]) -> list[Path]:
    return [root / info["video_path"].format(video_key=key, chunk_index=episode[f"videos/{key}/chunk_index"],
                                             file_index=episode[f"videos/{key}/file_index"]) for key in video_keys]


def _episodes_file(episode: dict) -> tuple[int, int]:
    return episode["meta/episodes/chunk_index"], episode["meta/episodes/file_index"]


def _drop_cut_short(repair: Repair, episodes: list[dict], info: dict, video_keys: list[str]) -> list[dict]:
    """The episodes without those whose save was cut short after LeRobot wrote their metadata row: their rows or
    video never closed (a full disk while writing the parquet footer; LeRobot flushes the metadata anyway, on
    close or at garbage collection). That can only be the last episodes; a file gone anywhere else is not a cut save."""
    def missing(episode: dict) -> list[Path]:
        files = [_data_file(repair.root, info, episode), *_video_files(repair.root, info, episode, video_keys)]
        return [path for path in files if not path.is_file()]

    incomplete = [e for e in episodes if missing(e)]
    if not incomplete:
        return episodes
    first = incomplete[0]["episode_index"]
    kept, dropped = episodes[:first], episodes[first:]
    if len(incomplete) != len(dropped):
        raise DatasetError(f"{missing(incomplete[0])[0]} is listed in meta/episodes but gone, and later episodes are "
                           "complete: this is not a save cut short; it needs manual repair (done so far: "
                           f"{repair.actions or 'nothing'})")
    def files_of(group: list[dict]) -> set:
        return {_episodes_file(e) for e in group} | {_data_file(repair.root, info, e) for e in group}

    shared = files_of(dropped) & files_of(kept)
    if shared:
        raise DatasetError(f"{sorted(map(str, shared))} hold both saved episodes and episode(s) "
                           f"{[e['episode_index'] for e in dropped]} whose files are gone; this needs manual repair")
    for episode in dropped:
        gone = ", ".join(str(path.relative_to(repair.root)) for path in missing(episode))
        repair.actions.append(f"episode {episode['episode_index']} dropped: its save was cut short ({gone} never "
                              "closed), so its metadata row refers to nothing")
    return kept


def _reconcile_tasks(repair: Repair, episodes: list[dict]) -> int:
    """meta/tasks.parquet lists every task the committed episodes use; returns how many tasks it lists. LeRobot
    writes it in place and appends a save's new tasks before the save commits: a torn file is rebuilt from the
    episodes (indexed in order of first use, as LeRobot assigns them), and tasks appended after those of the
    committed episodes are dropped; the old file is set aside. Any other order (e.g. after LeRobot's editing tools)
    is left as it is."""
    path = repair.root / "meta" / "tasks.parquet"
    used = list(dict.fromkeys(task for episode in episodes for task in episode["tasks"]))
    if path.exists():
        if not _readable(path):
            repair.set_aside(path, "unreadable parquet: the process died while LeRobot wrote it")
        else:
            listed = pq.read_table(path).to_pandas().sort_values("task_index").index.tolist()
            if missing := [task for task in used if task not in listed]:
                raise DatasetError(f"{path} lacks the tasks {missing} that committed episodes use; this needs "
                                   f"manual repair (done so far: {repair.actions or 'nothing'})")
            if listed[:len(used)] != used or len(listed) == len(used):
                return len(listed)
            repair.set_aside(path, f"tasks {listed[len(used):]} of an episode that was never committed")
    if used:
        staged = path.with_name(f"{path.name}.repair")
        pd.DataFrame({"task_index": range(len(used))}, index=pd.Index(used, name="task")).to_parquet(staged)
        os.replace(staged, path)
        repair.actions.append(f"meta/tasks.parquet rebuilt from the committed episodes ({len(used)} task(s))")
    return len(used)


# A native episode -> the columns LeRobot holds for its frames, given info.json's features (LeRobot's column types;
# recording/conversions.py lerobot_columns): what a data file's lost column is restored from.
NativeColumns = Callable[[NativeEpisode, dict], pa.Table]


def _twin(native_root: Path, index: int, episode_uuid: str | None) -> NativeEpisode | str:
    """The native twin of LeRobot episode `index` (of its uuid, where the data still holds it), or why there is
    none."""
    why = f"no native episode {index} in {native_root}"
    for folder in sorted(native_root.glob(f"session_*/{episode_dir_name(index)}")):
        try:
            episode = load_native_episode(folder, verify_checksums=True)
        except NativeFormatError as err:
            why = f"native episode {index} does not load ({err.problem})"
            continue
        if episode_uuid is not None and episode.episode_uuid != episode_uuid:
            why = f"native episode {index} is another episode (uuid {episode.episode_uuid}, not {episode_uuid})"
            continue
        return episode
    return why


def _same(a: pa.ChunkedArray, b: pa.ChunkedArray) -> bool:
    left, right = np.asarray(a.to_pylist()), np.asarray(b.to_pylist())
    if left.shape != right.shape:
        return False
    if left.dtype.kind == "f" or right.dtype.kind == "f":
        return bool(np.allclose(left, right, rtol=1e-6, atol=1e-9, equal_nan=True))
    return bool(np.array_equal(left, right))


def _columns_from_twins(table: pa.Table, missing: list[str], info: dict, uuids: dict[int, str | None],
                        native_root: Path | None, native_columns: NativeColumns | None) -> dict[str, pa.Array] | str:
    """The missing columns of one data file, rebuilt row for row from its episodes' native twins, each twin first
    found to hold the same values in every column the file kept; or why they cannot be."""
    if native_root is None or not native_root.is_dir() or native_columns is None:
        return ("there is no native layout to restore them from (give --native-root where the recording wrote it, "
                "if it did)")
    if "episode_index" not in table.column_names:
        return "without its episode_index column its rows cannot be matched to episodes"
    episode_of_row = table.column("episode_index").to_numpy()
    pieces: dict[str, list[pa.ChunkedArray]] = {column: [] for column in missing}
    rows_in_order = []
    for index in dict.fromkeys(episode_of_row.tolist()):
        twin = _twin(native_root, int(index), uuids.get(int(index)))
        if isinstance(twin, str):
            return twin
        held = native_columns(twin, info["features"])
        if not_held := [column for column in missing if column not in held.column_names]:
            return f"the native format does not hold {', '.join(not_held)}"
        rows = np.flatnonzero(episode_of_row == index)
        if held.num_rows != len(rows):
            return f"native episode {index} has {held.num_rows} frames, the file {len(rows)} rows of it"
        kept = table.take(pa.array(rows))
        if differ := [c for c in held.column_names if c in kept.column_names and not _same(kept[c], held[c])]:
            return f"native episode {index} differs from the file in {', '.join(differ)}: not the same recording"
        for column in missing:
            pieces[column].append(held[column])
        rows_in_order.append(rows)
    back = pa.array(np.argsort(np.concatenate(rows_in_order)))
    return {column: pa.chunked_array(chunks).combine_chunks().take(back) for column, chunks in pieces.items()}


def _restore_columns(repair: Repair, info: dict, episodes: list[dict], native_root: Path | None,
                     native_columns: NativeColumns | None) -> None:
    """Every data file given every column info.json declares: a lost one restored from the native twins (the file
    as it was kept in the quarantine); DatasetError naming what cannot be restored before any file is changed. Rows
    are never dropped to make a file fit."""
    uuids = {int(e["episode_index"]): e["episode_uuid"] for e in episodes}
    plans = []
    for path in sorted({_data_file(repair.root, info, e) for e in episodes}):
        columns = pq.ParquetFile(path).schema_arrow.names
        if not (missing := [c for c in data_checks.stored_columns(info["features"]) if c not in columns]):
            continue
        table = pq.read_table(path)
        restored = _columns_from_twins(table, missing, info, uuids, native_root, native_columns)
        if isinstance(restored, str):
            raise DatasetError(f"{path} lacks the column(s) {', '.join(missing)} that {info_path(repair.root)} "
                               f"declares, and teledex-repair cannot restore them: {restored}; restore the file from "
                               f"a copy of the dataset (no data file was changed; done so far: "
                               f"{repair.actions or 'nothing'})")
        plans.append((path, table, restored))
    for path, table, restored in plans:
        order = [c for c in data_checks.stored_columns(info["features"]) if c in table.column_names or c in restored]
        order += [c for c in table.column_names if c not in order]
        fields_ = [pa.field(c, restored[c].type) if c in restored else table.schema.field(c) for c in order]
        rebuilt = pa.Table.from_arrays([restored[c] if c in restored else table[c] for c in order],
                                       schema=pa.schema(fields_, metadata=table.schema.metadata))
        staged = path.with_name(f"{path.name}.repair")
        _write_by_episode(rebuilt, staged)
        repaired_episodes = sorted(set(table.column("episode_index").to_pylist()))
        repair.stats_kept_actions += 1
        repair.replace(path, staged, f"column(s) {', '.join(restored)} restored from the native twins of episode(s) "
                                     f"{', '.join(map(str, repaired_episodes))}")
    if any(EPISODE_UUID in restored for _, _, restored in plans):  # the pairs are read from the data again
        uuids = {int(e["episode_index"]): e["episode_uuid"] for e in committed_episodes(repair.root)}
        for episode in episodes:
            episode["episode_uuid"] = uuids.get(int(episode["episode_index"]))


def _write_by_episode(table: pa.Table, path: Path) -> None:
    """As LeRobot writes a data file: snappy, dictionary-encoded, one row group per episode."""
    episode_of_row = table.column("episode_index").to_numpy()
    starts = [0, *(np.flatnonzero(np.diff(episode_of_row)) + 1).tolist(), len(episode_of_row)]
    with pq.ParquetWriter(path, table.schema, compression="snappy", use_dictionary=True) as writer:
        for start, stop in zip(starts, starts[1:], strict=False):
            writer.write_table(table.slice(start, stop - start))
    with open(path, "rb") as written:
        os.fsync(written.fileno())


def repair_lerobot(root: Path, recompute_stats: Callable[[Path, list[dict]], None] | None = None,
                   native_root: Path | None = None, native_columns: NativeColumns | None = None,
                   ) -> tuple[list[str], list[dict]]:
    """Returns (what was done, the committed episodes). native_root: where the native twins are, the rate of an
    info.json that lost or misstates its fps, and the columns a data file lost (native_columns reads them)."""
    repair = Repair(root)
    if not repair.root.is_dir():
        raise DatasetError(f"{root} does not exist")
    info = _load_info(repair, native_root)
    for folder in ("data", "meta/episodes"):
        for path in sorted((repair.root / folder).glob("*/*.parquet")):
            if not _readable(path):
                repair.set_aside(path, "unreadable parquet: no footer, the process died while writing it")
    episodes = committed_episodes(repair.root)
    indices = [e["episode_index"] for e in episodes]
    if indices != list(range(len(indices))):
        raise DatasetError(f"Episode indices in {root}/meta/episodes are not contiguous ({indices}); this needs "
                           f"manual repair (done so far: {repair.actions or 'nothing'})")
    video_keys = [k for k, f in info["features"].items() if f["dtype"] == "video"]
    episodes = _drop_cut_short(repair, episodes, info, video_keys)
    data_files = {_data_file(repair.root, info, e) for e in episodes}
    for path in sorted((repair.root / "data").glob("*/*.parquet")):
        if path not in data_files:
            repair.set_aside(path, "rows of an episode whose save was cut short (no episode metadata refers to it)")
    _restore_columns(repair, info, episodes, native_root, native_columns)
    episode_files = {_episodes_file(e) for e in episodes}
    videos = {path for e in episodes for path in _video_files(repair.root, info, e, video_keys)}
    for key in video_keys:
        for path in sorted((repair.root / "videos" / key).glob("*/*.mp4")):
            if path not in videos:
                repair.set_aside(path, "video of an episode whose save was cut short")
    for path in sorted((repair.root / "meta" / "episodes").glob("*/*.parquet")):
        chunk, file = int(path.parent.name.split("-")[-1]), int(path.stem.split("-")[-1])
        if (chunk, file) not in episode_files:
            repair.set_aside(path, "episode metadata that refers to no episode")
    for path in sorted(p for p in repair.root.iterdir() if p.is_dir() and p.name.startswith("tmp")):
        repair.set_aside(path, "LeRobot's staging folder of an episode that was never saved")
    if (repair.root / "images").is_dir():
        repair.set_aside(repair.root / "images", "frames of an episode that was never saved")
    committed_uuids = {e["episode_uuid"] for e in episodes}
    for path in sorted((repair.root / SIDECAR_DIR).glob("*.json")):
        if path.stem not in committed_uuids:
            repair.set_aside(path, "sidecar of an episode that was never committed")
    total_tasks = _reconcile_tasks(repair, episodes)
    total_frames = sum(e["length"] for e in episodes)
    counts_wrong = (info.get("total_episodes"), info.get("total_frames"), info.get("total_tasks")) != (
        len(episodes), total_frames, total_tasks)
    # stats.json before info.json: a repair killed between the two finds the counts still wrong and does both again
    # (and one killed while writing stats.json, which LeRobot does not write atomically, finds it torn)
    stats = repair.root / "meta" / "stats.json"
    if not episodes and stats.exists():
        # written by a save whose episode never committed (perhaps torn): LeRobot would load it on resume
        repair.set_aside(stats, "statistics of an episode that was never committed")
    elif ((len(repair.actions) > repair.stats_kept_actions or counts_wrong or not _readable_json(stats))
          and recompute_stats is not None and episodes):
        recompute_stats(repair.root, episodes)
        repair.actions.append("stats.json recomputed from the committed episodes")
    if counts_wrong:
        repair.actions.append(f"info.json: total_episodes {info.get('total_episodes')} -> {len(episodes)}, "
                              f"total_frames {info.get('total_frames')} -> {total_frames}, "
                              f"total_tasks {info.get('total_tasks')} -> {total_tasks}")
        info.update(total_episodes=len(episodes), total_frames=total_frames, total_tasks=total_tasks,
                    splits={"train": f"0:{len(episodes)}"})
        write_json_atomic(repair.root / "meta" / "info.json", info)
    return repair.actions, episodes


def repair_native(root: Path, lerobot_uuids: dict[int, str] | None = None) -> list[str]:
    """Set aside what does not load; with the LeRobot dataset's uuid per index, reconcile the pairs by uuid."""
    repair = Repair(root)
    for staging in sorted(repair.root.glob(f"session_*/episode_*{PARTIAL_SUFFIX}")):
        final = staging.with_name(staging.name.removesuffix(PARTIAL_SUFFIX))
        try:
            episode = load_native_episode(staging, verify_checksums=True)
        except NativeFormatError:
            repair.set_aside(staging, "staging of an episode that was never committed")
            continue
        index = episode_index_of(staging)
        twin = (lerobot_uuids or {}).get(index)
        if twin == episode.episode_uuid and not final.exists() and not list(
                repair.root.glob(f"session_*/{final.name}")):
            os.rename(staging, final)
            fsync_dir(final.parent)
            repair.actions.append(f"committed {final.relative_to(repair.root)}: complete, and LeRobot holds its "
                                  f"uuid {twin} (the recorder died between the two commits)")
        else:
            repair.set_aside(staging, "staged episode that the LeRobot dataset never committed")
    by_index: dict[int, Path] = {}
    for folder in sorted(p for p in repair.root.glob("session_*/episode_*") if not p.name.endswith(PARTIAL_SUFFIX)):
        try:
            episode = load_native_episode(folder, verify_checksums=True)
        except NativeFormatError as err:
            repair.set_aside(folder, f"does not load: {err.problem}")
            continue
        index = episode.index
        if lerobot_uuids is not None and lerobot_uuids.get(index) != episode.episode_uuid:
            repair.set_aside(folder, f"uuid {episode.episode_uuid} is not the LeRobot episode {index}'s "
                                     f"({lerobot_uuids.get(index) or 'none'}): present in the native format only")
            continue
        if index in by_index:
            repair.set_aside(folder, f"a second episode with index {index}")
            continue
        by_index[index] = folder
    if lerobot_uuids is not None:
        for index, episode_uuid in sorted(lerobot_uuids.items()):
            if index not in by_index:
                repair.actions.append(f"LeRobot episode {index} ({episode_uuid}) has no native twin: present in "
                                      "the LeRobot dataset only (left in place)")
    return repair.actions
