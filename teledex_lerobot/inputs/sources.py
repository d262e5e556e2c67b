"""Packet sources: each runs one background thread that hands every packet to an InputReceiver as it arrives.

- UdpSource: UDP datagrams on host:port (gloves, keypoint streams, XR state from another machine or process).
- UnixDatagramSource: datagrams on a local (AF_UNIX) socket path, for a bridge process on the same machine (e.g. an
  xrobotoolkit_sdk reader forwarding the Pico state JSON).
- WebSocketSource: text/binary messages from WebSocket clients (WebXR pages in a headset browser).
- FileReplaySource: a recorded datagram file played at its recorded timing, through the same parse path.
"""

import logging
import os
import socket
import threading
import time

from ..clock import now_ns
from .datagram_file import read_datagrams
from .receiver import InputReceiver
from .websocket import serve_websocket_client

logger = logging.getLogger(__name__)
_POLL_S = 0.05  # how often a blocked thread checks for stop()
MAX_DATAGRAM_BYTES = 65536


class _ThreadedSource:
    def __init__(self):
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, receiver: InputReceiver) -> None:
        self._thread = threading.Thread(target=self._run, args=(receiver,), name=type(self).__name__, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2.0)
        self._close()

    def _close(self) -> None:
        pass

    def _run(self, receiver: InputReceiver) -> None:
        raise NotImplementedError


class _DatagramSocketSource(_ThreadedSource):
    def __init__(self, sock: socket.socket):
        super().__init__()
        self.socket = sock
        self.socket.settimeout(_POLL_S)

    def _run(self, receiver: InputReceiver) -> None:
        while not self._stop.is_set():
            try:
                data = self.socket.recv(MAX_DATAGRAM_BYTES)
            except TimeoutError:
                continue
            except OSError:
                if not self._stop.is_set():
                    logger.exception("%s: socket error; input stopped", type(self).__name__)
                return
            receiver.handle(data, now_ns())

    def _close(self) -> None:
        self.socket.close()


class UdpSource(_DatagramSocketSource):
    def __init__(self, host: str = "0.0.0.0", port: int = 5555):
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.bind((host, port))
        self.address = sock.getsockname()  # port 0 binds a free port
        super().__init__(sock)


class UnixDatagramSource(_DatagramSocketSource):
    def __init__(self, path: str):
        if os.path.exists(path):
            os.unlink(path)  # a stale socket file from a previous run
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        sock.bind(path)
        self.path = path
        super().__init__(sock)

    def _close(self) -> None:
        super()._close()
        if os.path.exists(self.path):
            os.unlink(self.path)


class WebSocketSource(_ThreadedSource):
    """Accepts WebSocket clients one after another (one headset at a time)."""

    def __init__(self, host: str = "0.0.0.0", port: int = 8012):
        super().__init__()
        self.server = socket.create_server((host, port))
        self.server.settimeout(_POLL_S)
        self.address = self.server.getsockname()

    def _run(self, receiver: InputReceiver) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self.server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with connection:
                serve_websocket_client(connection, lambda data: receiver.handle(data, now_ns()), self._stop)

    def _close(self) -> None:
        self.server.close()


class FileReplaySource(_ThreadedSource):
    """Plays a recorded datagram file in real time (x speed), optionally looping."""

    def __init__(self, path, speed: float = 1.0, loop: bool = True):
        super().__init__()
        self.header, self.datagrams = read_datagrams(path)
        self.speed = speed
        self.loop = loop

    def _run(self, receiver: InputReceiver) -> None:
        while not self._stop.is_set():
            started = time.monotonic()
            for t_ns, data in self.datagrams:
                delay = started + t_ns / 1e9 / self.speed - time.monotonic()
                if delay > 0 and self._stop.wait(delay):
                    return
                receiver.handle(data, now_ns())
            if not self.loop:
                return


def send_datagrams(datagrams, address, speed: float = 1.0, stop: threading.Event | None = None) -> int:
    """Send recorded (t_ns, bytes) datagrams to a UDP (host, port) or a Unix socket path, at their recorded timing.
    Returns how many were sent."""
    family = socket.AF_UNIX if isinstance(address, str) else socket.AF_INET
    sent = 0
    with socket.socket(family, socket.SOCK_DGRAM) as sock:
        started = time.monotonic()
        for t_ns, data in datagrams:
            delay = started + t_ns / 1e9 / speed - time.monotonic()
            if delay > 0:
                if stop is not None and stop.wait(delay):
                    break
                if stop is None:
                    time.sleep(delay)
            sock.sendto(data, address)
            sent += 1
    return sent
