"""The one way a name or a path becomes a data file, and a YAML file becomes a config dataclass.

Files are given either by name (looked up in one of configs/' folders, e.g. "xr_hybrid" -> configs/control/
xr_hybrid.yaml) or by a path ending in the file's suffix. YAML configs are decoded by draccus, the library LeRobot's
command-line configs use, so a YAML file and a command line reject the same mistakes: unknown keys, wrong types,
each reported with the key's dotted path.
"""

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any

import draccus
import yaml

from .errors import ConfigError

if TYPE_CHECKING:
    from _typeshed import DataclassInstance  # the typing-only protocol of dataclasses (no runtime module)


def resolve_file(name_or_path: str, folder: Path, suffixes: tuple[str, ...], what: str) -> Path:
    """A path (recognised by one of `suffixes`) that must exist, or a name of a file in `folder`.

    The error names what was asked for, what exists, and the fix."""
    if name_or_path.endswith(suffixes):
        path = Path(name_or_path).expanduser()
        if not path.is_file():
            raise ConfigError(f"{what} file not found: {path}; give an existing file, or a name in {folder}")
        return path
    for suffix in suffixes:
        path = folder / f"{name_or_path}{suffix}"
        if path.is_file():
            return path
    available = sorted({p.name.removesuffix(s) for s in suffixes for p in folder.glob(f"*{s}")})
    raise ConfigError(f"Unknown {what} {name_or_path!r}. Available: {', '.join(available) or 'none'} (in {folder}), "
                      f"or give a path to a {'/'.join(suffixes)} file.")


def read_yaml_mapping(path: Path, what: str) -> dict:
    try:
        data = yaml.safe_load(Path(path).read_text()) or {}
    except (OSError, yaml.YAMLError, UnicodeDecodeError) as error:
        raise ConfigError(f"Cannot read {what} {path}: {' '.join(str(error).split())}; fix the file, or give "
                          "another") from error
    if not isinstance(data, dict):
        raise ConfigError(f"{what} {path} must be a mapping of keys to values (got {type(data).__name__})")
    return data


def decode_config[T](cls: type[T], data: dict[str, Any], where: str) -> T:
    """A dataclass from a mapping; unknown keys and wrong types raise ConfigError naming `where` and the key."""
    try:
        return draccus.decode(cls, data)
    except draccus.utils.DecodingError as error:
        raise ConfigError(f"{where}: {' '.join(str(error).split())}") from error  # one line, the key's path first
    except draccus.utils.ParsingError as error:  # the dataclass's own check (__post_init__) refused a value
        raise ConfigError(f"{where}: {error.__cause__ or error}") from error


def load_config[T: DataclassInstance](cls: type[T], source: "str | dict | T | None", folder: Path, what: str,
                **overrides: Any) -> T:
    """A config dataclass from None (defaults), a dict, an instance, a YAML path or a name in `folder`, then
    `overrides` (nested dicts merge into their sections)."""
    if isinstance(source, cls):
        data, where = dataclasses.asdict(source), what
    elif source is None or source == "":
        data, where = {}, what
    elif isinstance(source, dict):
        data, where = dict(source), what
    else:
        path = resolve_file(str(source), folder, (".yaml", ".yml"), what)
        data, where = read_yaml_mapping(path, what), f"{what} {path}"
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(data.get(key), dict):
            data[key] = {**data[key], **value}
        else:
            data[key] = value
    return decode_config(cls, data, where)
