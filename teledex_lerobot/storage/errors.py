"""The storage's error: a dataset (LeRobot or native) that cannot be read or written as it is. UserError lives in
teledex_lerobot/errors.py with the other kinds; it is re-exported here for the modules that still import it from
here (recording/options.py, recording/recorder.py)."""

from ..errors import DataError, UserError

__all__ = ["DatasetError", "UserError"]


class DatasetError(DataError):
    """A dataset or file that cannot be read or written as it is; the message names it and the fix."""
