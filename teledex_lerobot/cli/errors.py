"""How every TeleDex command starts and fails.

Starts: logging is set up once, at the command's entry, the same way for every command: our own messages (the
teleoperation diagnostics line, state-machine transitions, device faults) at INFO, other libraries at WARNING.
Importing LeRobot configures the root logger as a side effect (its import_utils logs through the root logger before
anything is set up), so the set-up replaces whatever is there.

Fails: on bad input, a bad configuration, an unreachable device or a bad disk, one line naming what is wrong and the
fix, exit code 2, no traceback. A configuration error inside draccus' parsing is reported by its root cause, not by
draccus' generic "Couldn't instantiate class". Anything else is a bug and keeps its traceback.
"""

import errno
import logging
import sys

from ..storage.errors import DatasetError

OUR_LOGGERS = ("teledex_lerobot", "lerobot_robot_teledex", "lerobot_teleoperator_teledex")
_DISK_ERRORS = {errno.ENOSPC: "the disk is full", errno.EROFS: "the file system is read-only",
                errno.EACCES: "permission denied", errno.EPERM: "operation not permitted",
                errno.EDQUOT: "the disk quota is exceeded"}


class UserError(DatasetError):
    pass


def setup_logging(level: int = logging.INFO) -> None:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s", force=True)
    for name in OUR_LOGGERS:
        logging.getLogger(name).setLevel(level)


def _root_cause(error: BaseException) -> BaseException:
    while error.__cause__ is not None or (error.__context__ is not None and not error.__suppress_context__):
        error = error.__cause__ or error.__context__
    return error


def _config_error(error: BaseException) -> BaseException | None:
    """The user's mistake behind a draccus parsing error, if that is what `error` is."""
    import draccus.utils  # light: draccus is LeRobot's config library, already imported by the commands using it

    if not isinstance(error, draccus.utils.DraccusException):
        return None
    return _root_cause(error)


def run_command(name: str, function, *args):
    """Set up logging, run the command; on bad input, config, device or disk print one line and exit with code 2."""
    setup_logging()
    try:
        return function(*args)
    except (DatasetError, ConnectionError) as err:
        _fail(name, err)
    except OSError as err:
        if err.errno not in _DISK_ERRORS:
            raise
        where = f" ({err.filename})" if err.filename else ""
        _fail(name, f"{_DISK_ERRORS[err.errno]}{where}; nothing already saved was lost. Fix that, run "
                    "`teledex-repair` on the dataset if a recording was interrupted, and retry.")
    except Exception as err:
        cause = _config_error(err)
        if cause is None:
            raise
        _fail(name, f"bad configuration: {cause}")


def _fail(name: str, message) -> None:
    print(f"{name}: error: {' '.join(str(message).split())}", file=sys.stderr)
    sys.exit(2)
