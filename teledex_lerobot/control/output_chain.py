"""The output chain of seed 002: weighted average -> critically damped smoother -> soft limits -> rate limit.

Every joint target of one rig part passes through it once per control tick. The rate limit is taken against the
last command the chain actually sent, so whatever happens upstream (a 1 m jump, a re-anchor, a state change) the
command moves at most `max_step_rad_per_tick` per tick and never leaves the soft limits.
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
        self._history.extend([np.array(value, dtype=float)] * self._history.maxlen)

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
        self.last_sent = np.clip(np.asarray(initial, dtype=float), self.soft_lower, self.soft_upper)
        self.hold()

    def hold(self) -> np.ndarray:
        """Send the last command again, and restart the filters there so resuming causes no jump."""
        self.average.reset(self.last_sent)
        self.smoother.reset(self.last_sent)
        return self.last_sent.copy()

    def __call__(self, target: np.ndarray, dt_s: float) -> np.ndarray:
        target = np.asarray(target, dtype=float)
        if not np.all(np.isfinite(target)):
            return self.hold()
        smoothed = self.smoother(self.average(target), min(max(dt_s, 0.0), self.config.max_tick_s))
        limited = np.clip(smoothed, self.soft_lower, self.soft_upper)
        step = self.config.max_step_rad_per_tick
        self.last_sent = self.last_sent + np.clip(limited - self.last_sent, -step, step)
        return self.last_sent.copy()
