"""What every real (vendor-SDK or CAN) joint driver shares: limit checks, a feedback watchdog, latched faults.

Subclasses say how to open and close the device, how to send a target, where the latest measurement is and which
errors the device itself reports, always for the device's full joint vector (its own order); this class exposes the
driven subset (RigPart.indices) and keeps undriven joints at their home target. This class turns those into the
fault contract:
- a target that is non-finite or outside the model's limits is never sent (command_out_of_range);
- a device silent for longer than feedback_timeout_ms is a feedback_timeout. Silence is judged every
  watchdog_period_ms from the bus's receive timestamps (can.liveness.BusLiveness, on the bus the driver reads),
  so a reader of ours that the host did not schedule is told apart from a silent device: it is logged and counted
  (health()), never latched. A driver that watches no bus falls back to the age of its newest measurement;
- an error the device reports is a joint_error; a failed send, or a bus the interface reports as failed, is a
  bus_error.
Once in fault, new targets are dropped, so the hardware holds the last safe target (held_target()), until
clear_fault(), which also rebuilds the driver's connection when its SDK gave up on the bus.
"""

import logging
import threading
from abc import abstractmethod
from collections import deque
from collections.abc import Iterable

import numpy as np

from ..can.identify import BusSignature, identify, swapped_channel_hint
from ..can.liveness import SILENT, STARVED, BusLiveness
from ..can.port import CanPortConfig
from ..clock import now_ns
from .device_fault import (
    BUS_ERROR,
    COMMAND_OUT_OF_RANGE,
    FEEDBACK_TIMEOUT,
    JOINT_ERROR,
    DeviceFault,
    DeviceUnavailable,
    make_fault,
)
from .joint_device import JointDevice, JointState
from .real_config import SharedRealConfig

logger = logging.getLogger(__name__)

# A reader of ours that has taken nothing from the bus for this long is not merely late: its thread is stuck or
# dead, and the loop is blind; that is a fault even though the device may be fine.
READER_STALL_LIMIT_MS = 2000.0
# Measurements kept for read_nearest: the watchdog and every read record the newest one, so at least the last
# ~0.6 s at the 10 ms watchdog period.
SEEN_HISTORY = 64


class RealJointDevice(JointDevice):
    # The kind of device the driver expects (its BusSignature.kind). When the device stays silent, the devices heard
    # on the channel instead tell a swapped channel from a missing device.
    bus_kind = ""

    def __init__(self, label: str, part, port: CanPortConfig, config: SharedRealConfig,
                 signatures: Iterable[BusSignature] = ()):
        """part: the rig.RigPart driven; its model's joint order is the device's and its limits are the ones
        enforced. config: the real backend's settings (supervision thresholds). signatures: the devices that may be
        heard on its channel instead of its own (every registered vendor's, given by whoever builds the driver: the
        registry), for the swapped-channel hint of a silent device; none: no hint."""
        self.driven = np.asarray(part.indices, dtype=int)
        device_home = np.asarray(part.home_full, dtype=float)
        super().__init__(device_home[self.driven])
        self.name = f"{label}@{port.interface}:{port.channel}"
        self.port = port
        self.config = config
        self.signatures = tuple(signatures)
        self.device_lower = np.asarray(part.model.lower, dtype=float)  # the full device vector's limits
        self.device_upper = np.asarray(part.model.upper, dtype=float)
        self.lower = self.device_lower[self.driven]
        self.upper = self.device_upper[self.driven]
        self.device_target = device_home.copy()  # what the device was last told
        self._fault: DeviceFault | None = None
        self._fault_lock = threading.Lock()
        self._stop = threading.Event()
        self._watchdog: threading.Thread | None = None
        self._io_lock = threading.RLock()  # supervision never looks at a connection being rebuilt
        self.last_safe_target: np.ndarray | None = None
        self._seen: deque[JointState] = deque(maxlen=SEEN_HISTORY)
        self._seen_lock = threading.Lock()
        self.liveness: BusLiveness | None = None  # set by the driver's _open() once it has its bus
        self._starved_since_ns: int | None = None
        self._health = {"reader_starved": 0, "reader_starved_longest_ms": 0.0, "faults_latched": 0}

    # --- what a driver implements ---
    @abstractmethod
    def _open(self) -> None:
        """Open the bus / SDK and start whatever receives feedback."""

    @abstractmethod
    def _close(self) -> None:
        """Release every thread and bus the driver opened. Must not raise."""

    @abstractmethod
    def _send(self, device_target: np.ndarray) -> None:
        """Send a full device target whose driven joints were checked against the limits."""

    @abstractmethod
    def _latest_state(self) -> JointState | None:
        """The newest full-device measurement, capture_ns on clock.now_ns(); None before the first one."""

    def _measured(self) -> JointState:
        """The newest full-device measurement, from _startup on: connecting has waited for the first one."""
        state = self._latest_state()
        assert state is not None, "a driver's measurements start once feedback flows, and stay"
        return state

    def _device_error(self) -> str | None:
        """An error the device reports about itself (error bits, e-stop, motor faults), as a message."""
        return None

    def _startup(self) -> None:
        """Runs once feedback flows, before the watchdog starts (enable sequences, speed settings)."""

    def _rearm(self) -> None:
        """Runs at a re-arm, on a working connection: restore what _startup set up and the device has lost since (a
        power cycle disables the Piper's motors). May raise DeviceUnavailable: the fault then stays."""

    def _needs_reopen(self) -> bool:
        """Whether the connection is beyond repair without rebuilding it (the SDK stopped using its bus)."""
        return False

    def _bus_problem(self) -> str | None:
        """A failure the CAN interface itself reports (error-passive, bus-off), as a message."""
        return None

    # --- the JointDevice contract ---
    def connect(self) -> None:
        self._fault = None
        self.last_safe_target = None
        self._seen.clear()
        self._connect_io()
        self._stop.clear()
        self._watchdog = threading.Thread(target=self._watch, name=f"{self.name}-watchdog", daemon=True)
        self._watchdog.start()

    def _connect_io(self) -> None:
        self.liveness = None
        self._open()
        try:
            self._wait_for_feedback()
            self._startup()
        except BaseException:
            self._close()
            raise

    def disconnect(self) -> None:
        self._stop.set()
        if self._watchdog is not None:
            self._watchdog.join(timeout=1.0)
            self._watchdog = None
        self._close()

    def read(self) -> JointState:
        state = self._latest_state()
        if state is None:
            raise DeviceUnavailable(f"{self.name} is not connected (no measurement yet): call connect() first")
        return self._remember(JointState(state.positions[self.driven], state.velocities[self.driven],
                                         state.capture_ns))

    def read_nearest(self, capture_ns: int) -> JointState:
        latest = self.read()
        with self._seen_lock:
            return min(self._seen, key=lambda state: abs(state.capture_ns - capture_ns), default=latest)

    def command(self, positions: np.ndarray) -> None:
        target = np.asarray(positions, dtype=float)
        problem = self._range_problem(target)
        if problem is not None:
            self._raise(COMMAND_OUT_OF_RANGE, f"{problem}; target not sent, holding the last safe target")
            return
        if self._fault is not None:
            return  # hold: the hardware keeps the last target it accepted (held_target())
        device_target = self.device_target.copy()
        device_target[self.driven] = target
        try:
            self._send(device_target)
        except Exception as error:  # a dead interface must not crash the control loop
            self._raise(BUS_ERROR, f"sending the target failed: {error}. Check the CAN cable and interface.")
            return
        self.device_target = device_target
        self.last_safe_target = target

    def held_target(self) -> np.ndarray:
        """The driven joints' target the hardware holds: the last one it accepted (before the first command, where
        the device was at connect)."""
        return self.device_target[self.driven].copy()

    def fault(self) -> DeviceFault | None:
        """The latched fault, or None while the device is healthy."""
        return self._fault

    def clear_fault(self) -> None:
        """Re-arm after the operator has dealt with the cause; a cause still present is re-detected at once. When the
        SDK has given up on its bus (a bus-off, an interface that went away), the connection is rebuilt first, and
        what the device lost since its start-up is restored (_rearm); if either fails, the fault stays (logged)."""
        with self._io_lock:
            try:
                if self._needs_reopen():
                    self._reopen()
                self._rearm()
            except Exception as error:
                logger.warning("%s: re-arming failed: %s", self.name, error)
                return
            with self._fault_lock:
                self._fault = None
            self._supervise(rearming=True)

    def health(self) -> dict:
        """Counters for the session report: how often our reader was starved (and the longest time), faults
        latched, and whatever the driver adds."""
        return dict(self._health)

    # --- internals ---
    def _range_problem(self, target: np.ndarray) -> str | None:
        if target.shape != (self.dof,):
            return f"expected {self.dof} joint targets, got shape {target.shape}"
        if not np.all(np.isfinite(target)):
            return f"non-finite target {target}"
        tolerance = self.config.limit_tolerance_rad
        outside = (target < self.lower - tolerance) | (target > self.upper + tolerance)
        if np.any(outside):
            joints = np.flatnonzero(outside).tolist()
            return f"joints {joints} outside the model limits: {target[outside]} not in " \
                   f"[{self.lower[outside]}, {self.upper[outside]}]"
        return None

    def _reopen(self) -> None:
        """Rebuild the connection the SDK abandoned; the hardware keeps its last target meanwhile."""
        logger.info("%s: rebuilding the connection", self.name)
        self._close()
        self._connect_io()

    def _raise(self, kind: str, message: str, since_ns: int | None = None) -> None:
        with self._fault_lock:
            if self._fault is not None:
                return  # keep the first cause: later faults are usually its consequences
            self._fault = make_fault(kind, f"{self.name}: {message}", since_ns)
            self._health["faults_latched"] += 1
        logger.error("%s", self._fault.message)

    def _wait_for_feedback(self) -> None:
        deadline = now_ns() + int(self.config.connect_timeout_s * 1e9)
        while self._latest_state() is None:
            if now_ns() > deadline:
                raise DeviceUnavailable(f"{self.name}: no feedback within {self.config.connect_timeout_s} s. "
                                        f"{self._silence_explained()}")
            self._stop.wait(0.005)

    def _silence_explained(self) -> str:
        """Why the device may be silent: another known device on its channel (swapped channels), else the
        driver's checklist."""
        heard = (identify(self.port.interface, self.port.channel, self.signatures)
                 if self.bus_kind and self.signatures else [])
        return swapped_channel_hint(self.bus_kind, self.port.interface, self.port.channel, heard) + \
            self._no_feedback_hint()

    def _no_feedback_hint(self) -> str:
        return ("Check power, the CAN cable and termination, that the interface is up at 1 Mbit/s "
                "(`ip -details link show <channel>`), and the configured interface/channel. Run teledex-doctor.")

    def _watch(self) -> None:
        period_s = self.config.watchdog_period_ms / 1000
        while not self._stop.wait(period_s):
            try:
                self._supervise()
            except Exception as error:  # the watchdog must outlive a driver bug
                self._raise(BUS_ERROR, f"supervision failed: {error}")

    def _remember(self, state: JointState) -> JointState:
        with self._seen_lock:
            if not self._seen or self._seen[-1].capture_ns != state.capture_ns:
                self._seen.append(state)
        return state

    def _supervise(self, rearming: bool = False) -> None:
        """rearming: a device still silent at a re-arm keeps its fault at once, with no confirmation delay."""
        with self._io_lock:
            state = self._latest_state()
            if state is not None:
                self._remember(JointState(state.positions[self.driven], state.velocities[self.driven],
                                          state.capture_ns))
            self._check(state, rearming)

    def _check(self, state: JointState | None, rearming: bool) -> None:
        silence = self._silence(state, confirm=not rearming)
        if silence is not None:
            message, since_ns = silence
            self._raise(FEEDBACK_TIMEOUT, f"{message} (limit {self.config.feedback_timeout_ms:.0f} ms). "
                                          f"{self._no_feedback_hint()}", since_ns)
            return
        problem = self._bus_problem()
        if problem is not None:
            self._raise(BUS_ERROR, problem)
            return
        error = self._device_error()
        if error is not None:
            self._raise(JOINT_ERROR, error)

    def _silence(self, state: JointState | None, confirm: bool = True) -> tuple[str, int | None] | None:
        """What shows the device silent and since when (clock.now_ns), or None. A starved reader of ours is logged
        (once per episode of it, with its length) and counted."""
        now = now_ns()
        timeout_ms = self.config.feedback_timeout_ms
        if self.liveness is None:
            age_ms = (now - state.capture_ns) / 1e6 if state is not None else float("inf")
            since_ns = None if state is None else state.capture_ns
            return (f"no feedback for {age_ms:.0f} ms", since_ns) if age_ms > timeout_ms else None
        verdict = self.liveness.judge(now, timeout_ms, confirm)
        if verdict.state == STARVED:
            if self._starved_since_ns is None:
                self._starved_since_ns = now - int(verdict.age_ms * 1e6)
                self._health["reader_starved"] += 1
            if verdict.age_ms > READER_STALL_LIMIT_MS:
                return f"our reader of the bus has taken nothing from it for {verdict.age_ms:.0f} ms (it is stuck)", \
                    self._starved_since_ns
            return None
        if self._starved_since_ns is not None:
            behind_ms = (now - self._starved_since_ns) / 1e6
            self._starved_since_ns = None
            self._health["reader_starved_longest_ms"] = max(self._health["reader_starved_longest_ms"], behind_ms)
            logger.warning("%s: our reader of the bus fell %.0f ms behind (this host was busy); the device kept "
                        "sending, so this is not a device fault", self.name, behind_ms)
        if verdict.state != SILENT:
            return None
        source = f" from {verdict.source}" if verdict.source else ""  # devices with several sources name them
        return (f"no feedback{source} for {verdict.age_ms:.0f} ms (by the bus's receive times)",
                now - int(verdict.age_ms * 1e6))
