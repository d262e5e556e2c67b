"""The storage's error: a dataset (LeRobot or native) that cannot be read or written as it is, and the one check every
command makes of a root it is given (check_root). UserError lives in
teledex_lerobot/errors.py with the other kinds; it is re-exported here for the modules that still import it from
here (recording/options.py, recording/recorder.py)."""

from pathlib import Path

from ..errors import DataError, UserError

__all__ = ["DatasetError", "UserError", "check_root"]


class DatasetError(DataError):
    """A dataset or file that cannot be read or written as it is; the message names it and the fix."""


def check_root(path) -> None:
    """A root a command was given (a LeRobot dataset's or a native layout's) that is there but is no folder: the same
    one line from teledex-record, teledex-repair, teledex-convert, teledex-sync-report and teledex-merge. A root that
    is not there at all is each command's own business (record creates it, the others refuse)."""
    path = Path(path)
    if path.is_dir() or not (path.exists() or path.is_symlink()):
        return
    what = ("a file" if path.is_file() else "a symbolic link to nothing (a loop, or its target is gone)"
            if not path.exists() else "neither a file nor a folder")
    raise DatasetError(f"{path} is {what}, not a folder: a dataset root (LeRobot or native) is a folder; give the "
                       f"folder's path, or move {'the file' if path.is_file() else 'it'} away")
