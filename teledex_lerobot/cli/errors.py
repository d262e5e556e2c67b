"""How every TeleDex command starts and fails.

Starts: logging is set up once, at the command's entry, the same way for every command: our own messages (the
teleoperation diagnostics line, state-machine transitions, device faults) at INFO, other libraries at WARNING.
Importing LeRobot configures the root logger as a side effect (its import_utils logs through the root logger before
anything is set up), so the set-up replaces whatever is there.

Fails: on bad input (a damaged or missing file, a symbolic link loop), a bad configuration, an unreachable device,
a port in use or a bad disk, one line naming what is wrong and the fix, exit code 2, no traceback; every error the
project raises for the user to fix is a TeledexError (teledex_lerobot/errors.py). A configuration error inside
draccus' parsing is reported by its root cause, not by draccus' generic "Couldn't instantiate class". Anything else
is a bug and keeps its traceback.

Stops: Ctrl-C (SIGINT) and SIGTERM unwind the command as Ctrl-C does (`Interrupted`, a KeyboardInterrupt), so every
`finally` runs: devices are disconnected and files closed. A second signal while it unwinds only gets a note (it
would cut the unwinding short and leave files half-written; SIGKILL still works). The command then ends with one
line saying what was stopped and what it left behind (INTERRUPTED_NOTES), no traceback.

Exit codes: 0 done; 2 bad input, configuration, device, port or disk (one line); 130 stopped by Ctrl-C (SIGINT),
143 by SIGTERM (128 + the signal's number, as shells report it); 1 a bug (with its traceback).
"""

import contextlib
import errno
import logging
import signal
import sys

from ..errors import USER_ERROR_EXIT, TeledexError, UserError, teledex_cause

OUR_LOGGERS = ("teledex_lerobot", "lerobot_robot_teledex", "lerobot_teleoperator_teledex")
_DISK_ERRORS = {errno.ENOSPC: "the disk is full", errno.EROFS: "the file system is read-only",
                errno.EACCES: "permission denied", errno.EPERM: "operation not permitted",
                errno.EDQUOT: "the disk quota is exceeded"}
_SIGNAL_NAMES: dict[int, str] = {signal.SIGINT: "Ctrl-C (SIGINT)", signal.SIGTERM: "SIGTERM"}
# What a command stopped by a signal leaves behind, for its one line (others: nothing more is said).
INTERRUPTED_NOTES = {
    "teledex-record": "the episode in progress was saved as far as it got, marked \"interrupted\" in its metadata "
                      "(dropped with --fault_policy=rerecord), and every episode before it is intact in both formats: "
                      "add more with --resume=true",
    "teledex-push": "nothing local changed; run the same command again: it sends only what the Hub lacks",
}


class Interrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM: the command unwinds as from Ctrl-C."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def setup_logging(level: int = logging.INFO) -> None:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s", force=True)
    for name in OUR_LOGGERS:
        logging.getLogger(name).setLevel(level)


def _root_cause(error: BaseException) -> BaseException:
    while (cause := error.__cause__ or (None if error.__suppress_context__ else error.__context__)) is not None:
        error = cause
    return error


def _config_error(error: BaseException) -> BaseException | None:
    """The user's mistake behind a draccus parsing error, if that is what `error` is."""
    import draccus.utils  # light: draccus is LeRobot's config library, already imported by the commands using it

    if not isinstance(error, draccus.utils.DraccusException):
        return None
    return _root_cause(error)


def run_command(name: str, function, *args):
    """Set up logging, run the command; on bad input, config, device, port or disk print one line and exit with
    code 2; stopped by Ctrl-C or SIGTERM, print one line and exit with 128 + the signal's number."""
    setup_logging()
    try:
        with _signals_interrupt():
            return function(*args)
    except KeyboardInterrupt as err:
        signum = err.signum if isinstance(err, Interrupted) else signal.SIGINT
        note = INTERRUPTED_NOTES.get(name)
        _end(name, f"stopped by {_SIGNAL_NAMES[signum]}" + (f": {note}" if note else ""), 128 + signum)
    except (TeledexError, ConnectionError) as err:  # ours (teledex_lerobot/errors.py), or a device's driver's
        _fail(name, err)
    except OSError as err:
        if err.errno == errno.ELOOP:  # never our bug: a file the command was given
            _fail(name, f"{err.filename or 'a path it reads'} is a symbolic link loop (it points, perhaps through "
                        "other links, back to itself); replace the link with the file or folder it stands for")
        if err.errno == errno.EADDRINUSE:
            _fail(name, f"a network port it needs is in use ({err}): another program (or another run of this one) "
                        "listens there; stop it, or choose another port")
        if err.errno not in _DISK_ERRORS:
            raise
        where = f" ({err.filename})" if err.filename else ""
        _fail(name, f"{_DISK_ERRORS[err.errno]}{where}; nothing already saved was lost. Fix that, run "
                    "`teledex-repair` on the dataset if a recording was interrupted, and retry.")
    except Exception as err:
        if (ours := teledex_cause(err)) is not None:  # raised inside LeRobot's factories or draccus, which wrap it
            _fail(name, ours)
        cause = _config_error(err)
        if cause is None:
            raise
        _fail(name, f"bad configuration: {cause}")


@contextlib.contextmanager
def _signals_interrupt():
    """SIGINT and SIGTERM raise Interrupted in the main thread, once; later ones only say it is stopping."""
    def interrupt(signum, _frame):
        for each in _SIGNAL_NAMES:
            signal.signal(each, stopping)
        raise Interrupted(signum)

    def stopping(signum, _frame):
        print(f"{_SIGNAL_NAMES[signum]} again: still stopping (closing files so that what is saved stays readable)",
              file=sys.stderr, flush=True)

    previous = {each: signal.signal(each, interrupt) for each in _SIGNAL_NAMES}
    try:
        yield
    finally:
        for each, handler in previous.items():
            signal.signal(each, handler)


def with_fix(message, fix: str) -> str:
    """The message, and the fix unless it already gives one."""
    text = str(message).rstrip(". ")
    return text if "fix" in text.lower() else f"{text}; {fix}"


@contextlib.contextmanager
def hand_model_errors():
    """A hand (a built-in name or a URDF path) that cannot be built: one line (UserError) saying why and the fix."""
    from ..kinematics import UrdfError

    try:
        yield
    except UrdfError as err:
        raise UserError(with_fix(err, "fix the URDF, or give a built-in hand name (e.g. linkerhand_l20)")) from None
    except (ValueError, FileNotFoundError) as err:  # no such file or built-in hand, or a bad config: it says which
        raise UserError(str(err)) from None


def _fail(name: str, message) -> None:
    _end(name, f"error: {message}", USER_ERROR_EXIT)


def _end(name: str, message: str, code: int) -> None:
    print(f"{name}: {' '.join(str(message).split())}", file=sys.stderr)
    sys.exit(code)
