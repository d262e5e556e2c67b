"""LinkerHand O6 through the vendor's linkerbot SDK (O6 class), on any python-can interface that does not echo.

linkerbot speaks a 0-100 scale (raw = round(v * 255 / 100)); we convert radians <-> the device's 0-255 bytes with
the vendor's mapping (byte_map.py) and hand linkerbot exactly those bytes (v = raw * 100 / 255), so
nothing is rounded twice. linkerbot polls angles itself; we set its polling to our rates (angles at hand_poll_hz,
faults and temperatures at a few Hz, tactile matrices only when enabled). Its cached readings are stamped with
time.time() on receipt, converted to our monotonic clock. Before linkerbot takes the channel, the hand's identity
replies must not name another model (identity.py); silence runs from the first read request the hand left
unanswered, judged on the bus linkerbot's dispatcher reads (can.liveness). linkerbot stops its dispatcher for good
after ten consecutive bus errors; re-arming then rebuilds the O6 object.
"""

import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np

from ...can.identify import BusSignature
from ...can.liveness import BusLiveness, WallToMonotonic
from ...can.port import CanPortConfig
from ...geometry.sides import check_side
from ..device_fault import DeviceUnavailable
from ..joint_device import JointState
from ..real_config import SharedRealConfig
from ..real_device import RealJointDevice
from . import protocol as lp
from .byte_map import byte_scale
from .config import LinkerHandConfig
from .identity import HandIdentity, check_hand_model

if TYPE_CHECKING:
    from linkerbot.hand.o6 import O6

O6_SCALE = 100.0  # linkerbot's unit for angles, speeds and torques
STATUS_POLL_S = 0.05  # faults must be seen within 100 ms
TACTILE_POLL_S = 1 / 30  # linkerbot's default force-sensor rate
OVER_TEMPERATURE_C = 70


def raw_to_linkerbot(raw) -> list[float]:
    return [float(v) * O6_SCALE / lp.RAW_MAX for v in raw]


def linkerbot_to_raw(values) -> np.ndarray:
    return np.rint(np.asarray(values, dtype=float) * lp.RAW_MAX / O6_SCALE).astype(np.int64)


class O6JointDevice(RealJointDevice):
    bus_kind = lp.BUS_SIGNATURE.kind

    def __init__(self, part, port: CanPortConfig, config: SharedRealConfig, settings: LinkerHandConfig,
                 signatures: Iterable[BusSignature] = ()):
        super().__init__(f"linkerhand_o6-{part.spec.side}", part, port, config, signatures)
        port.refuse_echoing("linkerbot's O6")  # it would read its own angle commands back as the hand's angles
        self.side = check_side(part.spec.side)
        self.scale = byte_scale("linkerhand_o6", self.side, self.device_lower, self.device_upper)
        self.settings = settings
        self._hand: O6 | None = None
        self._clock = WallToMonotonic()  # measured again at every connect (_open)
        self._previous: JointState | None = None
        self._previous_lock = threading.Lock()  # read() and the watchdog both derive velocities
        self.identity: HandIdentity | None = None  # read at connect; None: the hand did not say

    @property
    def hand(self) -> "O6":
        """linkerbot's O6, while connected."""
        if self._hand is None:
            raise DeviceUnavailable(f"{self.name} is not connected: call connect() first")
        return self._hand

    def tactile(self) -> dict[str, np.ndarray]:
        """Latest 10x4 tactile matrix per finger (0-255); empty unless real.linkerhand.tactile."""
        snapshot = self._hand.force_sensor.get_snapshot() if self._hand is not None else None
        if snapshot is None:
            return {}
        return {finger: getattr(snapshot, finger).values.copy() for finger in lp.FINGERS}

    def _open(self) -> None:
        from linkerbot.hand.o6 import O6  # imported here: only the real backend needs the SDK
        from linkerbot.hand.o6.events import SensorSource

        self.port.check_opens(self.name)
        self.identity = check_hand_model("linkerhand_o6", self.side, self.port, self.name)
        self._clock = WallToMonotonic()
        self._previous = None
        self._hand = hand = self._construct_hand(O6)
        hand_id = lp.layout_for("linkerhand_o6").hand_id(self.side)
        self.liveness = BusLiveness(lambda message: "" if message.arbitration_id == hand_id else None, polled=True,
                                    clock=self._clock)
        self.liveness.attach(hand._dispatcher._bus)  # private: the bus linkerbot's threads read and write
        intervals = {SensorSource.ANGLE: 1.0 / self.settings.poll_hz, SensorSource.FAULT: STATUS_POLL_S,
                     SensorSource.TEMPERATURE: STATUS_POLL_S}
        if self.settings.tactile:
            intervals[SensorSource.FORCE_SENSOR] = TACTILE_POLL_S
        hand.start_polling(intervals)

    def _construct_hand(self, o6_class: "type[O6]") -> "O6":
        """O6(...), built in two steps: a failed constructor leaves its CAN dispatcher running, and O6.__del__
        then raises on the attributes it never set."""
        hand = o6_class.__new__(o6_class)
        try:
            o6_class.__init__(hand, side=self.side, interface_name=self.port.channel,
                              interface_type=self.port.interface)
        except BaseException:
            dispatcher = getattr(hand, "_dispatcher", None)
            if dispatcher is not None:
                dispatcher.stop()
            hand._closed = True  # O6.__del__ calls close(), a no-op once closed
            raise
        return hand

    def _bus_problem(self) -> str | None:
        error = self._hand._dispatcher._bus_error if self._hand is not None else None
        if error is None:
            return None
        return (f"linkerbot stopped using the CAN bus after repeated errors ({error}). Check the cable and the "
                "adapter, then re-arm (the connection is rebuilt).")

    def _needs_reopen(self) -> bool:
        hand = self._hand
        return hand is None or hand._bus_error is not None or hand._dispatcher._bus_error is not None

    def _startup(self) -> None:
        self.hand.speed.set_speeds(raw_to_linkerbot([self.settings.speed_raw] * 6))
        self.hand.torque.set_torques(raw_to_linkerbot([self.settings.torque_raw] * 6))
        self.device_target = self._measured().positions.copy()

    def _close(self) -> None:
        hand, self._hand = self._hand, None
        if hand is not None:
            hand.close()

    def _send(self, device_target: np.ndarray) -> None:
        self.hand.angle.set_angles(raw_to_linkerbot(self.scale.to_bytes(device_target)))

    def _latest_state(self) -> JointState | None:
        snapshot = self._hand.angle.get_snapshot() if self._hand is not None else None
        if snapshot is None:
            return None
        positions = self.scale.to_radians(linkerbot_to_raw(snapshot.angles.to_list()))
        capture_ns = self._clock.to_monotonic_ns(snapshot.timestamp)
        with self._previous_lock:
            previous = self._previous
            if previous is not None and previous.capture_ns == capture_ns:
                return previous
            velocities = np.zeros_like(positions)
            if previous is not None and capture_ns > previous.capture_ns:
                velocities = (positions - previous.positions) / ((capture_ns - previous.capture_ns) * 1e-9)
            self._previous = JointState(positions, velocities, capture_ns)
            return self._previous

    def _device_error(self) -> str | None:
        problems = []
        faults = self.hand.fault.get_snapshot()
        if faults is not None:
            codes = faults.faults.to_raw()
            if any(codes):
                problems.append(f"motor fault codes {codes} (bits: 1 voltage, 2 encoder, 4 over-temperature, "
                                "8 over-current, 32 overload)")
        temperatures = self.hand.temperature.get_snapshot()
        if temperatures is not None:
            values = temperatures.temperatures.to_list()
            if max(values) >= OVER_TEMPERATURE_C:
                problems.append(f"motor temperatures {values} C (limit {OVER_TEMPERATURE_C} C)")
        if not problems:
            return None
        return "; ".join(problems) + ". Let the hand cool / free the blocked finger, power-cycle, then re-arm."
