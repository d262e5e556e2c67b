"""The error a dataset command reports as one line (what is wrong, where, and the fix), never as a traceback."""


class DatasetError(ValueError):
    pass
