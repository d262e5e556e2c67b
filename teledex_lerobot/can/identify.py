"""Who is on a CAN channel: listens (and asks politely) for the devices it knows, so that a driver hearing nothing
from its own device can say what it hears instead (a hand on the arm's channel: the channels are swapped).

Each vendor describes its device with a BusSignature: the read requests that make it speak (none for a device that
streams on its own) and how to recognise its frames. The requests are harmless reads (version, handshake) on the
device's own IDs, so they cost nothing to whatever else is on the bus.
"""

import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import can

logger = logging.getLogger(__name__)

LISTEN_S = 0.3


@dataclass(frozen=True)
class BusSignature:
    kind: str  # e.g. "Agilex Piper"; a driver compares it with its own kind
    requests: tuple[tuple[int, bytes], ...]  # (CAN ID, data) read requests; empty for a device that streams
    recognise: Callable[[can.Message], str | None]  # the device a frame comes from ("a right LinkerHand ..."), or None


@dataclass(frozen=True)
class Heard:
    kind: str
    description: str


def identify(interface: str, channel: str, signatures: Iterable[BusSignature],
             listen_s: float = LISTEN_S) -> list[Heard]:
    """The known devices that speak on interface:channel within listen_s; empty if the bus cannot be opened a
    second time (some USB adapters allow one handle only)."""
    signatures = tuple(signatures)
    try:
        bus = can.Bus(channel=channel, interface=interface)
    except Exception as error:  # identification is a hint; the caller's own error says what failed
        logger.debug("cannot open %s:%s to identify its devices: %s", interface, channel, error)
        return []
    heard: dict[str, Heard] = {}
    try:
        for signature in signatures:
            for can_id, data in signature.requests:
                bus.send(can.Message(arbitration_id=can_id, data=data, is_extended_id=False))
        deadline = time.monotonic() + listen_s
        while (remaining_s := deadline - time.monotonic()) > 0:
            message = bus.recv(timeout=remaining_s)
            if message is None:
                continue
            for signature in signatures:
                description = signature.recognise(message)
                if description is not None:
                    heard.setdefault(description, Heard(signature.kind, description))
    except can.CanError as error:
        logger.debug("identifying the devices on %s:%s failed: %s", interface, channel, error)
    finally:
        bus.shutdown()
    return list(heard.values())


def swapped_channel_hint(own_kind: str, interface: str, channel: str, heard: list[Heard]) -> str:
    """What to tell an operator whose `own_kind` device is silent on a channel where other devices were heard;
    empty when only its own kind (or nothing) was heard."""
    others = [h.description for h in heard if h.kind != own_kind]
    if not others:
        return ""
    return (f"On {interface}:{channel} there is {' and '.join(others)}, not the {own_kind}: the channels look swapped "
            "(check real.arm.channel and real.hand.channel). ")
