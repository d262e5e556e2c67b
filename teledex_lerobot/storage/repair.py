"""Repair what a killed recording left behind, losing nothing that was saved.

Nothing is deleted: damaged or unfinished files move to a sibling folder `<root>.damaged/<timestamp>/`, with their
paths kept, so they can still be inspected.

LeRobot dataset: parquet files without a footer (the file being written when the process died) are set aside, the
episode metadata that remains is checked against the data files, info.json's counts are recomputed from it, and
image folders of unsaved episodes are set aside.
Native layout: `.partial` episode folders are set aside, and so is any episode folder that does not load.
"""

import json
import shutil
from datetime import datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from .native import PARTIAL_SUFFIX, NativeFormatError, load_native_episode


class Repair:
    def __init__(self, root: Path):
        self.root = Path(root)
        self.quarantine = self.root.with_name(f"{self.root.name}.damaged") / datetime.now().strftime("%Y%m%d-%H%M%S")
        self.actions: list[str] = []

    def set_aside(self, path: Path, why: str) -> None:
        target = self.quarantine / path.relative_to(self.root)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(path), str(target))
        self.actions.append(f"set aside {path.relative_to(self.root)} ({why}) -> {target}")


def _readable(path: Path) -> bool:
    try:
        pq.ParquetFile(path)
        return True
    except (pa.ArrowInvalid, OSError):
        return False


def repair_lerobot(root: Path) -> list[str]:
    repair = Repair(root)
    info_path = repair.root / "meta" / "info.json"
    if not info_path.is_file():
        raise FileNotFoundError(f"{info_path} is missing: {root} is not a LeRobot dataset (or its meta/ is lost)")
    for folder in ("data", "meta/episodes"):
        for path in sorted((repair.root / folder).glob("*/*.parquet")):
            if not _readable(path):
                repair.set_aside(path, "unreadable parquet: no footer, the process died while writing it")
    episode_files = sorted((repair.root / "meta" / "episodes").glob("*/*.parquet"))
    if not episode_files:
        raise ValueError(f"No readable episode metadata in {root}/meta/episodes: no episode can be recovered")
    episodes = pa.concat_tables([pq.read_table(p) for p in episode_files]).select(
        ["episode_index", "length", "data/chunk_index", "data/file_index"]).to_pylist()
    info = json.loads(info_path.read_text())
    for episode in episodes:
        data = repair.root / info["data_path"].format(chunk_index=episode["data/chunk_index"],
                                                       file_index=episode["data/file_index"])
        if not data.is_file():
            raise ValueError(f"Episode {episode['episode_index']} is listed in meta/episodes but its data file "
                             f"{data} is gone; this needs manual repair (nothing was changed beyond: "
                             f"{repair.actions})")
    indices = sorted(e["episode_index"] for e in episodes)
    if indices != list(range(len(indices))):
        raise ValueError(f"Episode indices in meta/episodes are not contiguous ({indices}); needs manual repair")
    total_frames = sum(e["length"] for e in episodes)
    if (info["total_episodes"], info["total_frames"]) != (len(indices), total_frames):
        repair.actions.append(f"info.json: total_episodes {info['total_episodes']} -> {len(indices)}, "
                              f"total_frames {info['total_frames']} -> {total_frames}")
        info.update(total_episodes=len(indices), total_frames=total_frames, splits={"train": f"0:{len(indices)}"})
        info_path.write_text(json.dumps(info, indent=4))
    for folder in sorted((repair.root / "images").glob("*/episode-*")):
        if int(folder.name.split("-")[-1]) >= len(indices):
            repair.set_aside(folder, "frames of an episode that was never saved")
    return repair.actions


def repair_native(root: Path) -> list[str]:
    repair = Repair(root)
    for folder in sorted(repair.root.glob(f"session_*/episode_*{PARTIAL_SUFFIX}")):
        repair.set_aside(folder, "episode interrupted before it was saved")
    for folder in sorted(repair.root.glob("session_*/episode_*")):
        try:
            load_native_episode(folder, verify_checksums=True)
        except NativeFormatError as err:
            repair.set_aside(folder, f"does not load: {err}")
    return repair.actions
