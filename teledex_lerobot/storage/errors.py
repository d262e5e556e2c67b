"""The errors a command reports as one line (what is wrong, where, and the fix), never as a traceback
(cli/errors.py run_command)."""


class DatasetError(ValueError):
    """A dataset or file that cannot be read or written as it is."""


class UserError(DatasetError):
    """Bad input or configuration given to a command (a flag, a root, a device that does not match)."""
