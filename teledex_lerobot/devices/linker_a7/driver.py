"""Linker Arm A7 through the vendor's linkerbot SDK (A7 class), on any python-can interface that does not echo.

Connection: A7(side, channel, interface) pings the seven motors (20 ms each), reads 11 registers per motor and
starts its poll threads. We then poll only what we use: positions at settings.poll_hz and temperatures at 20 Hz (an
over-temperature is seen within 100 ms). Joint velocities are differentiated per motor from the timestamped
positions rather than polled: linkerbot spaces every frame it sends by a 0.3 ms busy-wait, so each polled register
costs CPU, and dropping velocity (100 Hz) and torque (20 Hz) polling halves it. Startup: A7.enable() (reset errors,
profile position mode, enable) and the profile speed and acceleration from the config. Units are the SDK's, rad
and rad/s, as float32 on the bus: one device unit is one float32 step.

linkerbot members it does not publish are used where it gives no public way (hence linkerbot==0.5.4 in
pyproject.toml):
- A7._set_angles streams a joint target: move_j refuses a new target while its motion timer runs (StateError),
  which rules it out at a control rate; move_j itself calls _set_angles, and we keep its limit check.
- A7._motors' `angle` properties hold the timestamped readings; A7.get_state() returns the same but also runs FK
  and builds pydantic models (~0.35 ms), too slow for the 100 Hz watchdog.
- A7._can_dispatcher: its bus (for the receive timestamps), its bus error and stop(); A7._closed and _bus_error.

Silence runs, per motor, from the first read request the motor left unanswered, judged on the bus linkerbot's
dispatcher reads (can.liveness). linkerbot stops its dispatcher for good after ten consecutive bus errors;
re-arming then rebuilds the A7 object.

Not on udp_multicast: there linkerbot receives its own one-byte read requests back, takes them for empty replies
and fails to unpack them. A simulator in another process is reached on the teledex loopback bus (teledex-sim).
"""

import threading
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np

from ...can.identify import BusSignature
from ...can.liveness import BusLiveness, WallToMonotonic
from ...can.port import CanPortConfig
from ...errors import ModelError
from ...geometry.sides import Side, check_side
from ..device_fault import DeviceUnavailable
from ..joint_device import JointState
from ..real_config import SharedRealConfig
from ..real_device import RealJointDevice
from . import protocol as ap
from .config import LinkerA7Config

if TYPE_CHECKING:
    from linkerbot.arm.a7 import A7

TEMPERATURE_POLL_S = 0.05
OVER_TEMPERATURE_C = 70.0
HANDSHAKE_RETRY_S = 0.05


def open_a7(side: Side, channel: str, interface: str, timeout_s: float) -> "A7":
    """linkerbot's A7(...), retried until timeout_s: it gives each motor one 20 ms handshake, which a loaded host can
    miss. A failed constructor leaves its CAN dispatcher running, so each attempt is built in two steps to be able
    to stop it. The last attempt's linkerbot error propagates."""
    from linkerbot.arm.a7 import A7
    from linkerbot.exceptions import StateError
    from linkerbot.exceptions import TimeoutError as SdkTimeoutError

    deadline = time.monotonic() + timeout_s
    while True:
        arm = A7.__new__(A7)
        try:
            A7.__init__(arm, side, channel, interface)
            return arm
        except (StateError, SdkTimeoutError):
            _stop_dispatcher(arm)
            if time.monotonic() > deadline:
                raise
            time.sleep(HANDSHAKE_RETRY_S)
        except BaseException:
            _stop_dispatcher(arm)
            raise


def _stop_dispatcher(arm) -> None:
    dispatcher = getattr(arm, "_can_dispatcher", None)
    if dispatcher is not None:
        dispatcher.stop()
    arm._closed = True  # A7.close() (and any later cleanup) is then a no-op


class LinkerA7JointDevice(RealJointDevice):
    """Device vector: the seven URDF joints, shoulder pitch first (motor IDs 51-57 right / 61-67 left), in rad."""

    bus_kind = ap.BUS_SIGNATURE.kind

    def __init__(self, part, port: CanPortConfig, config: SharedRealConfig, settings: LinkerA7Config,
                 signatures: Iterable[BusSignature] = ()):
        side = check_side(part.spec.side)
        super().__init__(f"linker_a7-{side}", part, port, config, signatures)
        if len(self.device_target) != ap.JOINTS:
            raise ModelError(f"{self.name}: the linker_a7 model has {len(self.device_target)} joints where the arm has "
                             f"{ap.JOINTS}: restore the built-in linker_a7 URDF")
        port.refuse_echoing("linkerbot's A7")
        self.side = side
        self.settings = settings
        self.motor_ids = ap.motor_ids(side)
        self._arm: A7 | None = None
        self._clock = WallToMonotonic()  # measured again at every connect (_open)
        self._previous_angles: list | None = None  # linkerbot AngleState per motor, last seen
        self._velocities = np.zeros(ap.JOINTS)
        self._velocity_lock = threading.Lock()  # read() and the watchdog both update the velocities

    def temperatures_c(self) -> np.ndarray:
        return np.array(self._arm.get_temperatures()) if self._arm is not None else np.full(ap.JOINTS, np.nan)

    # --- RealJointDevice hooks ---
    def _open(self) -> None:
        from linkerbot.arm.a7 import SensorType  # imported here: only the real backend needs the SDK

        self.port.check_opens(self.name)
        self._clock = WallToMonotonic()
        self._previous_angles = None
        self._velocities[:] = 0.0
        self._arm = arm = self._construct_arm()
        motors = set(self.motor_ids)
        self.liveness = BusLiveness(lambda message: f"motor {message.arbitration_id}"
                                    if message.arbitration_id in motors else None, polled=True, clock=self._clock)
        self.liveness.attach(arm._can_dispatcher._bus)  # private: the bus linkerbot's threads read and write
        arm.start_polling({SensorType.POSITION: 1.0 / self.settings.poll_hz,
                           SensorType.TEMPERATURE: TEMPERATURE_POLL_S})

    def _startup(self) -> None:
        arm = self.arm
        arm.enable()
        arm.set_velocities([self.settings.speed_rad_s] * ap.JOINTS)
        arm.set_accelerations([self.settings.acceleration_rad_s2] * ap.JOINTS)
        # start from where the arm is, not from home: the first command must not jump
        self.device_target = self._measured().positions.copy()

    def _close(self) -> None:
        # No disable: a disabled A7 goes limp and drops under gravity.
        arm, self._arm = self._arm, None
        if arm is not None:
            arm.close()

    def _send(self, device_target: np.ndarray) -> None:
        # Within limit_tolerance_rad of a limit is the limit: linkerbot's own check (kept) has no tolerance.
        self.arm._set_angles(np.clip(device_target, self.device_lower, self.device_upper).tolist())

    def _latest_state(self) -> JointState | None:
        arm = self._arm
        if arm is None:
            return None
        angles = [motor.angle for motor in arm._motors]
        with self._velocity_lock:
            velocities = self._differentiate(angles)
        positions = np.array([angle.angle for angle in angles])
        # the oldest joint reading: one silent motor ages the whole measurement, so the watchdog sees it
        stamp_s = min(angle.timestamp for angle in angles)
        return JointState(positions, velocities, self._clock.to_monotonic_ns(stamp_s))

    def _device_error(self) -> str | None:
        temperatures = self.temperatures_c()
        hot = [self.motor_ids[j] for j in np.flatnonzero(temperatures >= OVER_TEMPERATURE_C)]
        if not hot:
            return None
        return (f"motors {hot} at {temperatures.round(1).tolist()} C (limit {OVER_TEMPERATURE_C} C). Let the arm "
                "cool and lighten its load, then re-arm.")

    def _no_feedback_hint(self) -> str:
        silent = self._silent_motor_ids()
        who = f"motors {silent} do not answer" if silent else "the arm does not answer"
        return (f"{who} (a {self.side} A7 answers on CAN IDs {self.motor_ids[0]}-{self.motor_ids[-1]}): check the "
                "side setting, power and e-stop, the CAN cable and termination, and that the interface is up at "
                "1 Mbit/s. Run teledex-doctor.")

    # --- helpers ---
    @property
    def arm(self) -> "A7":
        """linkerbot's A7, while connected."""
        if self._arm is None:
            raise DeviceUnavailable(f"{self.name} is not connected: call connect() first")
        return self._arm

    def _differentiate(self, angles: list) -> np.ndarray:
        """Per-motor velocity between the two latest distinct readings of each motor (each has its own stamp)."""
        previous = self._previous_angles
        if previous is not None:
            for joint, (now, before) in enumerate(zip(angles, previous, strict=True)):
                if now.timestamp > before.timestamp:
                    self._velocities[joint] = (now.angle - before.angle) / (now.timestamp - before.timestamp)
        self._previous_angles = angles
        return self._velocities.copy()

    def _construct_arm(self) -> "A7":
        from linkerbot.exceptions import StateError
        from linkerbot.exceptions import TimeoutError as SdkTimeoutError

        try:
            return open_a7(self.side, self.port.channel, self.port.interface, self.config.connect_timeout_s)
        except (StateError, SdkTimeoutError) as error:
            raise DeviceUnavailable(f"{self.name}: no feedback within {self.config.connect_timeout_s} s "
                                    f"({error}). {self._silence_explained()}") from error

    def _bus_problem(self) -> str | None:
        error = self._arm._can_dispatcher._bus_error if self._arm is not None else None
        if error is None:
            return None
        return (f"linkerbot stopped using the CAN bus after repeated errors ({error}). Check the cable and the "
                "adapter, then re-arm (the connection is rebuilt).")

    def _needs_reopen(self) -> bool:
        arm = self._arm
        return arm is None or getattr(arm, "_bus_error", None) is not None or \
            arm._can_dispatcher._bus_error is not None

    def _silent_motor_ids(self) -> list[int]:
        arm = self._arm
        if arm is None:
            return []
        now_s = time.time()  # the SDK stamps readings with the wall clock
        limit_s = self.config.feedback_timeout_ms / 1000
        return [motor_id for motor_id, motor in zip(self.motor_ids, arm._motors, strict=True)
                if now_s - motor.angle.timestamp > limit_s]
