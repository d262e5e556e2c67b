"""The Acme gripper's driver: our own CAN driver on python-can, supervised like every real device."""

import threading

import can
import numpy as np

from teledex_lerobot.can.liveness import WallToMonotonic
from teledex_lerobot.devices.joint_device import JointState
from teledex_lerobot.devices.real_device import RealJointDevice

from . import protocol

PADS = ("left_pad", "right_pad")


class AcmeGripperDevice(RealJointDevice):
    bus_kind = protocol.BUS_SIGNATURE.kind

    def __init__(self, part, port, config, settings, signatures=()):
        super().__init__(f"acme-{part.spec.side}", part, port, config, signatures)
        self.settings = settings
        self._bus: can.BusABC | None = None
        self._positions = np.full(len(self.device_target), np.nan)
        self._stamp_ns = 0
        self._lock = threading.Lock()
        self._stop_rx = threading.Event()
        self._thread: threading.Thread | None = None

    def tactile(self) -> dict[str, np.ndarray]:
        """Each pad presses harder as its finger closes (0-255)."""
        with self._lock:
            closure = np.nan_to_num(self._positions / self.device_upper)
        return {pad: np.full((2, 2), round(255 * float(c))) for pad, c in zip(PADS, closure, strict=True)}

    def _open(self) -> None:
        self._clock = WallToMonotonic()
        self._bus = can.Bus(channel=self.port.channel, interface=self.port.interface)
        self._stop_rx.clear()
        self._thread = threading.Thread(target=self._receive, name=f"{self.name}-rx", daemon=True)
        self._thread.start()

    def _close(self) -> None:
        self._stop_rx.set()
        if self._thread is not None:
            self._thread.join(timeout=1.0)
        if self._bus is not None:
            self._bus.shutdown()
            self._bus = None

    def _send(self, device_target: np.ndarray) -> None:
        for joint, value in enumerate(device_target):
            self._bus.send(can.Message(arbitration_id=protocol.TARGET_ID, data=protocol.pack(joint, value),
                                       is_extended_id=False))

    def _latest_state(self) -> JointState | None:
        with self._lock:
            if np.isnan(self._positions).any():
                return None
            return JointState(self._positions.copy(), np.zeros_like(self._positions), self._stamp_ns)

    def _receive(self) -> None:
        while not self._stop_rx.is_set():
            message = self._bus.recv(timeout=0.01)
            if message is None or message.arbitration_id != protocol.POSITION_ID:
                continue
            joint, value = protocol.unpack(message.data)
            with self._lock:
                self._positions[joint] = value
                self._stamp_ns = self._clock.to_monotonic_ns(message.timestamp)
