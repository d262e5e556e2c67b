"""The analog method: a controller's analog input (a closure 0..1) closes the hand along the operator's chosen grasp.

A grasp is a joint-space path from its preshape at 0 to closed at 1 (the measured ones per hand model are in
control/hand_grasps.py), or "fist", the one every hand has: open hand at 0, a fist at 1, through the hand's joint
map. A button steps through the grasps, on its press.

Letting go of a pinch is `PostHold`'s (keypoint retargeting's grasp anchors let go the same way).
"""

import logging
from collections.abc import Callable

import numpy as np

from ..operator import poses

logger = logging.getLogger(__name__)
FIST = "fist"
HOLD_CLOSURE = 0.5  # a grip closed this far holds: opening it from here lets go
REGRIP_CLOSURE = 0.05  # the grip closing again by this much (above its lowest since letting go) ends the letting go

GraspPath = tuple[np.ndarray, np.ndarray]  # joint targets at closure 0 (preshape) and 1 (closed)


class PostHold:
    """Letting go of a grasp with a post. A pinch's thumb is a post that the fingers squeeze the object against,
    deflected 0.1 rad off its target while it holds. Opened along the grasp, the fingers leave and the thumb springs
    back, pushing the object off (38 mm in the world, placing the half cube). So when the grip starts to open from a
    hold, the joints the grasp does not move (the post) are held where they are measured; they return to the preshape
    when the grip closes again."""

    def __init__(self):
        self.reset()

    def reset(self) -> None:
        self._closure = 0.0
        self._held: np.ndarray | None = None  # the post's measured pose, held while letting go
        self._lowest = 0.0  # the lowest closure since letting go began

    def __call__(self, target: np.ndarray, path: GraspPath, closure: float,
                 measured: Callable[[], np.ndarray | None]) -> np.ndarray:
        """`target` on `path` at `closure`, with the post held while letting go; `measured` gives the hand's
        measured joints (None while unknown), read when a hold starts to open."""
        post = np.abs(path[1] - path[0]) < 1e-9
        if post.any():
            if self._held is not None and closure > self._lowest + REGRIP_CLOSURE:
                self._held = None  # gripping again: the post goes back to its place
            elif self._held is None and self._closure >= HOLD_CLOSURE and closure < self._closure - 1e-3:
                hand = measured()
                if hand is not None:
                    self._held, self._lowest = hand[post], closure
            if self._held is not None:
                self._lowest = min(self._lowest, closure)
                target = target.copy()
                target[post] = self._held
        self._closure = closure
        return target


class GraspChoice:
    """The operator's grasps in order (a button steps to the next, on its press) and the hand target of the chosen
    one for a closure 0..1. `paths`: grasp name -> its path, or None for the fist through `joint_map` (canonical
    human angles -> joint targets)."""

    def __init__(self, paths: dict[str, GraspPath | None], joint_map: Callable[[np.ndarray], np.ndarray]):
        def fist(closure: float) -> np.ndarray:
            return joint_map(poses.OPEN_HAND + closure * (poses.FIST - poses.OPEN_HAND))

        self.grasps: dict[str, Callable[[float], np.ndarray]] = {}
        self._paths = {name: path for name, path in paths.items() if path is not None}
        for name, path in paths.items():
            self.grasps[name] = fist if path is None else _along(path)
        self.names = list(self.grasps)
        self.index = 0
        self._pressed = False
        self._post_hold = PostHold()

    @property
    def name(self) -> str:
        return self.names[self.index]

    def select(self, pressed: bool) -> None:
        """The selection button's state this tick: its press steps to the next grasp."""
        if pressed and not self._pressed:
            self.index = (self.index + 1) % len(self.names)
            self._post_hold.reset()
            logger.info("grasp: %s", self.name)
        self._pressed = pressed

    def close(self, closure: float, measured: Callable[[], np.ndarray | None] = lambda: None) -> np.ndarray:
        """The hand target for a closure 0..1; `measured` gives the hand's measured joints (None while unknown),
        read when a hold starts to open."""
        closure = float(np.clip(closure, 0.0, 1.0))
        target = self.grasps[self.name](closure)
        if self.name in self._paths:
            target = self._post_hold(target, self._paths[self.name], closure, measured)
        return target


def _along(path: GraspPath) -> Callable[[float], np.ndarray]:
    """closure 0..1 -> the joint targets that far along `path`."""
    start, end = path
    return lambda closure: start + closure * (end - start)
