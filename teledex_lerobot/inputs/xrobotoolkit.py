"""The XRoboToolkit headset app (Pico, Quest) streaming straight to us, with no PC service in between.

What the published app does (XRoboToolkit-Unity-Client: TcpHandler.cs, PackageHandle.cs, NetCMD.cs, TrackingData.cs,
UIUdpReceiver.cs) and its PC service (tcpserverworker.cpp, tcpconnectionmodel.cpp, Manage_global.h):

- Frames, both directions: head byte, command byte, body length (uint32 little-endian), body, timestamp (int64
  little-endian), tail byte 0xA5: 15 bytes around the body. Headset -> PC frames start with 0x3F, PC -> headset
  with 0xCF. The headset stamps its frames with Unix milliseconds at send time.
- After connecting to TCP port 63901 the headset sends 0x19 "<SN>|-1" (connect) and 0x6C "<SN>|1.0|<app version>",
  then, for every Unity frame with tracking on, 0x6D {"functionName":"Tracking","value":"<state JSON as a string>"}
  (xr_state.py parses the state; its timeStampNs is the sample time on the headset's clock), and 0x23 "<SN>" every
  10 s. It needs no answer; it reconnects by itself 2 s after a drop.
- Discovery: the headset never asks. It listens on UDP 29888 for 0xCF 0x7E frames whose body is the PC's IPv4
  address, lists each address it hears, and connects where the operator taps (or to an address typed in the app).
  The PC service broadcasts that frame every 5 s to every local subnet; we send it only to the headset address we
  are given (`announce_to`), so nothing is broadcast unless that address is itself a broadcast address.

The stream is read as the PC service reads it: bytes before a head byte are skipped, a frame whose tail byte is
wrong is dropped and the search resumes one byte later, so garbage and torn frames cost only themselves.

One operator: the link belongs to the first allowed connection until it drops (closed, a TCP keepalive that goes
unanswered after a Wi-Fi drop, or silent for longer than the app's heartbeat period) or the operator hands it over
at the console (`hand_over`); any other connection meanwhile is refused (logged, counted in `refused`, closed
unread), so nobody else can press B for the operator. Whatever the old connection had not delivered dies with it,
and the new one restarts the clock estimate, bounded by the last offset so that states the app queued during the
drop are stamped when they were captured, not as fresh (inputs/clock_sync).
"""

import json
import logging
import selectors
import socket
import struct
import threading
import time
from dataclasses import dataclass
from typing import Self

from .receiver import InputReceiver
from .senders import LOCAL_BIND, SenderFilter, cannot_listen, describe_listener
from .sources import POLL_S, ThreadedSource

logger = logging.getLogger(__name__)

TCP_PORT = 63901  # the app connects to this port only (TcpHandler.TCP_PORT)
DISCOVERY_PORT = 29888  # the app listens here for the PC's address (UIUdpReceiver.UdpListenPort)
HEADSET_HEAD, PC_HEAD, TAIL = 0x3F, 0xCF, 0xA5
CMD_CONNECT, CMD_HEARTBEAT, CMD_VERSION, CMD_FUNCTION, CMD_PC_ADDRESS = 0x19, 0x23, 0x6C, 0x6D, 0x7E
FRAME_OVERHEAD = 15
# The app's own receive buffer is 63 KiB and its largest state (both hands, body and motion trackers) is ~16 KiB;
# a longer length field is garbage, and refusing it keeps one bad byte from stalling the stream.
MAX_BODY_BYTES = 64 * 1024
ANNOUNCE_PERIOD_S = 5.0
# The app sends a heartbeat every 10 s even with tracking off: a connection silent longer has gone (a half-open
# socket after a Wi-Fi drop, or something that connected and never spoke) and no longer holds the link.
OWNER_SILENCE_S = 12.0
# TCP keepalive on the owner's socket: probes after 2 s without data, 3 unanswered 1 s apart = the headset is gone.
KEEPALIVE = {"TCP_KEEPIDLE": 2, "TCP_KEEPINTVL": 1, "TCP_KEEPCNT": 3}
_HEADER = struct.Struct("<BBI")
_TRAILER = struct.Struct("<qB")


@dataclass(frozen=True)
class Frame:
    command: int
    body: bytes
    sent_ms: int  # the sender's Unix milliseconds when it packed the frame


def encode_frame(command: int, body: bytes, sent_ms: int, head: int = PC_HEAD) -> bytes:
    return _HEADER.pack(head, command, len(body)) + body + _TRAILER.pack(sent_ms, TAIL)


class FrameReader:
    """Splits a TCP byte stream into frames, however the stream was cut into reads."""

    def __init__(self, head: int = HEADSET_HEAD):
        self.head = head
        self.skipped_bytes = 0  # garbage: bytes that were not part of a valid frame
        self._buffer = bytearray()

    def feed(self, data: bytes) -> list[Frame]:
        buffer = self._buffer
        buffer += data
        frames = []
        while buffer:
            start = buffer.find(self.head)
            if start < 0:
                self.skipped_bytes += len(buffer)
                buffer.clear()
                break
            if start:
                self.skipped_bytes += start
                del buffer[:start]
            if len(buffer) < _HEADER.size:
                break
            _, command, length = _HEADER.unpack_from(buffer)
            end = _HEADER.size + length + _TRAILER.size
            if length > MAX_BODY_BYTES or (len(buffer) >= end and buffer[end - 1] != TAIL):
                self.skipped_bytes += 1
                del buffer[:1]
                continue
            if len(buffer) < end:
                break
            sent_ms, _ = _TRAILER.unpack_from(buffer, _HEADER.size + length)
            frames.append(Frame(command, bytes(buffer[_HEADER.size:_HEADER.size + length]), sent_ms))
            del buffer[:end]
        return frames


def pc_address_announcement(address: str, now_s: int | None = None) -> bytes:
    """The frame the app's discovery listener turns into a "connect to <address>" button."""
    return encode_frame(CMD_PC_ADDRESS, address.encode("ascii"), int(time.time()) if now_s is None else now_s)


def split_host_port(text: str, default_port: int) -> tuple[str, int]:
    host, _, port = text.rpartition(":") if text.count(":") == 1 else (text, "", "")
    return host, int(port) if port else default_port


class XRoboToolkitSource(ThreadedSource):
    """TCP server for the XRoboToolkit app; optionally announces our address to one headset (discovery)."""

    default_port = TCP_PORT
    any_device = False  # the app sends XR states only

    def __init__(self, bind: str = LOCAL_BIND, port: int = TCP_PORT, allow: list[str] | tuple[str, ...] = (),
                 announce_to: str = ""):
        super().__init__()
        self.bind = bind
        self.senders = SenderFilter(allow)
        try:
            self.server = socket.create_server((bind, port))
        except OSError as error:
            raise cannot_listen(bind, port, error, "the XRoboToolkit app connects to this port only (XRoboToolkit's "
                                "own PC service listens there too: stop it, we speak to the app ourselves)") from error
        self.server.setblocking(False)
        self.address = self.server.getsockname()
        self.announce_to = split_host_port(announce_to, DISCOVERY_PORT) if announce_to else None
        self.announced_address = ""
        self._announcer: socket.socket | None = None
        if self.announce_to is not None:
            self.announced_address = self._address_seen_by(self.announce_to[0], bind)
            self._announcer = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            if self.announce_to[0].endswith(".255"):
                self._announcer.setsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST, 1)
                logger.warning("Announcing %s by broadcast to %s: every device on that network receives it",
                               self.announced_address, self.announce_to[0])
        self.connections = 0
        self.refused = 0  # connections refused because another one held the link
        self._refused_hosts: set[str] = set()
        self.device_serial = ""
        self.app_version = ""
        self.tracking_frames = 0
        self.other_frames = 0
        self._skipped_before = 0  # garbage from connections already closed
        self._connection: socket.socket | None = None
        self._peer = ""
        self._reader: FrameReader | None = None
        self._heard_ns = 0  # when the owner last sent anything
        self._handing_over = threading.Event()

    @classmethod
    def from_config(cls, config, port: int) -> Self:
        return cls(config.bind, port, config.allow, config.announce_to)

    def describe(self, name: str) -> list[str]:
        lines = [describe_listener(name, self.bind, self.address[1], self.senders)]
        if self.announce_to:
            lines.append(f"  announcing {self.announced_address} to the XRoboToolkit app at {self.announce_to[0]}:"
                         f"{self.announce_to[1]} every {ANNOUNCE_PERIOD_S:.0f} s")
        return lines

    def diagnostics(self) -> list[str]:
        return [*super().diagnostics(), f"connections={self.connections}", f"skipped_bytes={self.skipped_bytes}"]

    @property
    def skipped_bytes(self) -> int:
        return self._skipped_before + (self._reader.skipped_bytes if self._reader is not None else 0)

    @staticmethod
    def _address_seen_by(headset: str, bind: str) -> str:
        """Our address as the headset reaches it: the bind address, or for 0.0.0.0 the route's source address
        (a UDP connect picks it; it sends nothing)."""
        if bind not in ("0.0.0.0", ""):
            return bind
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect((headset, DISCOVERY_PORT))
            return probe.getsockname()[0]

    def _run(self, receiver: InputReceiver) -> None:
        selector = selectors.DefaultSelector()
        selector.register(self.server, selectors.EVENT_READ, "accept")
        next_announce = time.monotonic()
        try:
            while not self._stop.is_set():
                if self._announcer is not None and time.monotonic() >= next_announce:
                    self._announce()
                    next_announce = time.monotonic() + ANNOUNCE_PERIOD_S
                for key, _ in selector.select(POLL_S):
                    if key.data == "accept":
                        self._accept(selector, receiver)
                    else:
                        self._read(selector, receiver)
                if self._handing_over.is_set():
                    self._handing_over.clear()
                    if self._connection is not None:
                        logger.warning("XRoboToolkit: %s handed over at the console; the next connection takes the "
                                       "link", self._peer)
                        self._drop_connection(selector)
                elif self._connection is not None and self.clock() - self._heard_ns > OWNER_SILENCE_S * 1e9:
                    logger.warning("XRoboToolkit: %s silent for %.0f s: the link is free", self._peer, OWNER_SILENCE_S)
                    self._drop_connection(selector)
        finally:
            self._drop_connection(selector)
            selector.close()

    def _announce(self) -> None:
        try:
            self._announcer.sendto(pc_address_announcement(self.announced_address), self.announce_to)
        except OSError as error:
            logger.warning("Could not announce our address to %s:%d: %s", *self.announce_to, error)

    def _accept(self, selector: selectors.BaseSelector, receiver: InputReceiver) -> None:
        try:
            connection, (host, port, *_) = self.server.accept()
        except BlockingIOError:
            return
        if not self.senders.allows(host):
            connection.close()
            return
        if self._connection is not None:
            self.refused += 1
            if host not in self._refused_hosts:  # an app retries every 2 s: say it once per address
                self._refused_hosts.add(host)
                logger.warning("XRoboToolkit: refused a connection from %s:%d: the link belongs to %s until it drops "
                               "(or press h at the console to hand it over)", host, port, self._peer)
            connection.close()
            return
        connection.setblocking(False)
        connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        connection.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        for option, value in KEEPALIVE.items():
            if hasattr(socket, option):  # Linux names; other systems keep their defaults
                connection.setsockopt(socket.IPPROTO_TCP, getattr(socket, option), value)
        self._connection, self._reader, self._peer = connection, FrameReader(), f"{host}:{port}"
        self._heard_ns = self.clock()
        self.connections += 1
        receiver.new_sender(self._heard_ns)
        selector.register(connection, selectors.EVENT_READ, "read")
        logger.info("XRoboToolkit headset connected from %s:%d", host, port)

    def hand_over(self) -> list[str]:
        """Let the connection that holds the link go (from the console): the next one to connect takes it."""
        self._handing_over.set()
        return []

    def _drop_connection(self, selector: selectors.BaseSelector) -> None:
        if self._connection is None:
            return
        selector.unregister(self._connection)
        self._connection.close()
        self._skipped_before += self._reader.skipped_bytes
        self._connection = self._reader = None

    def _read(self, selector: selectors.BaseSelector, receiver: InputReceiver) -> None:
        try:
            data = self._connection.recv(1 << 16)
        except BlockingIOError:
            return
        except OSError as error:
            data = b""
            logger.info("XRoboToolkit connection error: %s", error)
        if not data:
            logger.info("XRoboToolkit headset %s disconnected (the app reconnects by itself)", self.device_serial)
            self._drop_connection(selector)
            return
        received_ns = self._heard_ns = self.clock()
        for frame in self._reader.feed(data):
            self._handle(frame, receiver, received_ns)

    def _handle(self, frame: Frame, receiver: InputReceiver, received_ns: int) -> None:
        if frame.command == CMD_FUNCTION:
            try:
                message = json.loads(frame.body)
            except ValueError:
                message = None
            if isinstance(message, dict) and message.get("functionName") == "Tracking":
                value = message.get("value")
                self.tracking_frames += 1
                receiver.handle(value.encode() if isinstance(value, str) else frame.body, received_ns)
                return
        elif frame.command in (CMD_CONNECT, CMD_VERSION):
            fields = frame.body.decode("utf-8", "replace").split("|")
            self.device_serial = fields[0]
            if frame.command == CMD_VERSION and len(fields) > 2:
                self.app_version = fields[2]
                logger.info("XRoboToolkit headset %s, app version %s", self.device_serial, self.app_version)
            return
        elif frame.command == CMD_HEARTBEAT:
            return
        self.other_frames += 1

    def _close(self) -> None:
        self.server.close()
        if self._announcer is not None:
            self._announcer.close()
