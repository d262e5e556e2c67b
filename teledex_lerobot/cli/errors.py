"""How every TeleDex command fails on bad input or a bad disk: one line naming what is wrong and the fix, exit code
2, no traceback. Anything else is a bug and keeps its traceback."""

import errno
import sys

from ..storage.errors import DatasetError

_DISK_ERRORS = {errno.ENOSPC: "the disk is full", errno.EROFS: "the file system is read-only",
                errno.EACCES: "permission denied", errno.EPERM: "operation not permitted",
                errno.EDQUOT: "the disk quota is exceeded"}


class UserError(DatasetError):
    pass


def run_command(name: str, function, *args) -> None:
    """Run the command; on bad input or a bad disk print one line and exit with code 2."""
    try:
        function(*args)
    except DatasetError as err:
        print(f"{name}: error: {err}", file=sys.stderr)
        sys.exit(2)
    except OSError as err:
        if err.errno not in _DISK_ERRORS:
            raise
        where = f" ({err.filename})" if err.filename else ""
        print(f"{name}: error: {_DISK_ERRORS[err.errno]}{where}; nothing already saved was lost. Fix that, run "
              f"`teledex-repair` on the dataset if a recording was interrupted, and retry.", file=sys.stderr)
        sys.exit(2)
