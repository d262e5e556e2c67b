"""The project's exception root, and what each kind asks of the user.

Every error a command refuses with is a TeledexError, and cli/errors.py run_command prints it as one line (what is
wrong, where, and the fix) with exit code 2; anything else is a bug and keeps its traceback. Each kind keeps the
built-in base it had before (ValueError, ConnectionError), so every `except ValueError` / `except ConnectionError`
written against the old classes still catches it.

Nothing of the project is imported here (an import-linter contract): every layer can raise these.
"""

import os
import sys

USER_ERROR_EXIT = 2  # a command refusing what it was given, in one line


class TeledexError(Exception):
    """Something the user must fix; the message says what is wrong, where, and how to fix it."""


class ConfigError(TeledexError, ValueError):
    """A configuration key or value is wrong (a flag, a YAML field, a policy's threshold): fix the configuration."""


class DataError(TeledexError, ValueError):
    """A dataset or recording file is damaged, incomplete or of another kind: repair it, or give another."""


class DeviceError(TeledexError, ConnectionError):
    """A device, port or bus cannot be used (nothing answering, another device answering, an interface missing or
    down, already taken): plug it in, power it, or free it."""


class ModelError(TeledexError, ValueError):
    """A robot or hand model (a URDF) cannot be used: fix the model, or give another."""


class UserError(TeledexError, ValueError):
    """A command's one-line refusal of what it was given (a flag, a root, a device that does not match), when none of
    the kinds above says it better."""


def teledex_cause(error: BaseException | None) -> "TeledexError | None":
    """The TeledexError behind `error`: itself, or one it was raised from. LeRobot's factories re-raise whatever a
    robot's constructor raises as a ValueError with the whole config in its message (make_robot_from_config), and
    draccus wraps a config's refusal in its own exception; the user's mistake is the error of ours inside."""
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, TeledexError):
            return error
        seen.add(id(error))
        error = error.__cause__ or (None if error.__suppress_context__ else error.__context__)
    return None


def end_lerobot_commands_in_one_line() -> None:
    """In LeRobot's own commands (lerobot-record, lerobot-eval, lerobot-replay ... given our robot, teleoperator or
    env types), an error of ours ends as in our commands: one line naming the fix, exit code 2, no traceback. Called
    when LeRobot imports our plugin packages (both call it; it installs once); any other program keeps its
    tracebacks."""
    global _lerobot_hook_installed
    command = os.path.basename(sys.argv[0]) if sys.argv else ""
    if not command.startswith("lerobot-") or _lerobot_hook_installed:
        return
    previous = sys.excepthook

    def one_line(kind, error, traceback) -> None:
        cause = teledex_cause(error)
        if cause is None:
            return previous(kind, error, traceback)
        print(f"{command}: error: {' '.join(str(cause).split())}", file=sys.stderr)
        sys.exit(USER_ERROR_EXIT)

    sys.excepthook = one_line
    _lerobot_hook_installed = True


_lerobot_hook_installed = False
