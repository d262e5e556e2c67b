"""Which LinkerHand answers on a channel: the hand's own identity replies, compared with the model we expect.

Two replies say what a hand is (frame layouts read from linkerbot and the vendor's GitHub SDK):
- the version reply (request 0x64): [0x64, joint count, ...], byte 4 of the frame is 'L' or 'R'. The O6, L6, L7 and
  L10 answer it; the vendor's own L20 code treats the version as unsupported, so an L20 may not;
- the serial number (request 0xC0): four frames [0xC0, index, six ASCII bytes], e.g. "LHO6-03-123-L-B-1-A": the
  first field names the model ("LH" + model code), the fourth the side.
A driver checks the identity at connect and the doctor reports it: an L10 plugged in where the preset expects an O6
would otherwise be driven with the O6's frames. A hand that gives neither reply is not refused on that ground (its
silence is judged by the feedback check), and a joint count we know no model for is only reported.
"""

import logging
import re
import time
from dataclasses import dataclass

import can

from ...can.port import CanPortConfig
from . import protocol as lp

logger = logging.getLogger(__name__)

IDENTITY_TIMEOUT_S = 0.25
SERIAL_FRAMES = 4
# Model codes (the serial number's first field after "LH") and the joint count their version reply gives.
JOINT_COUNTS = {"O6": 6, "L6": 6, "L7": 7, "L10": 10, "L20": 20, "G20": 20, "L21": 25, "L25": 25}
# Our device models and the vendor model code each one is.
MODEL_CODES = {"linkerhand_o6": "O6", "linkerhand_l10": "L10", "linkerhand_l20": "L20"}
_SERIAL_MODEL = re.compile(r"^LH([A-Z]\d+)")


@dataclass(frozen=True)
class HandIdentity:
    joint_count: int | None = None  # the version reply's joint count
    side: str | None = None  # "left" / "right", from the version reply
    serial_number: str | None = None

    @property
    def model_code(self) -> str | None:
        """The vendor model code the serial number names, e.g. "L10"."""
        match = _SERIAL_MODEL.match(self.serial_number or "")
        return match.group(1) if match else None

    def describe(self) -> str:
        parts = []
        if self.serial_number:
            parts.append(f"serial number {self.serial_number!r}")
        if self.joint_count is not None:
            parts.append(f"{self.joint_count} joints in its version reply")
        if self.side:
            parts.append(f"a {self.side} hand")
        return ", ".join(parts) or "no identity reply"


def parse_identity(replies: list[can.Message], hand_id: int) -> HandIdentity:
    """The identity in a hand's replies (other IDs and one-byte requests ignored)."""
    joint_count = side = None
    serial: dict[int, bytes] = {}
    for message in replies:
        data = bytes(message.data)
        if message.arbitration_id != hand_id or len(data) < 2:
            continue
        if data[0] == lp.VERSION and len(data) >= 5:
            joint_count = data[1]
            side = {ord("L"): "left", ord("R"): "right"}.get(data[4])
        elif data[0] == lp.SERIAL and len(data) >= 3:
            serial[data[1]] = data[2:8]
    serial_number = None
    if all(index in serial for index in range(SERIAL_FRAMES)):
        text = b"".join(serial[index] for index in range(SERIAL_FRAMES)).rstrip(b"\x00")
        serial_number = text.decode("ascii", errors="replace") or None
    return HandIdentity(joint_count, side, serial_number)


def read_identity(port: CanPortConfig, hand_id: int) -> HandIdentity | None:
    """Ask the hand on port for its identity; None when the bus cannot be opened a second time (some adapters
    allow one handle only), which leaves the check to the caller's own error."""
    try:
        bus = can.Bus(channel=port.channel, interface=port.interface, bitrate=port.bitrate)
    except Exception as error:
        logger.debug("cannot open %s:%s to read the hand's identity: %s", port.interface, port.channel, error)
        return None
    replies = []
    try:
        for cmd in (lp.VERSION, lp.SERIAL):
            bus.send(can.Message(arbitration_id=hand_id, data=[cmd], is_extended_id=False))
        deadline = time.monotonic() + IDENTITY_TIMEOUT_S
        while (remaining := deadline - time.monotonic()) > 0:
            message = bus.recv(timeout=remaining)
            if message is not None:
                replies.append(message)
                identity = parse_identity(replies, hand_id)
                if identity.serial_number and identity.joint_count is not None:
                    break
    except can.CanError as error:
        logger.debug("reading the hand's identity on %s:%s failed: %s", port.interface, port.channel, error)
    finally:
        bus.shutdown()
    return parse_identity(replies, hand_id)


def model_mismatch(model: str, identity: HandIdentity) -> str | None:
    """Why the hand that answered is not a `model`, or None when nothing says so."""
    expected = MODEL_CODES.get(model)
    if expected is None:
        return None
    code = identity.model_code
    if code is not None and code != expected:
        return f"the hand reports itself as a LinkerHand {code} ({identity.describe()})"
    count = identity.joint_count
    known = {other for other, joints in JOINT_COUNTS.items() if joints == count}
    if code is None and count is not None and known and expected not in known:
        return (f"the hand reports {count} joints, which is a LinkerHand {' or '.join(sorted(known))}, not an "
                f"{expected} ({identity.describe()})")
    return None


def wrong_model_fix(model: str, identity: HandIdentity) -> str:
    code = identity.model_code or next((c for c, j in JOINT_COUNTS.items() if j == identity.joint_count), None)
    ours = next((name for name, c in MODEL_CODES.items() if c == code), None)
    use = f"use a preset whose hand is {ours!r}" if ours else "use a preset for the hand you have"
    return f"plug in the {MODEL_CODES[model]} the preset expects, or {use}"


def check_hand_model(model: str, side: str, port: CanPortConfig, who: str) -> HandIdentity | None:
    """At connect: refuse a hand that says it is another model (DeviceUnavailable, one line with the fix)."""
    from ..device_fault import DeviceUnavailable

    identity = read_identity(port, lp.layout_for(model).hand_id(side))
    if identity is None:
        return None
    mismatch = model_mismatch(model, identity)
    if mismatch is not None:
        raise DeviceUnavailable(f"{who}: expected a LinkerHand {MODEL_CODES[model]} on {port.interface}:"
                                f"{port.channel}, but {mismatch}. Fix: {wrong_model_fix(model, identity)}.")
    logger.info("%s: %s", who, identity.describe())
    return identity
