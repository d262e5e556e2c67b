"""The output chain: weighted average -> critically damped smoother -> soft limits -> velocity limit.

Every joint target of one rig part passes through it once per control tick. The velocity limit is taken against the
last command the chain actually sent and the time since the previous tick, so whatever happens upstream (a 1 m jump,
a re-anchor, a state change) and whatever the loop rate, a command moves no joint faster than `max_velocity_rad_s`,
and never out of the soft limits (a start pose outside them is approached at that speed, never left farther out).
"""

from collections import deque

import numpy as np

from .config import OutputChainConfig


class WeightedAverage:
    """Average of the last len(weights) targets, weights oldest .. newest (normalised)."""

    def __init__(self, weights):
        self.weights = np.asarray(weights, dtype=float) / float(np.sum(weights))
        self._history: deque[np.ndarray] = deque(maxlen=len(self.weights))

    def reset(self, value: np.ndarray) -> None:
        self._history.clear()
        self._history.extend([np.array(value, dtype=float)] * len(self.weights))

    def __call__(self, target: np.ndarray) -> np.ndarray:
        if not self._history:
            self.reset(target)
        self._history.append(np.array(target, dtype=float))
        return np.tensordot(self.weights, np.array(self._history), axes=1)


class CriticallyDampedSmoother:
    """x'' = omega^2 (u - x) - 2 omega x', advanced exactly for a target u held over each tick (stable at any dt)."""

    def __init__(self, omega_rad_s: float):
        self.omega = float(omega_rad_s)
        self.position: np.ndarray | None = None
        self.velocity: np.ndarray | None = None

    def reset(self, value: np.ndarray) -> None:
        self.position = np.array(value, dtype=float)
        self.velocity = np.zeros_like(self.position)

    def __call__(self, target: np.ndarray, dt_s: float) -> np.ndarray:
        if self.position is None:
            self.reset(target)
        error, velocity, w = self.position - target, self.velocity, self.omega
        decay = np.exp(-w * dt_s)
        coupled = velocity + w * error
        self.position = target + (error + coupled * dt_s) * decay
        self.velocity = (velocity - w * coupled * dt_s) * decay
        return self.position.copy()


class OutputChain:
    """One part's chain. `lower`/`upper` are the model's limits (the one source of truth); the soft limits are
    those shrunk by the configured margin (never past the midpoint)."""

    def __init__(self, lower: np.ndarray, upper: np.ndarray, initial: np.ndarray, config: OutputChainConfig):
        self.config = config
        lower, upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
        margin = np.minimum(config.soft_limit_margin_rad, (upper - lower) / 2)
        self.soft_lower, self.soft_upper = lower + margin, upper - margin
        self.average = WeightedAverage(config.average_weights)
        self.smoother = CriticallyDampedSmoother(config.smoother_omega_rad_s)
        self.last_sent = np.asarray(initial, dtype=float).copy()
        self.hold()

    def hold_at(self, position: np.ndarray) -> np.ndarray:
        """Make `position` (the robot's measured pose) the last command and hold it there."""
        self.last_sent = np.asarray(position, dtype=float).copy()
        return self.hold()

    def hold(self) -> np.ndarray:
        """Send the last command again, and restart the filters there so resuming causes no jump."""
        self.average.reset(self.last_sent)
        self.smoother.reset(self.last_sent)
        return self.last_sent.copy()

    def __call__(self, target: np.ndarray, dt_s: float) -> np.ndarray:
        target = np.asarray(target, dtype=float)
        if not np.all(np.isfinite(target)):
            return self.hold()
        dt_s = min(max(dt_s, 0.0), self.config.max_tick_s)
        smoothed = self.smoother(self.average(target), dt_s)
        limited = np.clip(smoothed, self.soft_lower, self.soft_upper)
        step = self.config.max_velocity_rad_s * dt_s
        self.last_sent = self.last_sent + np.clip(limited - self.last_sent, -step, step)
        return self.last_sent.copy()
