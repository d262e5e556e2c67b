"""A LeRobot dataset's meta/info.json and TeleDex's per-episode sidecars, read back with their fields checked
(pyarrow and JSON only, no LeRobot): a torn, empty, missing or looping file, or a field of the wrong type, is one line
naming the file, the field and the fix."""

import errno
import json
from pathlib import Path

from . import fields
from .errors import DatasetError
from .teledex_columns import SIDECAR_DIR


def _template(value) -> bool:
    """A path template of LeRobot's (data_path, video_path) that formats and stays inside the dataset."""
    try:
        return fields.inside(value.format(chunk_index=0, file_index=0, video_key="observation.images.x"))
    except (AttributeError, KeyError, IndexError, ValueError):
        return False


# The fields TeleDex reads (and LeRobot needs), what each must be; all but video_path and robot_type are required.
INFO_FIELDS: fields.Fields = {
    "codebase_version": (fields.text, "a version string such as 'v3.0'"),
    "fps": (fields.positive_whole, "a positive whole number of frames per second"),
    "features": (lambda v: isinstance(v, dict) and all(isinstance(f, dict) and fields.text(f.get("dtype"))
                                                       and isinstance(f.get("shape"), list) for f in v.values()),
                 "an object of feature name -> {dtype, shape, names}"),
    "data_path": (_template, "a path template inside the dataset, e.g. "
                             "'data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet'"),
    "video_path": (lambda v: v is None or _template(v), "a path template inside the dataset (or null)"),
    "robot_type": (fields.optional_text, "a string (or null)"),
    "total_episodes": (fields.count, "a whole number >= 0"),
    "total_frames": (fields.count, "a whole number >= 0"),
    "total_tasks": (fields.count, "a whole number >= 0"),
}
INFO_REQUIRED = tuple(f for f in INFO_FIELDS if f not in ("video_path", "robot_type"))
# Recomputed by teledex-repair from the committed episodes whatever info.json says.
INFO_COUNTS = ("total_episodes", "total_frames", "total_tasks")


def info_path(root: Path) -> Path:
    return Path(root) / "meta" / "info.json"


def read_json(path: Path, fix: str):
    """The parsed file (any JSON value), or DatasetError saying why it cannot be read."""
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise DatasetError(f"{path} is missing; {fix}") from None
    except json.JSONDecodeError as err:
        raise DatasetError(f"{path} is not valid JSON (torn or empty?): {err}; {fix}") from None
    except OSError as err:
        if err.errno not in (errno.ELOOP, errno.EISDIR):
            raise
        raise DatasetError(f"{path} cannot be read ({err.strerror}); {fix}") from None


def field_problem(info: dict, field: str) -> str | None:
    """What is wrong with one field of info.json, e.g. "'fps' is 'fast', not a positive whole number ..."."""
    return fields.problem(info, {field: INFO_FIELDS[field]}, required=[field] if field in INFO_REQUIRED else [])


def read_info(root: Path) -> dict:
    """meta/info.json, every field TeleDex reads of its type."""
    path = info_path(root)
    fix = f"run `teledex-repair {root}` to restore it"
    info = read_json(path, fix)
    if wrong := fields.problem(info, INFO_FIELDS, required=INFO_REQUIRED):
        raise DatasetError(f"{path} {wrong}; {fix}")
    return info


SIDECAR_FIELDS: fields.Fields = {
    "episode_uuid": (fields.a_uuid, "a uuid"),
    "metadata": (fields.an_object, "an object (the native episode's metadata.json)"),
    "metadata.episode": (fields.an_object, "an object"),
    "metadata.episode.task_name": (fields.text, "a string"),
    "metadata.episode.session_id": (fields.optional_name, fields.NAME),
    "metadata.episode.episode_id": (fields.optional_name, fields.NAME),
    "camera_info": (lambda v: isinstance(v, dict) and all(isinstance(c, dict) for c in v.values()),
                    "an object of camera name -> intrinsics"),
    "sync_policy": (fields.sync_policy, fields.SYNC_POLICY),
    "source_names": (lambda v: isinstance(v, list) and all(fields.name(s) for s in v), "a list of source names"),
}


def sidecar_path(root: Path, episode_uuid: str) -> Path:
    return Path(root) / SIDECAR_DIR / f"{episode_uuid}.json"


def read_sidecar(root: Path, episode_uuid: str) -> dict | None:
    """The episode's sidecar (None if it has none), every field of its type."""
    path = sidecar_path(root, episode_uuid)
    if not path.is_file():
        return None
    fix = ("restore it from a copy of the dataset; the episode's native twin holds the same facts (its "
           "metadata.json and camera_info.json)")
    sidecar = read_json(path, fix)
    if wrong := fields.problem(sidecar, SIDECAR_FIELDS, required=("metadata", "camera_info", "sync_policy",
                                                                  "source_names")):
        raise DatasetError(f"{path} {wrong}; {fix}")
    return sidecar
