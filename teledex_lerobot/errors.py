"""The project's exception root, and what each kind asks of the user.

Every error a command refuses with is a TeledexError, and cli/errors.py run_command prints it as one line (what is
wrong, where, and the fix) with exit code 2; anything else is a bug and keeps its traceback. Each kind keeps the
built-in base it had before (ValueError, ConnectionError), so every `except ValueError` / `except ConnectionError`
written against the old classes still catches it.

Nothing of the project is imported here (an import-linter contract): every layer can raise these.
"""


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
