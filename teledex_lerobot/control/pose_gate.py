"""Plausibility of operator poses: a finite but absurd position (1e6 m) or a jump of metres between two samples is
dropped from the frame before anything follows it, and counted.

A dropped pose reads as "tracking lost" downstream: the arm holds and releases its anchor, and re-anchors on the next
plausible pose, so it never swings toward a clamp. A single bad sample costs only itself (the next one is judged
against the last accepted pose); a pose that moved for good (the headset recentred its tracking origin, another
sender) is accepted again once it has stayed consistent with itself for `jump_settle_s`. A new sender (its frames'
sender_id) starts afresh: its poses are not judged against another device's.
"""

import dataclasses
import logging

import numpy as np

from ..inputs.frame import OperatorFrame
from .config import PoseBoundsConfig

logger = logging.getLogger(__name__)


class PoseGate:
    def __init__(self, config: PoseBoundsConfig):
        self.config = config
        self.rejected = 0  # poses dropped (one per pose per frame)
        self._accepted: dict[str, tuple[np.ndarray, int]] = {}  # pose name -> (position, capture_ns)
        self._jumped: dict[str, tuple[np.ndarray, int, int]] = {}  # -> (position, capture_ns, first seen there)
        self._frame: OperatorFrame | None = None
        self._checked: OperatorFrame | None = None
        self._sender_id = 0

    def __call__(self, frame: OperatorFrame | None) -> OperatorFrame | None:
        """The frame without its implausible poses (each named in invalid_devices); the same frame object is
        judged once, however many ticks read it."""
        if frame is None or frame is self._frame:
            return self._checked if frame is not None else None
        if frame.sender_id != self._sender_id:
            self._sender_id = frame.sender_id
            self._accepted.clear()
            self._jumped.clear()
        capture_ns = frame.capture_ns
        assert capture_ns is not None  # None only as the frame's constructor argument ("the arrival time")
        problems = {name: problem for name, pose in frame.poses.items()
                    if (problem := self._problem(name, np.asarray(pose[:3], dtype=float), capture_ns))}
        checked = frame
        if problems:
            self.rejected += len(problems)
            if self.rejected == len(problems) or self.rejected % 1000 < len(problems):
                logger.warning("Dropped implausible operator poses (%d so far): %s", self.rejected,
                               "; ".join(f"{name}: {problem}" for name, problem in problems.items()))
            checked = dataclasses.replace(
                frame, poses={name: pose for name, pose in frame.poses.items() if name not in problems},
                invalid_devices={**frame.invalid_devices, **problems})
        self._frame, self._checked = frame, checked
        return checked

    def _problem(self, name: str, position: np.ndarray, capture_ns: int) -> str | None:
        c = self.config
        distance = float(np.linalg.norm(position))
        if distance > c.max_distance_m:
            return (f"implausible: {distance:.3g} m from the tracking origin (pose_bounds.max_distance_m "
                    f"{c.max_distance_m:g})")
        accepted = self._accepted.get(name)
        if accepted is not None:
            moved = float(np.linalg.norm(position - accepted[0]))
            if moved > self._reach(accepted[1], capture_ns):
                if not self._settled(name, position, capture_ns):
                    return (f"implausible: jumped {moved:.3g} m in {max(capture_ns - accepted[1], 0) / 1e6:.0f} ms "
                            f"(pose_bounds.max_speed_m_s {c.max_speed_m_s:g})")
                logger.info("%s: accepted again %.2f m from where it was, after it stayed there %.0f ms", name, moved,
                            c.jump_settle_s * 1e3)
        self._accepted[name] = (position, capture_ns)
        self._jumped.pop(name, None)
        return None

    def _reach(self, since_ns: int, capture_ns: int) -> float:
        """How far a pose can plausibly move between two captures."""
        return self.config.max_speed_m_s * max(capture_ns - since_ns, 0) / 1e9 + self.config.jump_tolerance_m

    def _settled(self, name: str, position: np.ndarray, capture_ns: int) -> bool:
        """Whether a pose away from the accepted one has stayed consistent with itself for jump_settle_s."""
        jumped = self._jumped.get(name)
        if jumped is None or np.linalg.norm(position - jumped[0]) > self._reach(jumped[1], capture_ns):
            self._jumped[name] = (position, capture_ns, capture_ns)
            return self.config.jump_settle_s == 0
        self._jumped[name] = (position, capture_ns, jumped[2])
        return capture_ns - jumped[2] >= self.config.jump_settle_s * 1e9
