"""Repair what a killed recording left behind, and reconcile the two formats by episode uuid, losing nothing saved.

Nothing is deleted: whatever is set aside moves to `<root>.damaged/<timestamp>/`, its path kept, so it can still be
inspected. Every step is a rename or an atomic file replacement, so a repair that is itself killed leaves a dataset
that the next repair finishes.

LeRobot dataset: a torn, empty, missing or looping info.json is restored from the recorder's last good copy, and so
is a field of the wrong type (fps also from the native episodes' metadata or the data's timestamps); what cannot be
restored is named, and nothing is changed. Parquet files without a footer
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
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from . import fields
from .errors import DatasetError
from .lerobot_meta import INFO_COUNTS, INFO_FIELDS, field_problem, info_path, read_info, read_json
from .native import (
    PARTIAL_SUFFIX,
    NativeFormatError,
    episode_index_of,
    fsync_dir,
    load_native_episode,
    native_episode_dirs,
    write_json_atomic,
)
from .teledex_columns import EPISODE_UUID, INFO_BACKUP, SIDECAR_DIR, uuid_from_int64_pair


class Repair:
    def __init__(self, root: Path):
        self.root = Path(root)
        self.quarantine = self.root.with_name(f"{self.root.name}.damaged") / datetime.now().strftime("%Y%m%d-%H%M%S-%f")
        self.actions: list[str] = []
        self.info_field_actions = 0  # of the actions, those that only restored fields of info.json

    def set_aside(self, path: Path, why: str) -> None:
        target = self.quarantine / path.relative_to(self.root)
        target.parent.mkdir(parents=True, exist_ok=True)
        os.rename(path, target)  # same file system (a sibling folder): atomic, nothing copied
        self.actions.append(f"set aside {path.relative_to(self.root)} ({why}) -> {target}")


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


def _fps_of_native(native_root: Path | None) -> int | None:
    """The rate every loadable native episode was recorded at, if they agree on a whole number."""
    rates = set()
    for folder in native_episode_dirs(native_root) if native_root is not None and native_root.is_dir() else []:
        try:
            rates.add(load_native_episode(folder, verify_checksums=True).field("collection.control_frequency_hz"))
        except NativeFormatError:
            continue
    rate = rates.pop() if len(rates) == 1 else None
    return int(rate) if rate is not None and float(rate).is_integer() else None


def _fps_of_timestamps(root: Path) -> int | None:
    """The rate of LeRobot's timestamp column (frame_index / fps), if every readable data file agrees on it."""
    rates = set()
    for path in sorted((root / "data").glob("*/*.parquet")):
        if not _readable(path):
            continue
        rows = pq.read_table(path, columns=["episode_index", "timestamp"]).to_pandas()
        for _, episode in rows.groupby("episode_index"):
            steps = np.diff(np.sort(episode["timestamp"].to_numpy(np.float64)))
            if len(steps) and steps.min() > 0:
                rate = round(1 / float(np.median(steps)))
                if rate > 0 and np.allclose(steps, 1 / rate, rtol=1e-3):
                    rates.add(rate)
    return rates.pop() if len(rates) == 1 else None


def _restored_fields(repair: Repair, info: dict, native_root: Path | None) -> dict:
    """Every invalid field of info.json (but the counts, recomputed anyway) -> (its value restored, from where);
    DatasetError naming the first that cannot be, before anything is changed."""
    path = info_path(repair.root)
    backup = _backup(repair.root)
    restored = {}
    for field in INFO_FIELDS:
        wrong = None if field in INFO_COUNTS else field_problem(info, field)
        if wrong is None:
            continue
        candidates = []
        if backup is not None and field in backup and field_problem(backup, field) is None:
            candidates.append((backup[field], str(INFO_BACKUP)))
        if field == "fps":
            candidates += [(_fps_of_native(native_root), "the native episodes' metadata"),
                           (_fps_of_timestamps(repair.root), "the timestamps in data/")]
        value, source = next(((v, s) for v, s in candidates if v is not None), (None, None))
        if source is None:
            sources = (f"{INFO_BACKUP}, native episodes at {native_root}, data/ timestamps" if field == "fps"
                       else str(INFO_BACKUP))
            raise DatasetError(f"{path} {wrong}, and it cannot be restored (nothing valid in {sources}); set it by "
                               "hand or restore meta/info.json from a copy of the dataset (nothing was changed)")
        restored[field] = (value, source)
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
        for field, (value, _) in restored.items():
            info[field] = value
        write_json_atomic(path, info)
        repair.actions.append(f"restored meta/info.json from {INFO_BACKUP}")
        return info
    restored = _restored_fields(repair, info, native_root)
    if restored:
        start = len(repair.actions)
        changes = {field: (info.get(field, fields.ABSENT), value, source)
                   for field, (value, source) in restored.items()}
        for field, (value, _) in restored.items():
            info[field] = value
        repair.set_aside(path, f"invalid {', '.join(restored)}")
        write_json_atomic(path, info)
        for field, (old, value, source) in changes.items():
            old_text = "missing" if old is fields.ABSENT else fields.shown(old)
            repair.actions.append(f"meta/info.json: {field} {old_text} -> {fields.shown(value)} (from {source})")
        repair.info_field_actions = len(repair.actions) - start
    return info


def _unreadable(root: Path, path: Path, err: Exception) -> DatasetError:
    return DatasetError(f"{path} cannot be read, truncated? ({err}); run `teledex-repair {root}` to set it aside")


def committed_episodes(root: Path, complete: bool = False) -> list[dict]:
    """The LeRobot dataset's committed episodes (meta/episodes rows), each with its episode uuid when it has one.
    complete (every reader but teledex-repair): info.json's fields are checked, and every data and video file the
    episodes refer to must be there."""
    root = Path(root)
    files = sorted((root / "meta" / "episodes").glob("*/*.parquet"))
    if not files:
        return []
    tables = []
    for path in files:
        try:
            tables.append(pq.read_table(path))
        except (pa.ArrowInvalid, OSError) as err:
            raise _unreadable(root, path, err) from None
    episodes = pa.concat_tables(tables, promote_options="default").to_pylist()
    info = read_info(root) if complete else json.loads(info_path(root).read_text())
    if complete:
        video_keys = [k for k, f in info["features"].items() if f["dtype"] == "video"]
        if video_keys and info.get("video_path") is None:
            raise DatasetError(f"{info_path(root)} has video features {video_keys} but no 'video_path'; copy it "
                               f"from {INFO_BACKUP} or from a copy of the dataset")
        for episode in episodes:
            for path in [_data_file(root, info, episode), *_video_files(root, info, episode, video_keys)]:
                if not path.is_file():
                    raise DatasetError(f"{path} is missing (meta/episodes lists episode {episode['episode_index']} "
                                       f"in it); run `teledex-repair {root}` to drop the episodes it held")
    uuids: dict[int, str] = {}
    for chunk, file in sorted({(e["data/chunk_index"], e["data/file_index"]) for e in episodes}):
        path = root / info["data_path"].format(chunk_index=chunk, file_index=file)
        try:
            has_uuids = path.is_file() and EPISODE_UUID in pq.ParquetFile(path).schema_arrow.names
        except (pa.ArrowInvalid, OSError) as err:
            raise _unreadable(root, path, err) from None
        if has_uuids:
            data = pq.read_table(path, columns=["episode_index", EPISODE_UUID]).to_pydict()
            for index, pair in zip(data["episode_index"], data[EPISODE_UUID], strict=True):
                if int(index) not in uuids:
                    uuids[int(index)] = uuid_from_int64_pair(pair)
    for episode in episodes:
        episode["episode_uuid"] = uuids.get(int(episode["episode_index"]))
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


def repair_lerobot(root: Path, recompute_stats: Callable[[Path, list[dict]], None] | None = None,
                   native_root: Path | None = None) -> tuple[list[str], list[dict]]:
    """Returns (what was done, the committed episodes). native_root: where to find the rate of an info.json whose fps
    is lost."""
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
    elif ((len(repair.actions) > repair.info_field_actions or counts_wrong or not _readable_json(stats))
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
