"""A simulated LinkerHand (O6, L10 or L20) on a python-can bus: what linkerbot's O6 and our L10/L20 driver talk to.

Reproduces what the vendor SDKs rely on: requests [cmd] answered on the same ID with [cmd, values...]; set commands
applied and answered with the current values; positions in the model's frame layout (0-255, 255 = open, the vendor's
mapping: byte_map.py); speed, torque, temperature and fault frames; the identity replies (identity.py): version
(0x64, not on the L20, whose vendor code treats it as unsupported; 0xC1/0xC2/0xC4), serial number (0xC0, four
frames, naming the model and side);
tactile summaries (0xB1-0xB5), matrices ([0xBn, code] -> one frame per row [0xBn, row<<4, values...]) and the
legacy per-finger force frames (0x20-0x23). Replies are immediate, so it keeps up with any polling rate. The
joints move with the `sim` backend's dynamics.

Fault injection for tests: set_motor_fault(), stop_replying() (the hand goes mute), unplug().
"""

import threading
from collections import deque
from dataclasses import dataclass, field

import can
import numpy as np

from ...can.simulator import BusSimulator, SimBus
from ...kinematics import KinematicModel
from ...kinematics.catalogue import resolve_urdf
from ..simulated import FirstOrderJointDevice, SimDynamicsConfig
from . import protocol as lp
from .byte_map import byte_scale
from .identity import JOINT_COUNTS, MODEL_CODES

LEGACY_FORCE = (0x20, 0x21, 0x22, 0x23)
VERSION_TRIPLETS = {0xC1: (1, 0, 0), 0xC2: (2, 1, 3), 0xC4: (1, 2, 0)}  # PCB, firmware, mechanical
TEMPERATURE_C = 35


@dataclass
class LinkerHandSimConfig:
    model: str = "linkerhand_o6"
    side: str = "right"
    interface: str = "virtual"
    channel: str = "hand_sim"
    # None: "LH<model code>-01-001-<L|R>-A-1-A", the O6's serial layout (4th field the side, 5th the tactile type:
    # A = matrix)
    serial_number: str | None = None
    dynamics: SimDynamicsConfig = field(default_factory=lambda: SimDynamicsConfig(
        time_constant_s=0.03, noise_std=0.0, latency_ms=0.0))


class LinkerHandSimulator(BusSimulator[FirstOrderJointDevice]):
    def __init__(self, config: LinkerHandSimConfig | None = None):
        super().__init__()
        self.config = config or LinkerHandSimConfig()
        self.layout = lp.layout_for(self.config.model)
        self.model = KinematicModel.from_urdf(resolve_urdf(self.config.model, self.config.side))
        self.lower = self.model.lower[: self.layout.dof]
        self.upper = self.model.upper[: self.layout.dof]
        self.hand_id = self.layout.hand_id(self.config.side)
        self.scale = byte_scale(self.config.model, self.config.side, self.lower, self.upper)
        self.serial_number = self.config.serial_number or \
            f"LH{MODEL_CODES[self.layout.model]}-01-001-{self.config.side[0].upper()}-A-1-A"
        self._target_raw: np.ndarray = np.full(self.layout.dof, lp.RAW_MAX, dtype=np.int64)  # starts open
        self._dynamics = FirstOrderJointDevice(self.scale.to_radians(self._target_raw),
                                              self.model.velocity_limits[: self.layout.dof],
                                              self.config.dynamics, self.config.dynamics.feedback_hz or 500.0)
        self._bus = SimBus(self.config.interface, self.config.channel, self._on_frame, f"{self.config.model}-sim",
                           f"CAN ID {self.hand_id:#x}")
        self._blocks = self.layout.blocks_by_cmd()
        motors = self.layout.motor_count
        self._lock = threading.Lock()
        self.speed_raw = np.full(motors, 255, dtype=np.int64)
        self.torque_raw = np.full(motors, 255, dtype=np.int64)
        self.fault_codes = np.zeros(motors, dtype=np.int64)
        self._mute = False
        self.requests_received = 0
        self.position_sets: deque[tuple[int, bytes]] = deque(maxlen=1000)  # (cmd, values) of every set received

    # --- fault injection and observation ---
    def set_motor_fault(self, motor: int, code: int) -> None:
        """Fault bits of one motor (O6: 1 voltage, 2 encoder, 4 over-temperature, 8 over-current, 32 overload)."""
        self.fault_codes[motor] = code

    def stop_replying(self, mute: bool = True) -> None:
        self._mute = mute

    def target_raw(self) -> np.ndarray:
        """The position bytes the hand accepted last, in joint order."""
        with self._lock:
            return self._target_raw.copy()

    def current_raw(self) -> np.ndarray:
        return self.scale.to_bytes(self.true_positions())

    # --- frames ---
    def _on_frame(self, message: can.Message) -> None:
        if message.arbitration_id != self.hand_id or not message.data or self._mute:
            return
        data = bytes(message.data)
        cmd, values = data[0], data[1:]
        with self._lock:
            self.requests_received += 1
            if cmd in self._blocks:
                self._on_block(cmd, values)
            elif cmd in lp.TACTILE_SUMMARY:
                self._on_tactile(cmd, values)
            elif cmd in LEGACY_FORCE:
                self._reply(cmd, self._finger_pressure())
            elif cmd == lp.VERSION and self.layout.model != "linkerhand_l20":
                side = ord("R") if self.config.side == "right" else ord("L")
                self._reply(cmd, [JOINT_COUNTS[MODEL_CODES[self.layout.model]], 1, 1, side, 0x24, 0x11, 0])
            elif cmd in VERSION_TRIPLETS:
                self._reply(cmd, VERSION_TRIPLETS[cmd])
            elif cmd == lp.SERIAL:
                text = self.serial_number.encode("ascii")[:24].ljust(24, b"\x00")
                for index in range(4):
                    self._reply(cmd, [index, *text[6 * index:6 * index + 6]])

    def _on_block(self, cmd: int, values: bytes) -> None:
        kind, block = self._blocks[cmd]
        if kind == "fault" and values and self.layout.model == "linkerhand_l20":
            self.fault_codes[:] = 0  # L20 clears faults with 07 01 01 01 01 01
        elif values:
            self._apply_set(kind, block, np.frombuffer(values[:block.count], dtype=np.uint8).astype(np.int64))
        self._reply(cmd, self._block_values(kind, block))

    def _apply_set(self, kind: str, block: lp.FrameBlock, values: np.ndarray) -> None:
        if kind == "position":
            self.position_sets.append((block.cmd, bytes(values.astype(np.uint8))))
            vector = lp.joint_raw_to_device_vector(self.layout, self._target_raw)
            vector[block.start:block.start + len(values)] = values
            self._target_raw = vector[list(self.layout.joint_to_raw)]
            self._dynamics.command(self.scale.to_radians(self._target_raw))
        elif kind == "speed":
            self.speed_raw[block.start:block.start + len(values)] = values
        elif kind == "torque":
            self.torque_raw[block.start:block.start + len(values)] = values

    def _block_values(self, kind: str, block: lp.FrameBlock) -> np.ndarray:
        if kind == "position":
            vector = lp.joint_raw_to_device_vector(self.layout, self.current_raw())
        else:
            vector = {"speed": self.speed_raw, "torque": self.torque_raw, "fault": self.fault_codes,
                      "temperature": np.full(self.layout.motor_count, TEMPERATURE_C)}[kind]
        return vector[block.start:block.start + block.count]

    def _finger_flexion(self) -> np.ndarray:
        """0 (open) .. 1 (closed) per finger, from the device bytes of the first joints (thumb, index...)."""
        raw = self.current_raw()
        flexion_joint = {"linkerhand_l20": (0, 1, 2, 3, 4)}.get(self.layout.model, (0, 2, 3, 4, 5))
        return 1.0 - raw[list(flexion_joint)] / lp.RAW_MAX

    def _finger_pressure(self) -> np.ndarray:
        """A plausible contact pressure per finger (0-255): nothing until 60 % flexion, then rising."""
        return np.rint(np.clip((self._finger_flexion() - 0.6) / 0.4, 0, 1) * 255).astype(np.int64)

    def _on_tactile(self, cmd: int, values: bytes) -> None:
        finger = lp.TACTILE_SUMMARY.index(cmd)
        pressure = int(self._finger_pressure()[finger])
        if not values:
            self._reply(cmd, [pressure, pressure // 2])
            return
        if self.layout.tactile_shape is None or values[0] != self.layout.tactile_matrix_code:
            return
        rows, columns = self.layout.tactile_shape
        for row in range(rows):  # the pad is pressed at its tip rows first
            level = pressure if row >= rows // 2 else pressure // 3
            self._reply(cmd, [row << 4, *([level] * columns)])

    def _reply(self, cmd: int, values) -> None:
        self._bus.send(self.hand_id, bytes([cmd, *(int(v) for v in values)]))
