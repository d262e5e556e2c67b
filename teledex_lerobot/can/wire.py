"""What travels between a teledex loopback CAN node and its broker, and where the broker listens.

Each node (a python-can bus opened with interface="teledex") holds one Unix SOCK_SEQPACKET connection to the
broker. Packet boundaries are kept, so a packet is exactly one CAN frame or one control message: first the node's
hello (JSON) and the broker's answer (JSON), then binary frames both ways. A Unix socket is a file on this machine:
nothing of it can reach a network.
"""

import json
import os
import struct
import tempfile

import can

# Where the broker listens: this environment variable, else a per-user socket in the runtime directory.
BROKER_ENV = "TELEDEX_CAN_BROKER"
PROTOCOL_VERSION = 2

# timestamp (s, wall clock: python-can's convention; when the sender put the frame on the wire), arbitration id,
# flags, dlc; then the data bytes
HEADER = struct.Struct("<dIBB")
MAX_DATA = 64  # CAN FD
MAX_PACKET = 4096  # frames are at most HEADER.size + MAX_DATA; control messages are small JSON
FLAG_EXTENDED, FLAG_REMOTE, FLAG_ERROR, FLAG_FD, FLAG_BRS, FLAG_ESI = 1, 2, 4, 8, 16, 32
FLAG_OWN = 64  # set by the broker on a frame it returns to its sender (receive_own_messages=True)
FLAG_HEARTBEAT = 128  # not a frame: the broker's tick, stamped when sent, telling a node the wire is not late
_MESSAGE_FLAGS = (("is_extended_id", FLAG_EXTENDED), ("is_remote_frame", FLAG_REMOTE),
                  ("is_error_frame", FLAG_ERROR), ("is_fd", FLAG_FD), ("bitrate_switch", FLAG_BRS),
                  ("error_state_indicator", FLAG_ESI))


def broker_path() -> str:
    explicit = os.environ.get(BROKER_ENV)
    if explicit:
        return explicit
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    directory = runtime if runtime and os.path.isdir(runtime) else tempfile.gettempdir()
    return os.path.join(directory, f"teledex-can-{os.getuid()}.sock")


def pack_frame(message: can.Message, sent_s: float) -> bytes:
    """The packet for a frame put on the wire at sent_s (wall clock): every node receives it with that timestamp,
    as a CAN controller stamps a frame when it crosses the wire, however late the broker relays it."""
    flags = sum(bit for attribute, bit in _MESSAGE_FLAGS if getattr(message, attribute))
    data = bytes(message.data or b"")
    if len(data) > MAX_DATA:
        raise ValueError(f"CAN frame data is at most {MAX_DATA} bytes (got {len(data)})")
    return HEADER.pack(sent_s, message.arbitration_id, flags, message.dlc) + data


def mark_own(packet: bytes) -> bytes:
    """The frame as returned to its sender (receive_own_messages=True)."""
    marked = bytearray(packet)
    marked[12] |= FLAG_OWN
    return bytes(marked)


def heartbeat(sent_s: float) -> bytes:
    return HEADER.pack(sent_s, 0, FLAG_HEARTBEAT, 0)


def heartbeat_time(packet: bytes) -> float | None:
    """The broker's send time of a heartbeat packet; None for a frame."""
    timestamp_s, _, flags, _ = HEADER.unpack_from(packet)
    return timestamp_s if flags & FLAG_HEARTBEAT else None


def unpack_frame(packet: bytes, channel: str) -> can.Message:
    timestamp_s, arbitration_id, flags, dlc = HEADER.unpack_from(packet)
    return can.Message(timestamp=timestamp_s, arbitration_id=arbitration_id, dlc=dlc, data=packet[HEADER.size:],
                       channel=channel, is_rx=not flags & FLAG_OWN, check=False,
                       **{attribute: bool(flags & bit) for attribute, bit in _MESSAGE_FLAGS})


def encode_control(message: dict) -> bytes:
    return json.dumps(message).encode()


def decode_control(packet: bytes) -> dict:
    return json.loads(packet.decode())
