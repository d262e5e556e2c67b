"""The analog method: a controller's analog input (a closure 0..1) closes the hand along the operator's chosen grasp.

A grasp is a joint-space path from its preshape at 0 to closed at 1 (the measured ones per hand model are in
control/hand_grasps.py), or "fist", the one every hand has: open hand at 0, a fist at 1, through the hand's joint
map. A button steps through the grasps, on its press.

Letting go of a pinch: its thumb is a post that the fingers squeeze the object against, deflected 0.1 rad off its
target while it holds. Opened along the grasp, the fingers leave and the thumb springs back, pushing the object off
(38 mm in the world, placing the half cube). So when the grip starts to open from a hold, the joints the grasp does
not move (the post) are held where they are measured; they return to the preshape when the grip closes again.
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


class GraspChoice:
    """The operator's grasps in order (a button steps to the next, on its press) and the hand target of the chosen
    one for a closure 0..1. `paths`: grasp name -> its path, or None for the fist through `joint_map` (canonical
    human angles -> joint targets)."""

    def __init__(self, paths: dict[str, GraspPath | None], joint_map: Callable[[np.ndarray], np.ndarray]):
        def fist(closure: float) -> np.ndarray:
            return joint_map(poses.OPEN_HAND + closure * (poses.FIST - poses.OPEN_HAND))

        self.grasps: dict[str, Callable[[float], np.ndarray]] = {}
        self._posts: dict[str, np.ndarray] = {}  # per measured grasp: the joints it does not move (a thumb post)
        for name, path in paths.items():
            if path is None:
                self.grasps[name] = fist
            else:
                start, end = path
                self.grasps[name] = lambda closure, a=start, b=end: a + closure * (b - a)
                self._posts[name] = np.abs(end - start) < 1e-9
        self.names = list(self.grasps)
        self.index = 0
        self._pressed = False
        self._closure = 0.0
        self._held_post: np.ndarray | None = None  # the post's measured pose, held while letting go
        self._lowest = 0.0  # the lowest closure since letting go began

    @property
    def name(self) -> str:
        return self.names[self.index]

    def select(self, pressed: bool) -> None:
        """The selection button's state this tick: its press steps to the next grasp."""
        if pressed and not self._pressed:
            self.index = (self.index + 1) % len(self.names)
            self._held_post = None
            logger.info("grasp: %s", self.name)
        self._pressed = pressed

    def close(self, closure: float, measured: Callable[[], np.ndarray | None] = lambda: None) -> np.ndarray:
        """The hand target for a closure 0..1; `measured` gives the hand's measured joints (None while unknown),
        read when a hold starts to open."""
        closure = float(np.clip(closure, 0.0, 1.0))
        target = self.grasps[self.name](closure)
        post = self._posts.get(self.name)
        if post is not None and post.any():
            if self._held_post is not None and closure > self._lowest + REGRIP_CLOSURE:
                self._held_post = None  # gripping again: the post goes back to its place
            elif self._held_post is None and self._closure >= HOLD_CLOSURE and closure < self._closure - 1e-3:
                hand = measured()
                if hand is not None:
                    self._held_post, self._lowest = hand[post], closure
            if self._held_post is not None:
                self._lowest = min(self._lowest, closure)
                target[post] = self._held_post
        self._closure = closure
        return target
