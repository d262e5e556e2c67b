"""LinkerHand L10 / L20 (and any hand in protocol.LAYOUTS) through our own CAN driver on python-can.

The vendor's L10/L20 code is not usable as a library (hardcoded socketcan, `sudo ip link` and
sys.exit in LinkerHandApi), and linkerbot has no L10/L20, so we speak the protocol directly. Nothing is pushed by
the hand: a poll thread requests positions at hand_poll_hz and temperatures/faults at a few Hz; the receive thread
caches replies. A measurement is published when the last position frame of a poll cycle arrives, stamped with that
frame's receive time (converted to our monotonic clock). At connect the hand's identity replies must not name
another model (identity.py); silence runs from the first read request the hand left unanswered (can.liveness).
"""

import logging
import threading
from collections.abc import Iterable

import can
import numpy as np

from ...can.identify import BusSignature
from ...can.liveness import BusLiveness, WallToMonotonic
from ...can.port import CanPortConfig
from ...errors import ModelError
from ..joint_device import JointState
from ..real_config import SharedRealConfig
from ..real_device import RealJointDevice
from . import protocol as lp
from .byte_map import byte_scale
from .config import LinkerHandConfig
from .identity import HandIdentity, check_hand_model

logger = logging.getLogger(__name__)

STATUS_POLL_HZ = 20.0  # faults must be seen within 100 ms; one 1-byte request per fault frame is cheap
TACTILE_POLL_HZ = 10.0
OVER_TEMPERATURE_C = 70


class LinkerHandCanDevice(RealJointDevice):
    bus_kind = lp.BUS_SIGNATURE.kind

    def __init__(self, part, port: CanPortConfig, config: SharedRealConfig, settings: LinkerHandConfig,
                 signatures: Iterable[BusSignature] = ()):
        model, side = part.spec.model, part.spec.side
        super().__init__(f"{model}-{side}", part, port, config, signatures)
        port.refuse_echoing(f"The {model} driver")  # replies share the ID of our own requests and set commands
        self.settings = settings
        self.layout = lp.layout_for(model)
        if len(self.device_target) != self.layout.dof:
            raise ModelError(f"{self.name}: the {model} model has {len(self.device_target)} joints where the hand has "
                             f"{self.layout.dof}: restore the built-in {model} URDF")
        self.spec_side = side
        self.scale = byte_scale(model, side, self.device_lower, self.device_upper)
        self.hand_id = self.layout.hand_id(side)
        self._blocks = self.layout.blocks_by_cmd()
        self._last_position_cmd = self.layout.position_frames[-1].cmd
        self._bus: can.BusABC | None = None
        self._send_lock = threading.Lock()
        self._state_lock = threading.Lock()
        self._stop_io = threading.Event()
        self._threads: list[threading.Thread] = []
        self._clock = WallToMonotonic()  # measured again at every connect (_open)
        self._raw_vector = np.zeros(self.layout.raw_size, dtype=np.int64)
        self._published: JointState | None = None
        motors = self.layout.motor_count
        self.temperatures_c = np.zeros(motors, dtype=np.int64)
        self.fault_codes = np.zeros(motors, dtype=np.int64)
        self.identity: HandIdentity | None = None  # read at connect; None: the hand did not say
        self._tactile_rows: dict[str, np.ndarray] = {}
        self._tactile: dict[str, np.ndarray] = {}

    # --- public extras ---
    def tactile(self) -> dict[str, np.ndarray]:
        """Latest complete tactile matrix per finger (rows x columns, 0-255); empty unless real.linkerhand.tactile."""
        with self._state_lock:
            return {finger: matrix.copy() for finger, matrix in self._tactile.items()}

    # --- RealJointDevice hooks ---
    def _open(self) -> None:
        self.port.check_opens(self.name)
        self.identity = check_hand_model(self.layout.model, self.spec_side, self.port, self.name)
        self._clock = WallToMonotonic()
        self._published = None
        self._bus = can.Bus(channel=self.port.channel, interface=self.port.interface, bitrate=self.port.bitrate)
        self.liveness = BusLiveness(lambda message: "" if message.arbitration_id == self.hand_id else None,
                                    polled=True, clock=self._clock)
        self.liveness.attach(self._bus)
        self._stop_io.clear()
        self._threads = [threading.Thread(target=loop, name=f"{self.name}-{label}", daemon=True)
                         for loop, label in ((self._receive_loop, "rx"), (self._poll_loop, "poll"))]
        for thread in self._threads:
            thread.start()

    def _startup(self) -> None:
        self._send_frames(lp.value_frames(self.layout.speed_frames, [self.settings.speed_raw]
                                          * self.layout.motor_count))
        self._send_frames(lp.value_frames(self.layout.torque_frames, [self.settings.torque_raw]
                                          * self.layout.motor_count))
        # start from where the hand is: undriven joints hold their measured position, not home
        self.device_target = self._measured().positions.copy()

    def _close(self) -> None:
        self._stop_io.set()
        for thread in self._threads:
            thread.join(timeout=1.0)
        self._threads = []
        if self._bus is not None:
            self._bus.shutdown()
            self._bus = None

    def _send(self, device_target: np.ndarray) -> None:
        self._send_frames(lp.position_frames(self.layout, self.scale.to_bytes(device_target)))

    def _latest_state(self) -> JointState | None:
        with self._state_lock:
            return self._published

    def _needs_reopen(self) -> bool:
        return self._bus is None

    def _device_error(self) -> str | None:
        with self._state_lock:
            faults, temperatures = self.fault_codes.copy(), self.temperatures_c.copy()
        problems = []
        if np.any(faults):
            problems.append(f"motor fault codes {faults.tolist()} (bits: 1 voltage, 2 encoder, 4 over-temperature, "
                            "8 over-current, 32 overload)")
        if np.any(temperatures >= OVER_TEMPERATURE_C):
            problems.append(f"motor temperatures {temperatures.tolist()} C (limit {OVER_TEMPERATURE_C} C)")
        if not problems:
            return None
        return "; ".join(problems) + ". Let the hand cool / free the blocked finger, power-cycle, then re-arm."

    def _no_feedback_hint(self) -> str:
        return (f"The hand (CAN ID {self.hand_id:#x}, {'right' if self.hand_id == lp.RIGHT_HAND_ID else 'left'}) "
                "does not answer: check its power, the side setting, the CAN cable and that the interface is up at "
                "1 Mbit/s. Run teledex-doctor.")

    # --- I/O ---
    def _send_frames(self, frames: list[bytes]) -> None:
        bus = self._bus
        if bus is None:
            raise can.CanOperationError("bus closed")
        with self._send_lock:
            for data in frames:
                bus.send(can.Message(arbitration_id=self.hand_id, data=data, is_extended_id=False))

    def _poll_loop(self) -> None:
        period_s = 1.0 / self.settings.poll_hz
        status_every = max(1, round(self.settings.poll_hz / STATUS_POLL_HZ))
        tactile_every = max(1, round(self.settings.poll_hz / TACTILE_POLL_HZ))
        status_requests = [bytes([b.cmd]) for b in (*self.layout.temperature_frames, *self.layout.fault_frames)]
        position_requests = [bytes([b.cmd]) for b in self.layout.position_frames]
        tick = 0
        while not self._stop_io.is_set():
            requests = list(position_requests)
            if tick % status_every == 0:
                requests += status_requests
            if self.settings.tactile and self.layout.tactile_matrix_code is not None and tick % tactile_every == 0:
                requests += [bytes([cmd, self.layout.tactile_matrix_code]) for cmd in lp.TACTILE_SUMMARY]
            try:
                self._send_frames(requests)
            except can.CanError as error:  # the watchdog reports the silence; keep trying
                logger.debug("%s: poll failed: %s", self.name, error)
            tick += 1
            self._stop_io.wait(period_s)

    def _receive_loop(self) -> None:
        while not self._stop_io.is_set():
            bus = self._bus
            if bus is None:
                return
            try:
                message = bus.recv(timeout=0.01)
            except can.CanError as error:
                logger.debug("%s: receive failed: %s", self.name, error)
                self._stop_io.wait(0.01)
                continue
            if message is None or message.arbitration_id != self.hand_id or len(message.data) < 2:
                continue  # other devices, and other hosts' read requests
            self._on_reply(message)

    def _on_reply(self, message: can.Message) -> None:
        cmd, values = message.data[0], np.frombuffer(bytes(message.data[1:]), dtype=np.uint8).astype(np.int64)
        with self._state_lock:
            if cmd in lp.TACTILE_SUMMARY:
                self._on_tactile_row(cmd, message.data)
                return
            entry = self._blocks.get(cmd)
            if entry is None:
                return
            kind, block = entry
            values = values[:block.count]
            target = {"position": self._raw_vector, "temperature": self.temperatures_c,
                      "fault": self.fault_codes}.get(kind)
            if target is None:
                return  # replies to our speed/torque settings
            target[block.start:block.start + len(values)] = values
            if kind == "position" and cmd == self._last_position_cmd:
                self._publish(self._clock.to_monotonic_ns(message.timestamp))

    def _publish(self, capture_ns: int) -> None:
        raw = self._raw_vector[list(self.layout.joint_to_raw)]
        positions = self.scale.to_radians(raw)
        previous = self._published
        velocities = np.zeros_like(positions)
        if previous is not None and capture_ns > previous.capture_ns:
            velocities = (positions - previous.positions) / ((capture_ns - previous.capture_ns) * 1e-9)
        self._published = JointState(positions, velocities, capture_ns)

    def _on_tactile_row(self, cmd: int, data: bytes) -> None:
        shape = self.layout.tactile_shape
        if shape is None or len(data) != 2 + shape[1]:
            return  # a 2-byte summary, or another model's matrix
        finger = lp.FINGERS[lp.TACTILE_SUMMARY.index(cmd)]
        row = data[1] >> 4
        if row >= shape[0]:
            return
        rows = self._tactile_rows.setdefault(finger, np.zeros(shape, dtype=np.uint8))
        rows[row] = np.frombuffer(bytes(data[2:]), dtype=np.uint8)
        if row == shape[0] - 1:
            self._tactile[finger] = rows.copy()
