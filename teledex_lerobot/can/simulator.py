"""The simulated device's end of a python-can bus (receive thread, send helper) and the lifecycle every device
simulator shares.

The bus must not hand a node its own frames back (virtual, the teledex loopback bus and socketcan do not): a
simulator whose replies share the request's ID (LinkerHand, the Piper firmware query) would answer itself forever.
On the teledex bus the simulator serves its channel, so programs can open it, and says which CAN IDs it answers on:
a second simulator answering on the same IDs of that channel is refused (on a real bus two such devices would
answer every request twice).
"""

import logging
import threading
from collections.abc import Callable
from typing import Any, Protocol

import can
import numpy as np

logger = logging.getLogger(__name__)


class SimBus:
    def __init__(self, interface: str, channel: str, on_frame: Callable[[can.Message], None], name: str,
                 answers: str):
        """answers: the CAN IDs the device answers on, for people ("CAN ID 0x27"); one simulator per value and
        channel."""
        self.interface = interface
        self.answers = answers
        self.channel = channel
        self._on_frame = on_frame
        self._name = name
        self._bus: can.BusABC | None = None
        self._send_lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.frames_sent = 0

    def open(self) -> None:
        serve: dict[str, Any] = {"serve": True, "answers": self.answers} if self.interface == "teledex" else {}
        self._bus = can.Bus(channel=self.channel, interface=self.interface, receive_own_messages=False, **serve)
        self._stop.clear()
        self._thread = threading.Thread(target=self._receive, name=f"{self._name}-rx", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1.0)
            self._thread = None
        if self._bus is not None:
            self._bus.shutdown()
            self._bus = None

    @property
    def is_open(self) -> bool:
        return self._bus is not None

    def send(self, arbitration_id: int, data: bytes) -> None:
        bus = self._bus
        if bus is None:
            return
        message = can.Message(arbitration_id=arbitration_id, data=data, is_extended_id=False)
        with self._send_lock:
            try:
                bus.send(message)
            except can.CanError as error:
                logger.warning("%s: send failed: %s", self._name, error)
                return
            self.frames_sent += 1

    def _receive(self) -> None:
        while not self._stop.is_set():
            bus = self._bus
            if bus is None:
                return
            try:
                message = bus.recv(timeout=0.01)
            except can.CanError:
                return
            if message is None or message.is_error_frame:
                continue
            try:
                self._on_frame(message)
            except Exception:  # a malformed frame must not kill the simulated device
                logger.exception("%s: error handling frame %s", self._name, message)


class Measurement(Protocol):
    """What SimulatedJoints.read() returns (a devices.joint_device.JointState)."""

    @property
    def positions(self) -> np.ndarray: ...


class SimulatedJoints(Protocol):
    """The joint dynamics a simulator moves (a devices.simulated.FirstOrderJointDevice: the CAN layer does not import
    the devices)."""

    def connect_embedded(self) -> None: ...

    def disconnect(self) -> None: ...

    def read(self) -> Measurement: ...


class BusSimulator[Dynamics: SimulatedJoints]:
    """The lifecycle every device simulator shares: its joint dynamics, its end of the bus and, for simulators that
    send on their own (feedback streams, motion profiles), a background loop `_run` that ends when `_stop` is set.
    Subclasses set `_dynamics` and `_bus` in __init__ and call super().__init__() first."""

    loop_name: str | None = None  # the background thread's name; None = the simulator only answers frames
    _dynamics: Dynamics
    _bus: SimBus

    def __init__(self):
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _run(self) -> None:
        raise NotImplementedError

    def start(self):
        self._dynamics.connect_embedded()  # advanced whenever the simulator reads it
        self._bus.open()
        if self.loop_name is not None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._run, name=self.loop_name, daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1.0)
            self._thread = None
        self._bus.close()
        self._dynamics.disconnect()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def unplug(self) -> None:
        """The CAN cable comes out: the simulator leaves the bus."""
        self.stop()

    # --- what a test can observe directly ---
    def true_positions(self):
        """Where the simulated joints really are (no noise, no delay)."""
        return self._dynamics.read().positions.copy()

    @property
    def frames_sent(self) -> int:
        return self._bus.frames_sent
