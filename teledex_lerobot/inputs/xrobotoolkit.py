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

One operator, and the link stays theirs. A connection first identifies itself: the app's connect frame (0x19
"<SN>|-1") is read within `IDENTIFY_S`, and one that sends anything else first, or nothing, is refused. The first app
to identify takes the link, and from then on the link is reserved for that app's identity, its serial number and
its address (the same headset reconnects from the same address). When its connection drops (closed, a TCP keepalive
unanswered after a Wi-Fi drop, or silent longer than the app's heartbeat period) only that app takes the link back,
at once, even while its old socket is not yet known to be dead; any other app is refused (closed, logged once per
address, counted in `refused`, and as an attempt on the operator's link in `takeover_attempts`, the last one kept in
`last_takeover_attempt`), so nobody else can press B for the operator. Only the console's hand-over (`hand_over`,
key h) ends the reservation: one that lapsed with time would reopen the takeover whenever the operator's app stayed
away that long (a headset put down, a battery changed). Whatever the old connection had not delivered dies with it.
A resumed app stays the same sender (its clock, its tracking space); its clock estimate restarts bounded by the last
offset, so states it queued during the drop are stamped when they were captured, not as fresh (inputs/clock_sync).
The app that connects after a hand-over is a new sender.

The identity keeps other apps and headsets out (a colleague's, a script retrying every 50 ms); it authenticates
nothing: the serial number travels in clear (the app's protocol has no secret), so whoever reads it off the network
and connects from the operator's address (taken over once the headset is off, or by ARP spoofing) passes for the
operator, and a flood of connections can keep the operator's app from identifying (denial of service, not a
takeover).
"""

import json
import logging
import selectors
import socket
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Self

from .receiver import InputReceiver
from .senders import LOCAL_BIND, SenderFilter, cannot_listen, describe_listener
from .sources import POLL_S, ThreadedSource
from .webxr import WebXRSource

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
# socket after a Wi-Fi drop) and is dropped; the link stays reserved for its app.
OWNER_SILENCE_S = 12.0
# The app sends its connect frame the moment it connects; this leaves room for a slow Wi-Fi. A connection that has
# not identified by then is refused.
IDENTIFY_S = 2.0
# Connections waiting to identify; beyond it the oldest is refused (a flood must not exhaust our sockets).
MAX_CALLERS = 16
MAX_TEXT_CHARS = 64  # of the serial number or app version we keep (they come off the network into log lines)
# TCP keepalive on the owner's socket: probes after 2 s without data, 3 unanswered 1 s apart = the headset is gone.
KEEPALIVE = {"TCP_KEEPIDLE": 2, "TCP_KEEPINTVL": 1, "TCP_KEEPCNT": 3}
_HEADER = struct.Struct("<BBI")
_TRAILER = struct.Struct("<qB")


@dataclass(frozen=True)
class Frame:
    command: int
    body: bytes
    sent_ms: int  # the sender's Unix milliseconds when it packed the frame


@dataclass(frozen=True)
class TakeoverAttempt:
    """A connection refused while an operator held the link or had it reserved."""

    address: str  # host:port it came from
    serial: str  # the serial number it sent, "" if it never identified
    at_ns: int  # when it was refused, on the source's clock (teledex_lerobot.clock.now_ns unless injected)


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


def app_fields(body: bytes) -> list[str]:
    """The "|"-separated fields of a connect or version frame ("<SN>|-1", "<SN>|1.0|<app version>"), as printable
    text fit for a log line."""
    return ["".join(c for c in text if c.isprintable())[:MAX_TEXT_CHARS]
            for text in body.decode("utf-8", "replace").split("|")]


@dataclass(eq=False)
class _Caller:
    """A connection that has not identified itself yet."""

    connection: socket.socket
    host: str
    port: int
    since_ns: int  # accepted, on the source's clock
    reader: FrameReader = field(default_factory=FrameReader)


class XRoboToolkitSource(ThreadedSource):
    """TCP server for the XRoboToolkit app; optionally announces our address to one headset (discovery)."""

    default_port = TCP_PORT
    any_device = False  # the app sends XR states only

    def __init__(self, bind: str = LOCAL_BIND, port: int = TCP_PORT, allow: list[str] | tuple[str, ...] = (),
                 announce_to: str = "", view: WebXRSource | None = None):
        super().__init__()
        # the app shows nothing of ours: a page (view only) shows the operator the robot's cameras and status
        self.view = view
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
        self.connections = 0  # connections that took the link (a resume included)
        self.takeover_attempts = 0  # those refused while an operator held the link or had it reserved
        self.last_takeover_attempt: TakeoverAttempt | None = None
        self._refused_hosts: set[str] = set()
        self.device_serial = ""
        self.app_version = ""
        self.tracking_frames = 0
        self.other_frames = 0
        self._skipped_before = 0  # garbage from connections already closed
        self._callers: dict[socket.socket, _Caller] = {}
        self._reserved: tuple[str, str] | None = None  # (serial, host) of the app the link is kept for
        self._connection: socket.socket | None = None
        self._peer = ""
        self._reader: FrameReader | None = None
        self._heard_ns = 0  # when the owner last sent anything
        self._handing_over = threading.Event()

    @classmethod
    def from_config(cls, config, port: int) -> Self:
        view = None
        if config.view_port:
            view = WebXRSource(config.bind, config.view_port, config.allow, config.certificate_dir, view_only=True,
                               port_flag="--teleop.view_port (0: no view page)")
        try:
            return cls(config.bind, port, config.allow, config.announce_to, view)
        except BaseException:
            if view is not None:
                view.stop()
            raise

    @property
    def display(self) -> Self | None:
        return self if self.view is not None else None

    def publish_status(self, status: dict) -> None:
        """The teleop's status to the view page, with a warning while another app has tried to take the link."""
        last = self.last_takeover_attempt
        if last is not None:
            age_s = (self.clock() - last.at_ns) / 1e9
            status = {**status, "takeover": f"an app at {last.address} ({last.serial or 'unidentified'}) tried to "
                                            f"take the link {age_s:.0f} s ago, refused ({self.takeover_attempts} "
                                            "attempts so far; h at the console hands over)"}
        self._view_page().publish_status(status)

    def publish_view(self, scene: Callable[[], dict], frames: dict, published_ns: int,
                     body: Callable[[], dict] | None = None) -> None:
        self._view_page().publish_view(scene, frames, published_ns, body)

    def _view_page(self) -> WebXRSource:
        assert self.view is not None  # the source is a display (the publishers' way in) only with its view page
        return self.view

    def start(self, receiver: InputReceiver) -> None:
        super().start(receiver)
        if self.view is not None:
            self.view.start(receiver)

    def stop(self) -> None:
        if self.view is not None:
            self.view.stop()
        super().stop()

    def describe(self, name: str) -> list[str]:
        lines = [describe_listener(name, self.bind, self.address[1], self.senders)]
        if self.announce_to:
            lines.append(f"  announcing {self.announced_address} to the XRoboToolkit app at {self.announce_to[0]}:"
                         f"{self.announce_to[1]} every {ANNOUNCE_PERIOD_S:.0f} s")
        if self.view is not None:
            lines += self.view.describe(f"{name} view page")
        return lines

    def diagnostics(self) -> list[str]:
        fields = [*super().diagnostics(), f"connections={self.connections}", f"skipped_bytes={self.skipped_bytes}",
                  f"takeover_attempts={self.takeover_attempts}"]
        last = self.last_takeover_attempt
        if last is not None:
            fields.append(f"last_takeover={last.address}({last.serial or 'unidentified'})")
        return fields

    def takeover_status(self) -> dict:
        """For the operator's status display: how many connections tried to take the link from the operator and
        the last one (address, serial, when on the source's clock), or None."""
        last = self.last_takeover_attempt
        return {"takeover_attempts": self.takeover_attempts,
                "last_takeover": None if last is None else {"address": last.address, "serial": last.serial,
                                                            "at_ns": last.at_ns}}

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
                        self._accept(selector)
                    elif key.fileobj is self._connection:
                        self._read(selector, receiver)
                    elif isinstance(key.data, _Caller) and key.data.connection in self._callers:
                        self._identify(key.data, selector, receiver)  # not refused or taken earlier in this batch
                now = self.clock()
                for caller in [c for c in self._callers.values() if now - c.since_ns > IDENTIFY_S * 1e9]:
                    self._refuse(caller, "", f"it did not identify within {IDENTIFY_S:.0f} s", selector)
                if self._handing_over.is_set():
                    self._handing_over.clear()
                    if self._reserved is not None:
                        logger.warning("XRoboToolkit: the link of headset %s at %s handed over at the console; the "
                                       "next app to connect takes it", *self._reserved)
                    self._drop_connection(selector)
                    self._reserved = None
                    self._refused_hosts.clear()  # the next operator hears of every address trying its link
                elif self._connection is not None and now - self._heard_ns > OWNER_SILENCE_S * 1e9:
                    logger.warning("XRoboToolkit: %s silent for %.0f s: its connection is dropped, the link kept for "
                                   "it", self._peer, OWNER_SILENCE_S)
                    self._drop_connection(selector)
        finally:
            self._drop_connection(selector)
            for caller in self._callers.values():
                caller.connection.close()
            selector.close()

    def _announce(self) -> None:
        assert self._announcer is not None and self.announce_to is not None  # _run announces only with both
        try:
            self._announcer.sendto(pc_address_announcement(self.announced_address), self.announce_to)
        except OSError as error:
            logger.warning("Could not announce our address to %s:%d: %s", *self.announce_to, error)

    def _accept(self, selector: selectors.BaseSelector) -> None:
        try:
            connection, (host, port, *_) = self.server.accept()
        except BlockingIOError:
            return
        if not self.senders.allows(host):
            connection.close()
            return
        if len(self._callers) >= MAX_CALLERS:
            self._refuse(next(iter(self._callers.values())), "", "too many connections waiting to identify",
                         selector)
        connection.setblocking(False)
        caller = self._callers[connection] = _Caller(connection, host, port, self.clock())
        selector.register(connection, selectors.EVENT_READ, caller)

    def _identify(self, caller: _Caller, selector: selectors.BaseSelector, receiver: InputReceiver) -> None:
        """The caller's first frame decides: the connect frame of the app the link is free or reserved for takes
        it; anything else is refused."""
        try:
            data = caller.connection.recv(1 << 16)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:  # gone before it said who it is: it took nothing
            self._hang_up(caller, selector)
            return
        frames = caller.reader.feed(data)
        if not frames:
            return
        serial = app_fields(frames[0].body)[0] if frames[0].command == CMD_CONNECT else ""
        if not serial:
            self._refuse(caller, "", f"it did not identify first (its first frame: 0x{frames[0].command:02X}; the "
                         "app's is 0x19 \"<SN>|-1\")", selector)
        elif self._reserved not in (None, (serial, caller.host)):
            self._refuse(caller, serial, "", selector)
        else:
            self._take(caller, serial, selector, receiver)
            received_ns = self._heard_ns
            for frame in frames[1:]:
                self._handle(frame, receiver, received_ns)

    def _refuse(self, caller: _Caller, serial: str, why: str, selector: selectors.BaseSelector) -> None:
        """Close the caller; an attempt on an operator's link is counted and kept for the operator to see (before
        the close, so whoever sees the close sees it counted)."""
        self._refused_count += 1  # `refused`: connections unidentified, or another app's while the link is reserved
        owner = self._reserved
        if owner is not None:
            self.takeover_attempts += 1
            self.last_takeover_attempt = TakeoverAttempt(f"{caller.host}:{caller.port}", serial, self.clock())
        self._hang_up(caller, selector)
        if caller.host in self._refused_hosts:  # an app retries every 2 s (a script faster): say it once per address
            return
        self._refused_hosts.add(caller.host)
        reason = f": {why}" if why else ""
        if owner is None:
            logger.warning("XRoboToolkit: refused a connection from %s:%d%s", caller.host, caller.port, reason)
        else:
            logger.warning("XRoboToolkit: refused a connection from %s:%d (serial %s)%s; the link is kept for headset "
                           "%s at %s (press h at the console to hand it over)", caller.host, caller.port,
                           serial or "none", reason, *owner)

    def _hang_up(self, caller: _Caller, selector: selectors.BaseSelector) -> None:
        selector.unregister(caller.connection)
        del self._callers[caller.connection]  # before the close: whoever sees the close sees it gone
        caller.connection.close()

    def _take(self, caller: _Caller, serial: str, selector: selectors.BaseSelector, receiver: InputReceiver) -> None:
        """The caller takes the link: the reserved app resumes (replacing its old connection, which may not know
        yet that it is dead), or the first app since the start or a hand-over becomes the operator."""
        resumed = self._reserved is not None
        self._drop_connection(selector)
        connection = caller.connection
        del self._callers[connection]
        connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        connection.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        for option, value in KEEPALIVE.items():
            if hasattr(socket, option):  # Linux names; other systems keep their defaults
                connection.setsockopt(socket.IPPROTO_TCP, getattr(socket, option), value)
        self._connection, self._reader, self._peer = connection, caller.reader, f"{caller.host}:{caller.port}"
        self._reserved = (serial, caller.host)
        self.device_serial = serial
        self._heard_ns = self.clock()
        self.connections += 1
        if resumed:  # the same headset: the same clock, and it may deliver what it queued during the drop
            receiver.sender_resumed(caller.since_ns)
        else:
            receiver.new_sender(caller.since_ns)
        logger.info("XRoboToolkit headset %s %s from %s", serial, "reconnected" if resumed else "connected",
                    self._peer)

    def hand_over(self) -> list[str]:
        """Let the app that holds the link, or has it reserved, go (from the console): the next app to connect and
        identify takes it."""
        self._handing_over.set()
        return []

    def _drop_connection(self, selector: selectors.BaseSelector) -> None:
        if self._connection is None:
            return
        assert self._reader is not None  # taken with the connection
        selector.unregister(self._connection)
        self._connection.close()
        self._skipped_before += self._reader.skipped_bytes
        self._connection = self._reader = None

    def _read(self, selector: selectors.BaseSelector, receiver: InputReceiver) -> None:
        connection, reader = self._connection, self._reader
        assert connection is not None and reader is not None  # _run reads only the connection that holds the link
        try:
            data = connection.recv(1 << 16)
        except BlockingIOError:
            return
        except OSError as error:
            data = b""
            logger.info("XRoboToolkit connection error: %s", error)
        if not data:
            logger.info("XRoboToolkit headset %s disconnected (the app reconnects by itself; the link is kept for it)",
                        self.device_serial)
            self._drop_connection(selector)
            return
        received_ns = self._heard_ns = self.clock()
        for frame in reader.feed(data):
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
        elif frame.command == CMD_VERSION:
            fields = app_fields(frame.body)
            if len(fields) > 2:
                self.app_version = fields[2]
                logger.info("XRoboToolkit headset %s, app version %s", self.device_serial, self.app_version)
            return
        elif frame.command in (CMD_CONNECT, CMD_HEARTBEAT):  # the identity was settled by the first frame
            return
        self.other_frames += 1

    def _close(self) -> None:
        self.server.close()
        if self._announcer is not None:
            self._announcer.close()
