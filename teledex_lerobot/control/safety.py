"""The last filter before a device: joint limits, a per-command step limit, non-finite hold and an emergency hold."""

import logging

import numpy as np

logger = logging.getLogger(__name__)


class JointSafety:
    """Makes a position target safe to send, given the device's measured position.

    - Non-finite targets are never sent: the previous safe target is held and the event counted.
    - Targets are clipped to the model's joint limits (the one source of truth for limits).
    - Each command moves at most `max_step` from the measured position, so a jump in the input becomes a ramp.
    - While the emergency hold is on, the target is the measured position: the device stops where it is.
    """

    def __init__(self, lower: np.ndarray, upper: np.ndarray, max_step: np.ndarray):
        if np.any(np.asarray(max_step) <= 0):
            raise ValueError("max_step must be > 0 for every joint")
        self.lower = np.asarray(lower, dtype=float)
        self.upper = np.asarray(upper, dtype=float)
        self.max_step = np.asarray(max_step, dtype=float)
        self.emergency = False
        self.rejected_non_finite = 0
        self._last_safe: np.ndarray | None = None

    def apply(self, target: np.ndarray, measured: np.ndarray) -> np.ndarray:
        measured = np.clip(measured, self.lower, self.upper)
        if self.emergency:
            safe = measured
        else:
            target = np.asarray(target, dtype=float)
            if not np.all(np.isfinite(target)):
                self.rejected_non_finite += 1
                logger.warning("Non-finite joint target %s rejected; holding the last safe target", target)
                target = measured if self._last_safe is None else self._last_safe
            clipped = np.clip(target, self.lower, self.upper)
            safe = measured + np.clip(clipped - measured, -self.max_step, self.max_step)
        self._last_safe = safe
        return safe
