"""Record an operator's session from a live input device, step by step (e.g. the motions of a hand calibration),
into a recorded input file: the same packets, through the same sources, as a teleoperation session records."""

from collections.abc import Callable, Sequence
from pathlib import Path

from ..errors import ConfigError
from ..operator.calibration_session import CalibrationStep
from . import PARSERS
from .datagram_file import DatagramWriter
from .receiver import InputReceiver
from .sources import UdpSource
from .webxr import WebXRSource
from .xrobotoolkit import XRoboToolkitSource

SOURCES = {"udp": UdpSource, "xrobotoolkit": XRoboToolkitSource, "webxr": WebXRSource}


def record_session(kind: str, parser: str, bind: str, port: int, path: Path,
                   steps: Sequence[CalibrationStep], prompt: Callable[[str, float], None],
                   wait: Callable[[float], None]) -> int:
    """Listen on a `kind` source; for each step call prompt(instruction, seconds), mark the step's start in the file,
    then record for that long. Returns how many packets were recorded into `path`."""
    if parser not in PARSERS:
        raise ConfigError(f"parser must be one of {sorted(PARSERS)} (got {parser!r})")
    path.parent.mkdir(parents=True, exist_ok=True)
    writer = DatagramWriter(path, parser, "operator session: " + "; ".join(step.instruction for step in steps))
    receiver = InputReceiver(PARSERS[parser], writer)
    source = SOURCES[kind](bind, port)
    source.start(receiver)
    try:
        for step in steps:
            prompt(step.instruction, step.seconds)
            writer.mark(step.name)
            wait(step.seconds)
    finally:
        source.stop()
        writer.close()
    return receiver.packets + receiver.parse_failures
