"""The input sources by their --teleop.source name: where a teleoperator looks its source up.

Each kind is an InputSource (sources.py): it builds itself from the teleoperator's config and describes itself, so the
teleoperator names no source class. A new kind is one class plus its `register_source` (the leader arm read in
process registers itself from the teleoperator package, which may use the devices it reads).
"""

from ..errors import ConfigError
from .sources import FileReplaySource, InputSource, UdpSource, UnixDatagramSource
from .webxr import WebXRSource
from .xrobotoolkit import XRoboToolkitSource

SOURCE_KINDS: dict[str, type[InputSource]] = {"udp": UdpSource, "unix": UnixDatagramSource,
                                              "replay": FileReplaySource, "xrobotoolkit": XRoboToolkitSource,
                                              "webxr": WebXRSource}


def register_source(name: str, kind: type[InputSource]) -> None:
    """Make `kind` the source --teleop.source=`name` builds; a name belongs to one kind."""
    registered = SOURCE_KINDS.setdefault(name, kind)
    if registered is not kind:
        raise ValueError(f"input source {name!r} is already registered ({registered.__name__})")


def source_kind(name: str) -> type[InputSource]:
    try:
        return SOURCE_KINDS[name]
    except KeyError:
        raise ConfigError(f"unknown input source {name!r}; registered: {', '.join(SOURCE_KINDS)} (--teleop.source)"
                          ) from None
