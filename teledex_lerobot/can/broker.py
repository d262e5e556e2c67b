"""The broker of the teledex loopback CAN bus: the wires between the nodes of each channel.

Like a CAN bus, every frame a node sends reaches every OTHER node on its channel and never comes back to the sender
(unless it opened its bus with receive_own_messages=True); channels are isolated from each other; each frame keeps
the time its sender put it on the wire (the wall clock, as python-can stamps received frames), so a broker the host
runs late delays frames without making their device look silent, as a CAN controller's receive stamp would.
local_loopback=False (what piper_sdk asks for, as on socketcan) keeps a node's frames from the other nodes of the
same process: one process is one host with one CAN adapter.

A node only joins a channel somebody serves: teledex-sim serves the channels of its simulated devices (and any it is
told to), so a mistyped or swapped channel fails at open, as a missing can0 would.

Every HEARTBEAT_S the broker sends each node a heartbeat (not a frame; the node's bus consumes it): a node that has
not heard one lately knows the wire itself is late (this broker not scheduled on a busy host), so silence from a
device cannot be judged meanwhile (can.liveness asks the bus).

A reader that stops reading must not stall the bus: each node's receive queue is bounded (its socket buffer, about
RECEIVE_QUEUE_FRAMES frames, the way a CAN controller's receive FIFO is), the broker never blocks on it, and frames
that do not fit are dropped and counted for that node. A node whose process dies is dropped from its channel.

teledex-sim runs the broker in a process of its own (`python -m teledex_lerobot.can.broker`), so relaying
never waits for the simulators' threads (one interpreter lock); the broker stops when its parent closes its stdin,
which the system does when the parent dies however it dies.
"""

import argparse
import json
import logging
import os
import selectors
import signal
import socket
import sys
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass

from ..errors import DeviceError
from . import wire

logger = logging.getLogger(__name__)

RECEIVE_QUEUE_FRAMES = 1000  # a little over 0.3 s of a Piper's 3040 frames/s
_SOCKET_BUFFER_BYTES_PER_FRAME = 384  # measured: Linux charges ~770 bytes per queued packet and doubles SO_SNDBUF
READ_BURST = 64  # frames taken from one node before serving the others
HEARTBEAT_S = 0.01


class BrokerAlreadyRunning(DeviceError, RuntimeError):
    """A live broker already listens at this path: join it instead (a DeviceError: the bus is taken; still the
    RuntimeError it was)."""


@dataclass(eq=False)
class _Node:
    sock: socket.socket
    channel: str | None = None  # None until its hello has arrived
    pid: int = 0
    local_loopback: bool = True
    receive_own_messages: bool = False
    answers: str | None = None  # a simulated device's CAN IDs (one node per value and channel)
    frames_sent: int = 0  # by this node
    frames_delivered: int = 0  # to this node
    frames_dropped: int = 0  # meant for this node, but its queue was full

    def describe(self) -> str:
        return f"node of pid {self.pid} on channel {self.channel!r}"


@dataclass(frozen=True)
class _Sockets:
    """What a started broker listens on: its socket and the pair stop() wakes its loop through, watched by one
    selector (with every node's socket)."""

    listener: socket.socket
    selector: selectors.BaseSelector
    wake_read: socket.socket
    wake_write: socket.socket

    def close(self) -> None:
        self.listener.close()
        self.selector.close()
        self.wake_read.close()
        self.wake_write.close()


def broker_alive(path: str) -> bool:
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        probe.connect(path)
        return True
    except OSError:
        return False
    finally:
        probe.close()


class CanBroker:
    def __init__(self, path: str | None = None, channels: Iterable[str] = ()):
        self.path = path or wire.broker_path()
        self._served = set(channels)
        self._channels: dict[str, list[_Node]] = {}
        self._nodes: dict[socket.socket, _Node] = {}
        self._lock = threading.Lock()  # the node tables, read by stats() from other threads
        self._sockets: _Sockets | None = None  # while started
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.frames_relayed = 0
        self.frames_dropped = 0

    # --- lifecycle ---
    def start(self) -> "CanBroker":
        """Listen at self.path. Raises BrokerAlreadyRunning if a live broker answers there; a socket file left by a
        broker that died is replaced."""
        if os.path.exists(self.path):
            if broker_alive(self.path):
                raise BrokerAlreadyRunning(f"a teledex CAN broker already listens at {self.path}")
            os.unlink(self.path)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        listener.bind(self.path)
        listener.listen(64)
        listener.setblocking(False)
        wake_read, wake_write = socket.socketpair()
        selector = selectors.DefaultSelector()
        selector.register(listener, selectors.EVENT_READ)
        selector.register(wake_read, selectors.EVENT_READ)
        self._sockets = sockets = _Sockets(listener, selector, wake_read, wake_write)
        self._stop.clear()
        self._thread = threading.Thread(target=self._serve, args=(sockets,), name="teledex-can-broker", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Every node sees its bus go silent (a pulled cable); the socket file is removed."""
        self._stop.set()
        sockets, thread = self._sockets, self._thread
        if sockets is None or thread is None:
            return  # not started, or stopped already
        sockets.wake_write.send(b"\0")
        thread.join(timeout=2.0)
        self._thread = None
        with self._lock:
            for node in list(self._nodes.values()):
                node.sock.close()
            self._nodes.clear()
            self._channels.clear()
        self._sockets = None
        sockets.close()
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass

    def __enter__(self) -> "CanBroker":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # --- what it serves ---
    def serve(self, channel: str) -> None:
        with self._lock:
            self._served.add(channel)

    @property
    def served_channels(self) -> list[str]:
        with self._lock:
            return sorted(self._served)

    def stats(self) -> dict:
        with self._lock:
            nodes = [{"channel": n.channel, "pid": n.pid, "sent": n.frames_sent, "delivered": n.frames_delivered,
                      "dropped": n.frames_dropped} for n in self._nodes.values() if n.channel is not None]
            return {"served": sorted(self._served), "frames_relayed": self.frames_relayed,
                    "frames_dropped": self.frames_dropped, "nodes": nodes}

    # --- the loop ---
    def _serve(self, sockets: _Sockets) -> None:
        next_heartbeat_s = time.monotonic()
        while not self._stop.is_set():
            if time.monotonic() >= next_heartbeat_s:
                self._heartbeat()
                next_heartbeat_s = time.monotonic() + HEARTBEAT_S
            for key, _ in sockets.selector.select(max(0.0, next_heartbeat_s - time.monotonic())):
                if key.fileobj is sockets.listener:
                    self._accept(sockets)
                elif key.fileobj is sockets.wake_read:
                    sockets.wake_read.recv(64)
                elif isinstance(key.fileobj, socket.socket):  # a node's (None once dropped)
                    self._read(self._nodes.get(key.fileobj))

    def _accept(self, sockets: _Sockets) -> None:
        try:
            sock, _ = sockets.listener.accept()
        except BlockingIOError:
            return
        sock.setblocking(False)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, RECEIVE_QUEUE_FRAMES * _SOCKET_BUFFER_BYTES_PER_FRAME)
        node = _Node(sock)
        with self._lock:
            self._nodes[sock] = node
        sockets.selector.register(sock, selectors.EVENT_READ)

    def _read(self, node: _Node | None) -> None:
        if node is None:
            return
        for _ in range(READ_BURST):
            try:
                packet = node.sock.recv(wire.MAX_PACKET)
            except BlockingIOError:
                return
            except ConnectionResetError:
                # The node closed with packets of ours unread (heartbeats, on a bus it only sends on): Linux reports
                # that once, before the frames the node sent last. Those were on the wire: relay them, then EOF.
                continue
            except OSError:
                packet = b""
            if not packet:
                self._drop_node(node)
                return
            if node.channel is None:
                self._hello(node, packet)
            else:
                self._relay(node, node.channel, packet)

    def _hello(self, node: _Node, packet: bytes) -> None:
        try:
            hello = wire.decode_control(packet)
        except ValueError:
            self._refuse(node, "the first packet must be a hello")
            return
        if hello.get("stats"):
            self._answer(node, self.stats())
            self._drop_node(node)
            return
        if "serve_channels" in hello:
            for channel in hello["serve_channels"]:
                self.serve(str(channel))
            self._answer(node, {"ok": True})
            self._drop_node(node)
            return
        if hello.get("version") != wire.PROTOCOL_VERSION:
            self._refuse(node, f"protocol version {hello.get('version')} (this broker speaks "
                               f"{wire.PROTOCOL_VERSION}): use one teledex-lerobot installation for both sides")
            return
        channel = str(hello.get("channel", ""))
        answers = hello.get("answers")
        with self._lock:
            twin = next((other for other in self._channels.get(channel, []) if answers and other.answers == answers),
                        None)
            if twin is None and hello.get("serve"):
                self._served.add(channel)
            served = sorted(self._served)
            if twin is None and channel in self._served:
                node.channel, node.pid = channel, int(hello.get("pid", 0))
                node.local_loopback = bool(hello.get("local_loopback", True))
                node.receive_own_messages = bool(hello.get("receive_own_messages", False))
                node.answers = answers
                self._channels.setdefault(channel, []).append(node)
        if twin is not None:
            self._refuse(node, f"a simulated device already answers on {answers} of channel {channel!r} (pid "
                               f"{twin.pid}): a second one would answer every request twice. Stop the other "
                               "teledex-sim, or put this device on another channel")
            return
        if node.channel is None:
            self._refuse(node, f"no teledex CAN channel {channel!r} (teledex-sim serves "
                               f"{', '.join(served) if served else 'none'}): start `teledex-sim` with a device on "
                               f"{channel!r}, or correct the channel")
            return
        self._answer(node, {"ok": True})

    def _answer(self, node: _Node, message: dict) -> None:
        try:
            node.sock.send(wire.encode_control(message))
        except OSError:
            self._drop_node(node)

    def _refuse(self, node: _Node, reason: str) -> None:
        self._answer(node, {"error": reason})
        self._drop_node(node)

    def _relay(self, sender: _Node, channel: str, packet: bytes) -> None:
        if len(packet) < wire.HEADER.size:
            return
        sender.frames_sent += 1
        frame = packet
        dead = []
        for node in self._channels.get(channel, ()):
            if node is sender:
                if not sender.receive_own_messages:
                    continue
                outgoing = wire.mark_own(packet)
            elif node.pid == sender.pid and not sender.local_loopback:
                continue
            else:
                outgoing = frame
            try:
                node.sock.send(outgoing)
                node.frames_delivered += 1
                self.frames_relayed += 1
            except BlockingIOError:
                if node.frames_dropped == 0:
                    logger.info("teledex CAN broker: the %s does not keep up; dropping frames meant for it",
                                node.describe())
                node.frames_dropped += 1
                self.frames_dropped += 1
            except OSError:
                dead.append(node)
        for node in dead:
            self._drop_node(node)

    def _heartbeat(self) -> None:
        packet = wire.heartbeat(time.time())
        for nodes in list(self._channels.values()):
            for node in nodes:
                try:
                    node.sock.send(packet)
                except OSError:  # full (the node is not reading: it will not miss a tick) or gone (dropped on read)
                    pass

    def _drop_node(self, node: _Node) -> None:
        with self._lock:
            if self._nodes.pop(node.sock, None) is None:
                return
            if node.channel is not None:
                self._channels[node.channel].remove(node)
        sockets = self._sockets
        if sockets is not None:
            try:
                sockets.selector.unregister(node.sock)
            except (KeyError, ValueError):
                pass
        node.sock.close()


def _ask(path: str | None, request: dict) -> dict:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        sock.settimeout(2.0)
        sock.connect(path or wire.broker_path())
        sock.send(wire.encode_control(request))
        return wire.decode_control(sock.recv(1 << 20))
    finally:
        sock.close()


def query_stats(path: str | None = None) -> dict:
    """The counters of the broker listening at path (another process's, typically)."""
    return _ask(path, {"stats": True})


def serve_channels(channels: Iterable[str], path: str | None = None) -> None:
    """Have the running broker at path serve these channels too."""
    _ask(path, {"serve_channels": list(channels)})


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="The teledex loopback CAN bus's broker; stops at EOF on stdin.")
    parser.add_argument("--path", default=None, help=f"socket path (default ${wire.BROKER_ENV}, else per user)")
    parser.add_argument("--channel", action="append", default=[], help="serve this channel (repeatable)")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole process group: the parent decides
    try:
        broker = CanBroker(args.path, args.channel).start()
    except BrokerAlreadyRunning as error:
        print(json.dumps({"already_running": str(error)}), flush=True)
        return
    print(json.dumps({"listening": broker.path}), flush=True)
    try:
        sys.stdin.buffer.read()  # until the parent closes it or dies
    finally:
        broker.stop()


if __name__ == "__main__":
    main()
