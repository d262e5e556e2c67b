"""What the fields of a dataset's JSON files must be (metadata.json, manifest.json, camera_info.json, LeRobot's
info.json, the sidecars), checked when they are read: a wrong type is then one line naming the file, the field and
the fix, never a traceback from deeper in. Names that become paths (episode and session ids, files in a manifest)
must stay inside their folder: `../../x` is refused, never followed."""

import math
import uuid
from collections.abc import Callable
from pathlib import PurePosixPath

from .sync_rule import RULE_VERSION, UNSTAMPED_VERSION

ABSENT = object()
# dotted field name -> (check, what the field must be)
Fields = dict[str, tuple[Callable[[object], bool], str]]


def lookup(data, dotted: str):
    """data["a"]["b"] for "a.b"; ABSENT where a key is missing or a parent is not an object."""
    for key in dotted.split("."):
        if not isinstance(data, dict) or key not in data:
            return ABSENT
        data = data[key]
    return data


def shown(value) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:57]}..."


def whole(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def count(value) -> bool:
    return whole(value) and value >= 0


def positive_whole(value) -> bool:
    return whole(value) and value > 0


def number(value) -> bool:
    return (whole(value) or isinstance(value, float)) and math.isfinite(value)


def positive_number(value) -> bool:
    return number(value) and value > 0


def text(value) -> bool:
    return isinstance(value, str)


def optional_text(value) -> bool:
    return value is None or isinstance(value, str)


def an_object(value) -> bool:
    return isinstance(value, dict)


def a_list(value) -> bool:
    return isinstance(value, list)


def a_uuid(value) -> bool:
    try:
        return isinstance(value, str) and str(uuid.UUID(value)) == value
    except ValueError:
        return False


def name(value) -> bool:
    """One folder or file name: never a path."""
    return (isinstance(value, str) and value not in ("", ".", "..") and not any(c in value for c in "/\\\0"))


def optional_name(value) -> bool:
    return value is None or name(value)


def inside(value) -> bool:
    """A relative path that stays inside its folder."""
    if not isinstance(value, str) or not value or "\\" in value or "\0" in value:
        return False
    path = PurePosixPath(value)
    return not path.is_absolute() and ".." not in path.parts


def sync_policy(value) -> bool:
    """Thresholds, and the version of the rule that judged by them (storage/sync_rule.py; absent: version 1)."""
    return (isinstance(value, dict) and set(value) <= {"max_age_ms", "tolerance_ms", RULE_VERSION}
            and all(positive_number(v) for k, v in value.items() if k != RULE_VERSION)
            and positive_whole(value.get(RULE_VERSION, UNSTAMPED_VERSION)))


NAME = "a name (one folder or file name: no '/', not '.' or '..')"
SYNC_POLICY = ("an object {max_age_ms, tolerance_ms, rule_version} of positive numbers (rule_version a whole "
               "number)")


def problem(data, fields: Fields, required=()) -> str | None:
    """What is wrong with the first bad field, e.g. "'fps' is 'fast', not a positive whole number"; None if none."""
    if not isinstance(data, dict):
        return f"holds {shown(data)}, not a JSON object"
    for dotted, (ok, must_be) in fields.items():
        value = lookup(data, dotted)
        if value is ABSENT:
            if dotted in required:
                return f"has no '{dotted}'"
        elif not ok(value):
            return f"'{dotted}' is {shown(value)}, not {must_be}"
    return None
