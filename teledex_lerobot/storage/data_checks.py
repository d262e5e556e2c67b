"""A LeRobot dataset's metadata checked against its data (pyarrow and JSON only): meta/info.json's fps against the
rate the data itself records, and every column info.json declares present in every data file.

fps. info.json's fps is a claim every reader trusts (LeRobot decodes and steps by it, the sync report counts dropped
ticks against it: 30 for 25 invents a dropped tick every five frames). The data records its rate in two more places:
- the timestamps in data/: LeRobot writes each row's timestamp as frame_index / fps, the fps it recorded at;
- the episodes' metadata, collection.control_frequency_hz (the recorder gives LeRobot the same rate): in the sidecars
  (meta/teledex_episodes/) and, for teledex-repair, in the native twins' metadata.json.
Which wins: where every source that holds a rate agrees on one, that is the dataset's rate, and an info.json saying
otherwise is wrong: readers refuse it in one line, teledex-repair restores it (from its backup where the backup holds
that rate, else from those sources). Where the sources disagree among themselves (or one episode with another),
nothing is guessed: readers and teledex-repair name every source's rates, and a person decides. A source that holds
no rate (one-frame episodes, no sidecars, no native root) has no vote; with none at all, info.json stands.

Columns. Every feature info.json declares, but the videos (mp4 files, not columns), is a column of every data file:
a file lacking one is one line naming the file and the columns. teledex-repair restores such a column from the
native twins where they hold it, and otherwise names it; it never drops a row to make a file fit.
"""

import hashlib
import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from . import fields
from .errors import DatasetError
from .lerobot_meta import info_path
from .native import PARTIAL_SUFFIX, NativeFormatError, load_native_episode

# The columns a rate is read from in data/ (LeRobot's own: every LeRobot dataset has them)
TIMESTAMP_COLUMNS = ("episode_index", "frame_index", "timestamp")
# Where a rate was found -> rate -> what holds it ("episode 3", a file name), for the messages
RateSources = dict[str, dict[int, list[str]]]
TIMESTAMPS = "the timestamps in data/"
SIDECARS = "the episodes' metadata in meta/teledex_episodes/"


def stored_columns(features: dict) -> list[str]:
    """The columns every data file holds: info.json's features but the videos (mp4 files)."""
    return [name for name, feature in features.items() if feature.get("dtype") != "video"]


def check_columns(root: Path, path: Path, columns, features: dict) -> None:
    """A data file (its column names) holds every column info.json declares; else one line naming the file and the
    columns it lacks."""
    if missing := [column for column in stored_columns(features) if column not in columns]:
        raise DatasetError(f"{path} lacks the column(s) {', '.join(missing)} that {info_path(root)} declares; run "
                           f"`teledex-repair {root}` (it restores a column the native episodes hold, and names one "
                           "they do not)")


def rate_of_timestamps(frame_index, timestamp) -> int | None:
    """The whole rate an episode's LeRobot timestamps were written at (timestamp = frame_index / fps); None with
    fewer than two frames, or timestamps that are not frame_index / a whole rate (measured times, say)."""
    order = np.argsort(np.asarray(frame_index))
    frames = np.asarray(frame_index, dtype=np.float64)[order]
    times = np.asarray(timestamp, dtype=np.float64)[order]
    if len(frames) < 2 or times[-1] <= times[0]:
        return None
    rate = (frames[-1] - frames[0]) / (times[-1] - times[0])
    whole = round(rate)
    if whole < 1 or abs(rate - whole) > 1e-3 * whole or np.abs(times - frames / whole).max() > 0.25 / whole:
        return None
    return whole


def timestamp_rates(paths, episodes: set[int] | None = None) -> dict[int, list[str]]:
    """rate -> the episodes whose timestamps were written at it, over the readable data files that have LeRobot's
    timestamp columns (the others are named elsewhere); episodes: only these."""
    rates: dict[int, list[str]] = {}
    for path in paths:
        try:
            if not set(TIMESTAMP_COLUMNS) <= set(pq.ParquetFile(path).schema_arrow.names):
                continue
            table = pq.read_table(path, columns=list(TIMESTAMP_COLUMNS))
        except (pa.ArrowInvalid, OSError):
            continue
        order = np.argsort(table.column("episode_index").to_numpy(), kind="stable")
        index, frame, time = (table.column(c).to_numpy()[order] for c in TIMESTAMP_COLUMNS)
        bounds = np.flatnonzero(np.diff(index)) + 1  # one slice per episode
        for episode, frames, times in zip(index[np.r_[0, bounds]] if len(index) else [], np.split(frame, bounds),
                                          np.split(time, bounds), strict=False):
            if episodes is not None and int(episode) not in episodes:
                continue
            if (rate := rate_of_timestamps(frames, times)) is not None:
                rates.setdefault(rate, []).append(f"episode {int(episode)}")
    return rates


def metadata_rate(metadata) -> int | None:
    """An episode's recorded rate (metadata.json's collection.control_frequency_hz), if a positive whole number."""
    value = fields.lookup(metadata, "collection.control_frequency_hz")
    return int(value) if fields.positive_number(value) and float(value).is_integer() else None


def sidecar_rates(paths, label=lambda path: path.stem) -> dict[int, list[str]]:
    """rate -> the episodes whose sidecars record it (sidecars that cannot be read have no vote)."""
    rates: dict[int, list[str]] = {}
    for path in paths:
        try:
            sidecar = json.loads(Path(path).read_text())
        except (OSError, ValueError):
            continue
        if (rate := metadata_rate(fields.lookup(sidecar, "metadata"))) is not None:
            rates.setdefault(rate, []).append(label(path))
    return rates


def native_rates(native_root: Path | None) -> dict[int, list[str]]:
    """rate -> the native episodes recording it: every episode that loads and whose metadata.json is the one its
    manifest records (the videos are not hashed here: teledex-repair checks them when it reconciles the formats)."""
    rates: dict[int, list[str]] = {}
    if native_root is None or not native_root.is_dir():
        return rates
    for folder in sorted(f for f in native_root.glob("session_*/episode_*") if not f.name.endswith(PARTIAL_SUFFIX)):
        try:
            episode = load_native_episode(folder)
        except NativeFormatError:
            continue
        entry = episode.manifest["files"].get("metadata.json", {})
        if hashlib.sha256((folder / "metadata.json").read_bytes()).hexdigest() != entry.get("sha256"):
            continue
        if (rate := metadata_rate(episode.metadata)) is not None:
            rates.setdefault(rate, []).append(f"{folder.parent.name}/{folder.name}")
    return rates


def describe(sources: RateSources) -> str:
    """e.g. "the timestamps in data/ and the episodes' metadata in meta/teledex_episodes/ say 25", or where they
    disagree "the timestamps in data/ say 25, the episodes' metadata in meta/teledex_episodes/ says 25 (2: episode 0,
    episode 1) and 30 (1: episode 2)"."""
    held = {where: rates for where, rates in sources.items() if rates}
    rates = {rate for each in held.values() for rate in each}
    if len(rates) == 1:
        *others, last = held
        names = f"{', '.join(others)} and {last}" if others else last
        return f"{names} {'say' if others else _verb(last)} {rates.pop()}"

    def said(rates: dict[int, list[str]]) -> str:
        if len(rates) == 1:
            return str(next(iter(rates)))
        return " and ".join(f"{rate} ({len(what)}: {', '.join(what[:3])}{', ...' if len(what) > 3 else ''})"
                            for rate, what in sorted(rates.items()))
    return ", ".join(f"{where} {_verb(where)} {said(rates)}" for where, rates in held.items())


def _verb(where: str) -> str:
    return "say" if where == TIMESTAMPS else "says"


def data_rate(root: Path, claimed, sources: RateSources) -> int | None:
    """The rate every source that holds one agrees on (None: none holds one). Sources that disagree among
    themselves: DatasetError naming each, since neither a reader nor teledex-repair can tell which is right."""
    rates = {rate for held in sources.values() for rate in held}
    if len(rates) > 1:
        raise DatasetError(f"{info_path(root)} says fps {fields.shown(claimed)}, but the data disagrees about its own "
                           f"rate: {describe(sources)}; teledex-repair does not guess which is right: find the rate "
                           "the episodes were recorded at and set 'fps' in meta/info.json (and the episodes' "
                           "metadata) by hand (nothing was changed)")
    return rates.pop() if rates else None


def check_fps(root: Path, info: dict, sources: RateSources) -> None:
    """info.json's fps is the rate the data records (readers); else one line naming the sources and the fix."""
    rate = data_rate(root, info["fps"], sources)
    if rate is not None and rate != info["fps"]:
        raise DatasetError(f"{info_path(root)} says fps {info['fps']}, but {describe(sources)}; run "
                           f"`teledex-repair {root}` to restore it")
