"""Packet sources: each runs one background thread that hands every packet to an InputReceiver as it arrives.

Every source is an InputSource: built from the teleoperator's config, it describes itself (what to print when it
starts, its part of the diagnostics line), so the teleoperator names none of them; source_kinds registers each under
its --teleop.source name.

- UdpSource: UDP datagrams on bind:port (gloves, keypoint streams, XR state from another machine or process).
- UnixDatagramSource: datagrams on a local (AF_UNIX) socket path, for a bridge process on the same machine.
- FileReplaySource: a recorded datagram file played at its recorded timing, through the same parse path.
- The headset sources: xrobotoolkit.XRoboToolkitSource (the Pico app's TCP stream) and webxr.WebXRSource (our page
  over HTTPS + WSS).

Network sources listen on 127.0.0.1 unless given another address, and drop senders outside their allow-list
(senders.SenderFilter). Each belongs to one sender at a time (the first; `refused` counts the others' input), and
`hand_over()` lets the current one go from the console.
"""

import logging
import os
import socket
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, ClassVar, Protocol, Self, runtime_checkable

from ..clock import now_ns
from .datagram_file import datagram_file_path, read_datagrams
from .receiver import InputReceiver
from .senders import LOCAL_BIND, SenderFilter, SenderLock, cannot_listen, describe_listener

logger = logging.getLogger(__name__)
POLL_S = 0.05  # how often a blocked thread checks for stop()
MAX_DATAGRAM_BYTES = 65536


class InputSource(ABC):
    """What a teleoperator knows of its input: a kind registered under its --teleop.source name (source_kinds).
    ThreadedSource below gives a kind its thread, stop() and the sender counts."""

    # The port it listens on unless --teleop.port says; 0 = none of its own (UDP: the port of the device it carries).
    default_port: ClassVar[int] = 0
    # It carries any device's datagrams (a socket, a recorded file); False: one device's own link (the headset app,
    # the WebXR page, a leader arm read here), offered only by the configs that name it in `own_sources`.
    any_device: ClassVar[bool] = True

    @classmethod
    @abstractmethod
    def from_config(cls, config: Any, port: int) -> Self:
        """Built from the teleoperator's config (each kind reads the fields it needs), listening on `port`."""

    @abstractmethod
    def start(self, receiver: InputReceiver) -> None:
        """Hand every packet to `receiver` from now on, from the source's own thread."""

    @abstractmethod
    def stop(self) -> None: ...

    @abstractmethod
    def describe(self, name: str) -> list[str]:
        """The lines printed once it has started, headed by `name`: where it listens and who can reach it (a
        network listener is never a silent default), and what an operator needs to connect."""

    @abstractmethod
    def diagnostics(self) -> list[str]:
        """Its "key=value" fields of the teleop's input diagnostics line (what it dropped or refused)."""

    @property
    def display(self) -> "OperatorDisplay | None":
        """Where the operator sees what happens (the teleop's status, the robot's cameras and drawing): the WebXR
        page, or the view page served beside the XRoboToolkit link; None for inputs that show nothing."""
        return None


@runtime_checkable
class OperatedSource(Protocol):
    """A source that belongs to one sender (operator) at a time."""

    def hand_over(self) -> list[str]:
        """Let the current sender go (from the console): the next one to send takes the input. Returns the lines
        that tell the next operator how (the WebXR page's new pairing URL; most sources need none)."""


@runtime_checkable
class OperatorDisplay(Protocol):
    """A source whose sender shows the operator what happens (the WebXR page): the teleop's status, and the robot's
    drawing (a function that makes its scene message, called where the view is sent) and camera frames (name ->
    (RGB image, its header: the camera's calibration, viewer/headset.camera_header)), with the robot's body (a
    function that makes the message each page gets once, before its first scene: the meshes the scenes place). Both
    calls are thread-safe and never wait for a slow link (the newest replaces what was not yet sent)."""

    def publish_status(self, status: dict) -> None: ...

    def publish_view(self, scene: Callable[[], dict], frames: dict, published_ns: int,
                     body: Callable[[], dict] | None = None) -> None: ...


class ThreadedSource(InputSource):
    def __init__(self):
        self._refused_count = 0  # what `refused` reports, counted by the sources that belong to one sender
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.senders = SenderFilter()
        self.clock = now_ns  # arrival times; tests inject their own

    @property
    def refused(self) -> int:
        """Input refused because another sender holds it (each source says what it counts)."""
        return self._refused_count

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

    def describe(self, name: str) -> list[str]:
        return []  # nobody connects to it: nothing to say

    def diagnostics(self) -> list[str]:
        return [f"dropped_senders={self.senders.dropped}", f"refused={self.refused}"]


class _DatagramSocketSource(ThreadedSource):
    def __init__(self, sock: socket.socket):
        super().__init__()
        self.socket = sock
        self.socket.settimeout(POLL_S)
        self.lock = SenderLock()

    @property
    def refused(self) -> int:
        """Packets dropped because another sender owns the input."""
        return self.lock.refused

    def hand_over(self) -> list[str]:
        self.lock.release()
        return []

    def _run(self, receiver: InputReceiver) -> None:
        while not self._stop.is_set():
            try:
                data, sender = self.socket.recvfrom(MAX_DATAGRAM_BYTES)
            except TimeoutError:
                continue
            except OSError:
                if not self._stop.is_set():
                    logger.exception("%s: socket error; input stopped", type(self).__name__)
                return
            received_ns = self.clock()
            if isinstance(sender, tuple):  # a network sender (a local socket's peers are this machine's programs)
                if not self.senders.allows(sender[0]):
                    continue
                owners = self.lock.owners
                if not self.lock.admit(sender, received_ns):
                    continue
                if self.lock.owners != owners:  # another device: another clock
                    receiver.new_sender(received_ns)
            receiver.handle(data, received_ns)

    def _close(self) -> None:
        self.socket.close()


class UdpSource(_DatagramSocketSource):
    def __init__(self, bind: str = LOCAL_BIND, port: int = 5555, allow: list[str] | tuple[str, ...] = ()):
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            sock.bind((bind, port))
        except OSError as error:
            sock.close()
            raise cannot_listen(bind, port, error) from error
        self.bind, self.address = bind, sock.getsockname()  # port 0 binds a free port
        super().__init__(sock)
        self.senders = SenderFilter(allow)

    @classmethod
    def from_config(cls, config, port: int) -> Self:
        return cls(config.bind, port, config.allow)

    def describe(self, name: str) -> list[str]:
        return [describe_listener(name, self.bind, self.address[1], self.senders)]


class UnixDatagramSource(_DatagramSocketSource):
    def __init__(self, path: str):
        if os.path.exists(path):
            os.unlink(path)  # a stale socket file from a previous run
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        sock.bind(path)
        self.path = path
        super().__init__(sock)

    @classmethod
    def from_config(cls, config, port: int) -> Self:
        return cls(config.socket_path)

    def _close(self) -> None:
        super()._close()
        if os.path.exists(self.path):
            os.unlink(self.path)


class FileReplaySource(ThreadedSource):
    """Plays a recorded datagram file in real time (x speed), optionally looping. Packets count as captured when
    played: the recorded sender timestamps belong to the original session, not to a live clock."""

    def __init__(self, path, speed: float = 1.0, loop: bool = True):
        super().__init__()
        self.header, self.datagrams = read_datagrams(path)
        self.speed = speed
        self.loop = loop

    @classmethod
    def from_config(cls, config, port: int) -> Self:
        return cls(datagram_file_path(config.replay_file), config.replay_speed, config.replay_loop)

    def _run(self, receiver: InputReceiver) -> None:
        while not self._stop.is_set():
            started = time.monotonic()
            for t_ns, data in self.datagrams:
                delay = started + t_ns / 1e9 / self.speed - time.monotonic()
                if delay > 0 and self._stop.wait(delay):
                    return
                receiver.handle(data, now_ns(), live_stamps=False)
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
