"""The two hardware-free backends: `fake` (kinematic, instantaneous) and `sim` (first-order joints with latency,
noise, dropouts and fault injection, one thread per device).

These are not the wire-protocol simulators (devices/<vendor>/simulator.py, run by teledex-sim, which speak a
vendor's CAN protocol to its real SDK), nor the MuJoCo world (teledex_lerobot/world, backend `mujoco`).
"""

import threading
from collections import deque
from dataclasses import dataclass, replace

import numpy as np

from ..clock import MONOTONIC, Clock, now_ns
from ..errors import ConfigError
from .joint_device import JointDevice, JointState

# Feedback rates of the real devices: Piper streams joints at 200 Hz; LinkerHand angles are
# polled at 60 Hz by the vendor SDK. The `sim` backend publishes at these rates.
DEFAULT_FEEDBACK_HZ = {"arm": 200.0, "hand": 60.0}


@dataclass
class SimDynamicsConfig:
    """How a simulated device behaves. Defaults give a responsive, slightly noisy device with a few ms of latency."""

    feedback_hz: float | None = None  # rate of the device's feedback messages; None = the device kind's default
    time_constant_s: float = 0.04  # first-order tracking toward the target
    speed_scale: float = 1.0  # fraction of the model's velocity limits the device moves at, at most
    noise_std: float = 2e-4  # measurement noise, rad (or m)
    latency_ms: float = 4.0  # command-to-actuation delay
    dropout_probability: float = 0.0  # chance that one feedback message is lost
    seed: int | None = None  # of the noise and dropouts; None = a different run each time
    # Fault injection, for tests and demos: on the part named fault_source ("arm" or "hand"), within
    # [fault_start_s, fault_start_s + fault_duration_s) after connect (no duration: until disconnect), feedback
    # arrives fault_delay_ms late, or not at all when fault_freeze is set.
    fault_source: str = ""  # "" = no fault
    fault_delay_ms: float = 0.0  # how late the feedback arrives during the fault
    fault_freeze: bool = False  # no feedback at all during the fault
    fault_start_s: float = 0.0  # when the fault starts, after connect
    fault_duration_s: float | None = None  # how long it lasts; None = until disconnect

    def validate(self) -> None:
        problems = []
        if self.feedback_hz is not None and self.feedback_hz <= 0:
            problems.append(f"sim.feedback_hz must be > 0 (got {self.feedback_hz})")
        if self.time_constant_s <= 0:
            problems.append(f"sim.time_constant_s must be > 0 (got {self.time_constant_s})")
        if not 0 < self.speed_scale <= 1:
            problems.append(f"sim.speed_scale must be in (0, 1] (got {self.speed_scale})")
        if self.noise_std < 0 or self.latency_ms < 0:
            problems.append("sim.noise_std and sim.latency_ms must be >= 0")
        if self.fault_delay_ms < 0 or self.fault_start_s < 0 or (self.fault_duration_s or 0) < 0:
            problems.append("sim.fault_delay_ms, sim.fault_start_s and sim.fault_duration_s must be >= 0")
        if not 0 <= self.dropout_probability < 1:
            problems.append(f"sim.dropout_probability must be in [0, 1) (got {self.dropout_probability})")
        if problems:
            raise ConfigError("; ".join(problems))


class FakeJointDevice(JointDevice):
    """Kinematic and instantaneous: the measured position is the last target, stamped when read."""

    def __init__(self, initial_positions: np.ndarray):
        super().__init__(initial_positions)
        self._positions = self._initial.copy()

    def connect(self) -> None:
        self._positions = self._initial.copy()

    def disconnect(self) -> None:
        pass

    def read(self) -> JointState:
        return JointState(self._positions.copy(), np.zeros(self.dof), now_ns())

    def command(self, positions: np.ndarray) -> None:
        self._positions = np.asarray(positions, dtype=float).copy()


# Reported measurements kept for read_nearest: enough to cover a camera frame interval at any feedback rate.
_REPORTED_HISTORY = 64


class LatentJointDevice(JointDevice):
    """A simulated device as its driver sees it: a command takes effect latency_ms after it is sent; reads return
    what the device last published (a real driver's cache), read_nearest the published measurement closest in time.
    Subclasses step the device: _take_due() for the command in force, _publish() for each measurement. Commands are
    stamped on `clock` (the world's, for a device in a lockstep world)."""

    def __init__(self, initial_positions: np.ndarray, latency_ms: float, clock: Clock = MONOTONIC):
        super().__init__(initial_positions)
        self.latency_ms = latency_ms
        self.clock = clock
        self._lock = threading.Lock()
        self._pending: deque[tuple[int, np.ndarray]] = deque()  # (apply at, target)
        self._published = JointState(self._initial.copy(), np.zeros(self.dof), clock.now_ns())
        self._reported: deque[JointState] = deque(maxlen=_REPORTED_HISTORY)

    def read(self) -> JointState:
        with self._lock:
            return self._published

    def read_nearest(self, capture_ns: int) -> JointState:
        with self._lock:
            if not self._reported:
                return self._published
            return min(self._reported, key=lambda state: abs(state.capture_ns - capture_ns))

    def command(self, positions: np.ndarray) -> None:
        apply_at = self.clock.now_ns() + int(self.latency_ms * 1e6)
        with self._lock:
            self._pending.append((apply_at, np.asarray(positions, dtype=float).copy()))

    def forget_history(self) -> None:
        """Drop the commands in flight and the measurements reported so far (a new episode starts)."""
        with self._lock:
            self._pending.clear()
            self._reported.clear()

    def _take_due(self, tick_ns: int) -> np.ndarray | None:
        """The newest target whose latency has elapsed by tick_ns, or None (the caller holds the lock)."""
        target = None
        while self._pending and self._pending[0][0] <= tick_ns:
            target = self._pending.popleft()[1]
        return target

    def _publish(self, state: JointState) -> None:
        """The caller holds the lock."""
        if state is not self._published:
            self._published = state
            self._reported.append(state)


class FirstOrderJointDevice(LatentJointDevice):
    """A device simulated in a background thread at its feedback rate.

    Each tick it applies commands whose latency has elapsed, moves every joint toward its target with first-order
    dynamics capped at the velocity limits, and publishes a noisy measurement stamped with the tick time, unless that
    message is dropped. Reads return the last published measurement, as a real driver's cache would.
    """

    def __init__(self, initial_positions: np.ndarray, velocity_limits: np.ndarray, config: SimDynamicsConfig,
                 feedback_hz: float):
        """feedback_hz is the device kind's rate, used unless config.feedback_hz is set."""
        config.validate()
        super().__init__(initial_positions, config.latency_ms)
        self.config = config
        self.feedback_hz = config.feedback_hz or feedback_hz
        self._max_speed = np.asarray(velocity_limits, dtype=float) * config.speed_scale
        self._rng = np.random.default_rng(config.seed)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._true_positions = self._initial.copy()
        self._target = self._initial.copy()
        self._history: deque[JointState] = deque()  # recent measurements, for an injected delay
        self._connected_ns = now_ns()
        self._embedded_tick_ns: int | None = None  # connect_embedded(): the dynamics' last step
        self._embedded_lock = threading.Lock()

    def fault_active(self, at_ns: int) -> bool:
        config = self.config
        elapsed_s = (at_ns - self._connected_ns) / 1e9
        in_window = elapsed_s >= config.fault_start_s and (
            config.fault_duration_s is None or elapsed_s < config.fault_start_s + config.fault_duration_s)
        return in_window and (config.fault_freeze or config.fault_delay_ms > 0)

    def connect(self) -> None:
        self._connected_ns = now_ns()
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="sim-joint-device", daemon=True)
        self._thread.start()

    def connect_embedded(self) -> None:
        """Run with no thread of its own: every read first advances the dynamics to the present in one step. For
        the wire-protocol simulators, which read it from their own loops: one thread fewer waking at the feedback
        rate in a process that stands in for hardware."""
        self._connected_ns = self._embedded_tick_ns = now_ns()

    def disconnect(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1.0)
            self._thread = None

    def read(self) -> JointState:
        self._advance_embedded()
        return super().read()

    def read_nearest(self, capture_ns: int) -> JointState:
        self._advance_embedded()
        return super().read_nearest(capture_ns)

    def _advance_embedded(self) -> None:
        if self._embedded_tick_ns is None:
            return
        with self._embedded_lock:
            tick = now_ns()
            if tick > self._embedded_tick_ns:
                self._step((tick - self._embedded_tick_ns) * 1e-9, tick)
                self._embedded_tick_ns = tick

    def _run(self) -> None:
        period_ns = int(1e9 / self.feedback_hz)
        next_tick = now_ns()
        last_tick = next_tick
        while not self._stop.is_set():
            tick = now_ns()
            self._step((tick - last_tick) * 1e-9, tick)
            last_tick = tick
            next_tick += period_ns
            delay = (next_tick - now_ns()) * 1e-9
            if delay > 0:
                self._stop.wait(delay)
            else:  # fell behind (loaded machine): skip missed ticks rather than burst
                next_tick = now_ns()

    def _step(self, dt_s: float, tick_ns: int) -> None:
        with self._lock:
            due = self._take_due(tick_ns)
            if due is not None:
                self._target = due
            previous = self._true_positions
            desired_velocity = (self._target - previous) / self.config.time_constant_s
            velocity = np.clip(desired_velocity, -self._max_speed, self._max_speed)
            step = velocity * dt_s
            # never overshoot the target, whatever the tick length
            overshoot = np.abs(step) > np.abs(self._target - previous)
            step[overshoot] = (self._target - previous)[overshoot]
            self._true_positions = previous + step
            noise = self._rng.normal(0.0, self.config.noise_std, self.dof) if self.config.noise_std else 0.0
            measured_velocity = step / dt_s if dt_s > 0 else np.zeros(self.dof)
            measurement = JointState(self._true_positions + noise, measured_velocity, tick_ns)
            self._history.append(measurement)
            keep_ns = tick_ns - int(self.config.fault_delay_ms * 1e6)
            while len(self._history) > 1 and self._history[1].capture_ns <= keep_ns:
                self._history.popleft()
            if self._rng.random() < self.config.dropout_probability:
                return
            if not self.fault_active(tick_ns):
                self._publish(measurement)
            elif not self.config.fault_freeze:
                self._publish(self._history[0])  # the newest measurement at least fault_delay_ms old


def build_fake(part, sim: SimDynamicsConfig, real) -> JointDevice:
    """The `fake` backend for one rig part."""
    return FakeJointDevice(part.home)


def build_sim(part, sim: SimDynamicsConfig, real) -> JointDevice:
    """The `sim` backend for one rig part; injected faults apply to the part named sim.fault_source only."""
    if part.role != sim.fault_source:
        sim = replace(sim, fault_delay_ms=0.0, fault_freeze=False)
    return FirstOrderJointDevice(part.home, part.velocity_limits, sim, DEFAULT_FEEDBACK_HZ[part.role])
