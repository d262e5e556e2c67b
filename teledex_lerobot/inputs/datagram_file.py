"""Recorded datagram files ("teledex-datagrams/1"): the exact bytes an input device sent, with their timing.

JSON lines. The first line is a header {"format": "teledex-datagrams/1", "parser": <name>, "description": str,
optionally "control": <the control config the device was driven with>}; each further line is {"t_ns": <ns since the
first datagram>, "data": <base64 of the datagram bytes>}, or {"step": <name>}: a session's step (a calibration's,
operator/calibration_session.py) starts with the datagram after it. Base64 keeps any payload (garbage and truncated
packets included) exact.
"""

import base64
import json
import threading
from pathlib import Path

from ..config_files import resolve_file
from ..errors import DataError
from ..paths import STREAMS_DIR

FORMAT = "teledex-datagrams/1"
_FIX = "record the session again, or give another recorded input file"


def datagram_file_path(name_or_path: str) -> Path:
    """A recorded input file: a path, or a name in configs/streams/ (<name>.datagrams.jsonl)."""
    if name_or_path.endswith(".npz"):
        raise DataError(f"{name_or_path} is an operator stream (.npz); replay plays recorded input files. Convert it: "
                        f"teledex-convert stream-to-datagrams {name_or_path} <name>.datagrams.jsonl")
    return resolve_file(name_or_path, STREAMS_DIR, (".datagrams.jsonl", ".jsonl"), "recorded input file")


class DatagramWriter:
    """Appends datagrams to a file as they arrive (thread-safe: sources call it from their own thread)."""

    def __init__(self, path, parser: str, description: str = "", control: str = ""):
        self._file = Path(path).open("w")
        self._file.write(json.dumps(_header(parser, description, control)) + "\n")
        self._first_ns: int | None = None
        self._lock = threading.Lock()

    def write(self, data: bytes, received_ns: int) -> None:
        with self._lock:
            if self._first_ns is None:
                self._first_ns = received_ns
            line = {"t_ns": received_ns - self._first_ns, "data": base64.b64encode(data).decode()}
            self._file.write(json.dumps(line) + "\n")

    def mark(self, step: str) -> None:
        """The datagrams from here on belong to the session's step `step`."""
        with self._lock:
            self._file.write(json.dumps({"step": step}) + "\n")

    def close(self) -> None:
        with self._lock:
            self._file.close()


def _header(parser: str, description: str, control: str) -> dict:
    return {"format": FORMAT, "parser": parser, "description": description, **({"control": control} if control else {})}


def write_datagrams(path, parser: str, datagrams: list[tuple[int, bytes]], description: str = "",
                    control: str = "") -> None:
    """Write (t_ns, bytes) pairs, t_ns from 0 and increasing."""
    lines = [json.dumps(_header(parser, description, control))]
    lines += [json.dumps({"t_ns": int(t), "data": base64.b64encode(d).decode()}) for t, d in datagrams]
    Path(path).write_text("\n".join(lines) + "\n")


def read_header(path) -> dict:
    """The header line alone (a file's parser and control config, without reading its datagrams)."""
    path = Path(path)
    with path.open() as file:
        try:
            header = json.loads(file.readline())
        except ValueError as error:
            raise DataError(f"{path}: not a {FORMAT} file ({error}); {_FIX}") from error
    if not isinstance(header, dict) or header.get("format") != FORMAT or "parser" not in header:
        raise DataError(f"{path}: not a {FORMAT} file (its first line must be the header with format and parser); "
                        f"{_FIX}")
    return header


def read_datagrams(path) -> tuple[dict, list[tuple[int, bytes]]]:
    """(header, [(t_ns, bytes), ...]); a session's steps are the header's "steps": [(name, index of the step's first
    datagram), ...]. Raises DataError naming the file and line on a malformed file."""
    path = Path(path)
    number = 1  # the line being read, for the error
    try:
        lines = path.read_text().splitlines()  # a binary file: UnicodeDecodeError, a ValueError
        header = json.loads(lines[0])
        if not isinstance(header, dict) or header.get("format") != FORMAT:
            raise ValueError(f"its header is not a JSON object with format {FORMAT!r}")
        datagrams: list[tuple[int, bytes]] = []
        steps: list[tuple[str, int]] = []
        for number in range(2, len(lines) + 1):
            line = lines[number - 1]
            if line.strip():
                entry = json.loads(line)
                if not isinstance(entry, dict):
                    raise ValueError("a datagram line must be an object {t_ns, data}")
                if "step" in entry:
                    steps.append((str(entry["step"]), len(datagrams)))
                    continue
                datagrams.append((int(entry["t_ns"]), base64.b64decode(entry["data"], validate=True)))
    except (IndexError, KeyError, TypeError, ValueError) as error:
        raise DataError(f"{path}: line {number}: not a {FORMAT} file ({error}); {_FIX}") from error
    if not datagrams or any(b[0] < a[0] for a, b in zip(datagrams, datagrams[1:])):
        raise DataError(f"{path}: needs at least one datagram, in time order; {_FIX}")
    if steps:
        header["steps"] = steps
    return header, datagrams
