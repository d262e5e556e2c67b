"""A simulated Linker Arm A7 on a python-can bus: what the unmodified linkerbot A7 class talks to in tests and
teledex-sim.

Reproduces what linkerbot's A7 relies on: seven motors on their own IDs (51-57 right, 61-67 left) answering every
register linkerbot reads ([reg] -> [reg, float32 LE]; the handshake and enabled registers in one byte) at whatever
rate it polls; the enable and mode registers gate motion (a target acts only on an enabled motor in profile
position mode); targets beyond the URDF limits are clamped, as a motor's own soft limits would; the profile speed,
acceleration and deceleration shape each motor's trapezoidal setpoint, and the joints follow it with the `sim`
backend's dynamics (FirstOrderJointDevice). Gains and the profile registers read back what was written.
Not modelled: 0x0D (save) and 0x87 (set zero) are accepted and have no effect; there is no gravity or load, so the
motors report zero torque.

Fault injection for tests: silence() (some or all motors stop answering), set_temperature(), unplug().
"""

import threading
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field

import can
import numpy as np

from ...can.simulator import BusSimulator, SimBus
from ...clock import now_ns
from ...kinematics import KinematicModel, linker_a7_urdf_path
from ..simulated import FirstOrderJointDevice, SimDynamicsConfig
from . import protocol as ap

PROFILE_HZ = 500.0  # the motors' setpoint update rate
TEMPERATURE_C = 35.0
# the simulated motors' power-up register values (not the vendor's; unknown without hardware)
POWER_UP_PROFILE_SPEED_RAD_S = 1.0
POWER_UP_ACCELERATION_RAD_S2 = 5.0
POWER_UP_GAINS = {ap.POSITION_KP: 20.0, ap.VELOCITY_KP: 0.5, ap.VELOCITY_KI: 0.01}


@dataclass
class A7SimConfig:
    side: str = "right"
    interface: str = "virtual"
    channel: str = "a7_sim"
    initial_positions: tuple[float, ...] = (0.0,) * ap.JOINTS  # rad, URDF joint order
    # noise-free by default so tests can compare exact values; the SDK/bus adds the real latency
    dynamics: SimDynamicsConfig = field(default_factory=lambda: SimDynamicsConfig(
        time_constant_s=0.02, noise_std=0.0, latency_ms=0.0))


class A7Simulator(BusSimulator[FirstOrderJointDevice]):
    loop_name = "a7-sim-profile"

    def __init__(self, config: A7SimConfig | None = None):
        super().__init__()
        self.config = config or A7SimConfig()
        self.motor_ids = ap.motor_ids(self.config.side)
        self.model = KinematicModel.from_urdf(linker_a7_urdf_path(self.config.side))
        self._lower, self._upper = self.model.lower, self.model.upper
        initial = np.clip(np.asarray(self.config.initial_positions, dtype=float), self._lower, self._upper)
        self._dynamics = FirstOrderJointDevice(initial, self.model.velocity_limits, self.config.dynamics,
                                              self.config.dynamics.feedback_hz or 1000.0)
        self._bus = SimBus(self.config.interface, self.config.channel, self._on_frame, "a7-sim",
                           f"CAN IDs {self.motor_ids[0]}-{self.motor_ids[-1]}")
        self._lock = threading.Lock()
        # per-motor registers, guarded by _lock
        self.enabled = [False] * ap.JOINTS
        self.mode = [0] * ap.JOINTS
        self.profile_speed_rad_s = np.full(ap.JOINTS, POWER_UP_PROFILE_SPEED_RAD_S)
        self.acceleration_rad_s2 = np.full(ap.JOINTS, POWER_UP_ACCELERATION_RAD_S2)
        self.deceleration_rad_s2 = np.full(ap.JOINTS, POWER_UP_ACCELERATION_RAD_S2)
        self.gains = [dict(POWER_UP_GAINS) for _ in range(ap.JOINTS)]
        self.temperature_c = np.full(ap.JOINTS, TEMPERATURE_C)
        self.error_resets = 0
        self._target = initial.copy()  # where each motor is going
        self._setpoint = initial.copy()  # the motors' trapezoidal profile
        self._setpoint_velocity = np.zeros(ap.JOINTS)
        # fault injection and observation
        self._silent = [False] * ap.JOINTS
        self.requests_received = 0
        # (motor id, raw 0x0A payload) of the latest targets, for bus-level checks
        self.targets_received: deque[tuple[int, bytes]] = deque(maxlen=1000)

    # --- fault injection ---
    def silence(self, joints: Iterable[int] | None = None, silent: bool = True) -> None:
        """Motors (0-based joint indices; None = all) stop (or resume) answering, while still obeying writes."""
        for joint in range(ap.JOINTS) if joints is None else joints:
            self._silent[joint] = silent

    def set_temperature(self, joint: int, celsius: float) -> None:
        self.temperature_c[joint] = celsius

    # --- what a test can observe directly ---
    def target(self) -> np.ndarray:
        """The targets the motors accepted last (rad), after decoding and clamping."""
        with self._lock:
            return self._target.copy()

    def profile_velocity(self) -> np.ndarray:
        """The velocity of each motor's trapezoidal profile now (rad/s): what the profile speed caps."""
        with self._lock:
            return self._setpoint_velocity.copy()

    # --- frames ---
    def _on_frame(self, message: can.Message) -> None:
        if message.arbitration_id not in self.motor_ids or not message.data:
            return
        joint = self.motor_ids.index(message.arbitration_id)
        data = bytes(message.data)
        register, payload = data[0], data[1:]
        with self._lock:
            self.requests_received += 1
            if payload:
                self._on_write(joint, register, payload)
            elif register == ap.RESET_ERROR:
                self.error_resets += 1
            elif register not in (ap.SAVE_PARAMS, ap.SET_ZERO) and not self._silent[joint]:
                self._on_read(joint, register)

    def _on_write(self, joint: int, register: int, payload: bytes) -> None:
        if register == ap.SET_ENABLE:
            self.enabled[joint] = payload[0] == 0x01
            if not self.enabled[joint]:
                self._hold_here(joint)
        elif register == ap.SET_MODE:
            self.mode[joint] = payload[0]
        elif len(payload) < 4:
            return  # every other register carries a float32
        elif register == ap.SET_POSITION:
            self.targets_received.append((self.motor_ids[joint], payload[:4]))
            if self.enabled[joint] and self.mode[joint] == ap.MODE_PROFILE_POSITION:
                self._target[joint] = np.clip(ap.unpack_float(payload), self._lower[joint], self._upper[joint])
        elif register == ap.SET_VELOCITY:
            self.profile_speed_rad_s[joint] = abs(ap.unpack_float(payload))
        elif register == ap.SET_ACCELERATION:
            self.acceleration_rad_s2[joint] = abs(ap.unpack_float(payload))
        elif register == ap.SET_DECELERATION:
            self.deceleration_rad_s2[joint] = abs(ap.unpack_float(payload))
        elif register in ap.GAIN_WRITES:
            self.gains[joint][ap.GAIN_WRITES[register]] = ap.unpack_float(payload)

    def _on_read(self, joint: int, register: int) -> None:
        if register in (ap.HANDSHAKE, ap.ENABLED):
            value = b"\x01" if register == ap.HANDSHAKE or self.enabled[joint] else b"\x00"
            self._bus.send(self.motor_ids[joint], bytes([register]) + value)
            return
        state = self._dynamics.read()
        values = {ap.POSITION: state.positions[joint], ap.VELOCITY: state.velocities[joint], ap.TORQUE: 0.0,
                  ap.TEMPERATURE: self.temperature_c[joint], ap.ACCELERATION: self.acceleration_rad_s2[joint],
                  **self.gains[joint]}
        if register in values:
            self._bus.send(self.motor_ids[joint], bytes([register]) + ap.pack_float(float(values[register])))

    def _hold_here(self, joint: int) -> None:
        here = self._dynamics.read().positions[joint]
        self._target[joint] = self._setpoint[joint] = here
        self._setpoint_velocity[joint] = 0.0

    # --- motion ---
    def _run(self) -> None:
        period_s = 1.0 / PROFILE_HZ
        last_tick = now_ns()
        while not self._stop.wait(period_s):
            tick = now_ns()
            self._advance_profile((tick - last_tick) * 1e-9)
            last_tick = tick

    def _advance_profile(self, dt_s: float) -> None:
        """Each motor's trapezoidal profile: accelerate to the profile speed (capped at the URDF velocity limit),
        cruise, and decelerate so as to stop at the target."""
        with self._lock:
            error = self._target - self._setpoint
            top_speed = np.minimum(self.profile_speed_rad_s, self.model.velocity_limits)
            stopping_speed = np.sqrt(2 * self.deceleration_rad_s2 * np.abs(error))
            desired = np.sign(error) * np.minimum(top_speed, stopping_speed)
            previous = self._setpoint_velocity
            slowing = np.abs(desired) < np.abs(previous)
            max_change = np.where(slowing, self.deceleration_rad_s2, self.acceleration_rad_s2) * dt_s
            velocity = previous + np.clip(desired - previous, -max_change, max_change)
            step = velocity * dt_s
            arrived = (np.abs(step) >= np.abs(error)) & (np.sign(step) == np.sign(error))
            step[arrived], velocity[arrived] = error[arrived], 0.0
            self._setpoint = self._setpoint + step
            self._setpoint_velocity = velocity
            self._dynamics.command(self._setpoint.copy())
