"""The teledex loopback CAN bus as a python-can interface: `can.Bus(interface="teledex", channel="can0")`.

Registered through python-can's `can.interface` entry point, so unmodified programs select it by name
(`piper.CreateCanBus("can0", bustype="teledex")`, linkerbot's `O6("right", "can1", interface_type="teledex")`).
Each bus is one node on a channel of the broker that `teledex-sim` runs (broker.py says how frames travel); its frames
never leave this machine.

Opening a channel nobody serves fails like a missing can0, naming teledex-sim. When the broker goes away (teledex-sim
stopped or killed) the bus behaves like a pulled cable: recv() hears nothing and what send() puts on the wire reaches
nobody (counted in frames_lost), and the node rejoins by itself once a broker serves its channel again. Neither call
raises then: the vendor SDKs treat send errors as fatal (linkerbot stops its dispatcher for good and its poll threads
fail at their polling rate), and a driver sees the silence through its feedback watchdog anyway. The broker's
heartbeats (every 10 ms, consumed by recv(), never returned) tell the bus whether the wire itself is late
(frames_pending(), which can.liveness asks); they also make fileno() readable. `state` stays
ACTIVE, as python-can's socketcan reports it: piper_sdk skips recv() while a bus is not ACTIVE, and would spin.
"""

import os
import select
import socket
import threading
import time

import can
from can import BusABC, CanInitializationError, CanOperationError
from can.typechecking import AutoDetectedConfig

from . import wire

HELLO_TIMEOUT_S = 2.0
REJOIN_INTERVAL_S = 0.1  # how often a node whose broker went away tries to rejoin
WIRE_LATE_S = 0.03  # three broker heartbeats missed: frames may be on their way


class TeledexBus(BusABC):
    def __init__(self, channel: str = "can0", can_filters=None, receive_own_messages: bool = False,
                 local_loopback: bool = True, broker: str | None = None, serve: bool = False,
                 answers: str | None = None, **kwargs):
        """channel: any name teledex-sim serves. local_loopback=False keeps this node's frames from the other
        buses of this process (one process = one CAN adapter). broker: the broker's socket path (default
        $TELEDEX_CAN_BROKER, else a per-user socket). serve=True declares the channel (device simulators do), `answers`
        the CAN IDs its device answers on (one node per value and channel).
        Other keyword arguments (bitrate...) are accepted and ignored: the loopback bus has no bit timing."""
        self.channel = str(channel)
        self.channel_info = f"teledex loopback CAN channel {self.channel!r}"
        self._broker_path = broker or wire.broker_path()
        self._hello = {"version": wire.PROTOCOL_VERSION, "channel": self.channel, "pid": os.getpid(),
                       "local_loopback": bool(local_loopback), "receive_own_messages": bool(receive_own_messages),
                       "serve": bool(serve), "answers": answers}
        self._lock = threading.Lock()  # connection state: recv and send run on different threads
        self._joined = False
        self._next_rejoin_s = 0.0
        self._frame_in_hand = False  # a frame left the socket and its reader has not asked for the next yet
        self._wire_heard_s = 0.0  # the broker's last heartbeat (joining counts as one)
        self.frames_lost = 0  # sent while no broker was there to carry them
        self._sock = self._join()
        self._poll = select.poll()
        self._poll.register(self._sock, select.POLLIN)
        super().__init__(channel=self.channel, can_filters=can_filters, **kwargs)

    # --- joining the broker ---
    def _join(self) -> socket.socket:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            sock.settimeout(HELLO_TIMEOUT_S)
            try:
                sock.connect(self._broker_path)
            except OSError as error:
                raise CanInitializationError(
                    f"teledex CAN channel {self.channel!r}: no broker at {self._broker_path} ({error.strerror}). "
                    f"Start `teledex-sim` with a device on {self.channel!r} (or set {wire.BROKER_ENV} to its "
                    "socket); the loopback bus exists only while teledex-sim runs.") from None
            sock.send(wire.encode_control(self._hello))
            answer = wire.decode_control(sock.recv(wire.MAX_PACKET))
            if "error" in answer:
                raise CanInitializationError(f"teledex CAN channel {self.channel!r}: {answer['error']}")
            sock.settimeout(None)
        except BaseException:
            sock.close()
            raise
        self._joined = True
        self._wire_heard_s = time.time()
        return sock

    def _lost(self) -> None:
        self._joined = False
        self._next_rejoin_s = 0.0

    def _ensure_joined(self) -> bool:
        """Rejoin after the broker went away, at most every REJOIN_INTERVAL_S. The new connection takes over the
        old descriptor's number, so fileno() stays valid."""
        if self._joined:
            return True
        with self._lock:
            if self._joined or self._is_shutdown or time.monotonic() < self._next_rejoin_s:
                return self._joined
            self._next_rejoin_s = time.monotonic() + REJOIN_INTERVAL_S
            try:
                fresh = self._join()
            except (CanInitializationError, OSError, ValueError):
                self._joined = False
                return False
            os.dup2(fresh.fileno(), self._sock.fileno())
            fresh.close()
            return True

    # --- python-can's bus contract ---
    def _recv_internal(self, timeout: float | None) -> tuple[can.Message | None, bool]:
        self._frame_in_hand = False  # the reader is back for the next one: done with the last
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            remaining_s = None if deadline is None else max(0.0, deadline - time.monotonic())
            if self._is_shutdown:
                raise CanOperationError(f"{self.channel_info}: the bus is shut down")
            if not self._ensure_joined():  # a pulled cable: silence until the broker is back
                if remaining_s == 0.0:
                    return None, False
                time.sleep(REJOIN_INTERVAL_S if remaining_s is None else min(remaining_s, REJOIN_INTERVAL_S))
                continue
            wait_ms = -1 if remaining_s is None else int(remaining_s * 1000 + 0.999)
            if not self._poll.poll(wait_ms):
                return None, False
            self._frame_in_hand = True  # before the frame leaves the socket, until the reader asks for the next
            try:
                packet = self._sock.recv(wire.MAX_PACKET)
            except BlockingIOError:
                self._frame_in_hand = False
                continue
            except OSError:
                packet = b""
            if not packet:  # the broker closed the connection
                self._frame_in_hand = False
                self._lost()
                continue
            heard_s = wire.heartbeat_time(packet)
            if heard_s is not None:
                self._wire_heard_s = heard_s
                self._frame_in_hand = False
                continue
            return wire.unpack_frame(packet, self.channel), False

    def send(self, msg: can.Message, timeout: float | None = None) -> None:
        if self._is_shutdown:
            raise CanOperationError(f"{self.channel_info}: the bus is shut down")
        packet = wire.pack_frame(msg, time.time())
        if not self._ensure_joined():
            self.frames_lost += 1
            return
        if timeout is not None:
            writable = select.poll()
            writable.register(self._sock, select.POLLOUT)
            if not writable.poll(int(timeout * 1000 + 0.999)):
                raise CanOperationError(f"{self.channel_info}: transmit buffer full for {timeout} s")
        try:
            self._sock.send(packet)
        except OSError:  # the broker went away: the frame reaches nobody
            self._lost()
            self.frames_lost += 1

    @staticmethod
    def _detect_available_configs() -> list[AutoDetectedConfig]:
        """The channels the running broker serves (can.detect_available_configs("teledex"))."""
        from .broker import query_stats  # the broker module is only needed here

        try:
            served = query_stats()["served"]
        except (OSError, ValueError):
            return []
        return [{"interface": "teledex", "channel": channel} for channel in served]

    def fileno(self) -> int:
        return self._sock.fileno()

    def frames_pending(self) -> bool:
        """Frames wait unread, the reader holds one it has not finished with (a frame taken from the socket by a
        thread still waiting for the interpreter is in neither place its reader can see), or the broker is late
        (its heartbeats stopped: frames may be on their way). can.liveness asks. Never while the broker is away,
        whose closed connection would otherwise poll as readable."""
        if self._frame_in_hand:
            return True
        if not self._joined or self._is_shutdown:
            return False
        if time.time() - self._wire_heard_s > WIRE_LATE_S:
            return True  # the broker is late: frames may be on their way
        return bool(select.select([self._sock], [], [], 0)[0])  # not self._poll: recv() may be polling it

    def shutdown(self) -> None:
        if self._is_shutdown:
            return
        super().shutdown()
        with self._lock:
            self._joined = False
            self._sock.close()
