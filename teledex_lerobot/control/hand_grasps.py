"""The hand shapes of grasps that hold, per hand model: where the fingers wait (preshape) and where they close to
(closed: beyond contact, the servos' force limits set the grip). Measured on the grasp rig (benchmarks/grasp_grid.py);
where the hand meets the object for each task, and why these shapes, is in world/grasps.py.

A controller's analog input closes the hand along the operator's chosen grasp (hand_method "analog", the control
config's `hand_grasps`): from the preshape at 0 to closed at 1. "fist" is the one every hand has: open hand at 0,
a fist at 1, through the hand's joint map.

Letting go of a pinch: its thumb is a post that the fingers squeeze the object against, deflected 0.1 rad off its
target while it holds. Opened along the grasp, the fingers leave and the thumb springs back, pushing the object off
(38 mm in the world, placing the half cube). So when the grip starts to open from a hold, the joints the grasp does
not move (the post) are held where they are measured; they return to the preshape when the grip closes again.
"""

import logging
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

logger = logging.getLogger(__name__)
FIST = "fist"


@dataclass(frozen=True)
class GraspShape:
    preshape: dict[str, float]  # joint name (or name ending) -> rad
    closed: dict[str, float]


# O6, level pinch of a 4 x 4 x 2 cm half-cube: the opposed thumb (yaw at its limit) a post, the fingers curl onto it.
# Side wrap of a 6 cm bottle: thumb in the palm plane, the fingers curled round the far side.
# L20 and L10: the O6's strategies with each hand's thumb post (world/grasps.py says how they were found).
_L20_THUMB_POST = {"thumb_cmc_roll": 1.3, "thumb_cmc_yaw": 0.15, "thumb_cmc_pitch": 0.5, "thumb_ip": 0.85}
_L10_THUMB_POST = {"thumb_cmc_roll": -1.01, "thumb_cmc_yaw": 0.22, "thumb_cmc_pitch": 0.65}
GRASP_SHAPES: dict[str, dict[str, GraspShape]] = {
    "linkerhand_o6": {
        "level_pinch": GraspShape({"thumb_cmc_yaw": 1.36, "thumb_cmc_pitch": 0.35, "mcp_pitch": 0.3},
                                  {"thumb_cmc_yaw": 1.36, "thumb_cmc_pitch": 0.35, "mcp_pitch": 0.65}),
        "side_wrap": GraspShape({"thumb_cmc_yaw": 0.0, "thumb_cmc_pitch": 0.0, "mcp_pitch": 0.0},
                                {"thumb_cmc_yaw": 0.0, "thumb_cmc_pitch": 0.0, "mcp_pitch": 1.5}),
    },
    "linkerhand_l20": {
        "level_pinch": GraspShape({**_L20_THUMB_POST, "mcp_pitch": 0.3, "dip": 0.205},
                                  {**_L20_THUMB_POST, "mcp_pitch": 0.65, "dip": 0.445}),
        "side_wrap": GraspShape({"thumb_cmc_roll": 0.0, "thumb_cmc_yaw": 0.15, "thumb_cmc_pitch": 0.0,
                                 "mcp_pitch": 0.0},
                                {"thumb_cmc_roll": 0.0, "thumb_cmc_yaw": 0.15, "thumb_cmc_pitch": 0.0,
                                 "mcp_pitch": 1.4, "dip": 1.02}),
    },
    "linkerhand_l10": {
        "level_pinch": GraspShape({**_L10_THUMB_POST, "mcp_pitch": 0.3}, {**_L10_THUMB_POST, "mcp_pitch": 0.65}),
        "side_wrap": GraspShape({"thumb_cmc_roll": 0.0, "thumb_cmc_yaw": 0.0, "thumb_cmc_pitch": 0.0,
                                 "mcp_pitch": 0.0},
                                {"thumb_cmc_roll": 0.0, "thumb_cmc_yaw": 0.0, "thumb_cmc_pitch": 0.0,
                                 "mcp_pitch": 1.5}),
    },
}
HOLD_CLOSURE = 0.5  # a grip closed this far holds: opening it from here lets go
REGRIP_CLOSURE = 0.05  # the grip closing again by this much (above its lowest since letting go) ends the letting go
KNOWN_GRASPS = (FIST, *sorted({name for shapes in GRASP_SHAPES.values() for name in shapes}))


def hand_shape(joints: list[str], shape: dict[str, float], lower, upper) -> np.ndarray:
    """Joint targets for a named shape: an exact joint name wins, else the joint's name ending (e.g. mcp_pitch)."""
    q = np.zeros(len(joints))
    for index, joint in enumerate(joints):
        if joint in shape:
            q[index] = shape[joint]
        else:
            for suffix, value in shape.items():
                if joint.endswith(suffix):
                    q[index] = value
    return np.clip(q, lower, upper)


class GraspChoice:
    """The operator's grasps in order (a button steps to the next, on its press) and the hand target of the chosen
    one for a closure 0..1. Grasps the hand has no measured shape for are left out (said once, in the log)."""

    def __init__(self, names: list[str], hand_model: str, joints: list[str], lower, upper,
                 fist: Callable[[float], np.ndarray]):
        shapes = GRASP_SHAPES.get(hand_model, {})
        self.grasps: dict[str, Callable[[float], np.ndarray]] = {}
        self._posts: dict[str, np.ndarray] = {}  # per measured grasp: the joints it does not move (a thumb post)
        for name in names:
            if name == FIST:
                self.grasps[name] = fist
            elif name in shapes:
                start, end = (hand_shape(joints, shape, lower, upper)
                              for shape in (shapes[name].preshape, shapes[name].closed))
                self.grasps[name] = lambda closure, a=start, b=end: a + closure * (b - a)
                self._posts[name] = np.abs(end - start) < 1e-9
        left_out = [name for name in names if name not in self.grasps]
        if left_out:
            logger.info("hand %s has no measured %s grasp shape (benchmarks/grasp_grid.py measures one): choosing "
                        "among %s", hand_model, ", ".join(left_out), ", ".join(self.grasps) or FIST)
        if not self.grasps:
            self.grasps[FIST] = fist
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

    def __call__(self, closure: float, measured: Callable[[], np.ndarray | None] = lambda: None) -> np.ndarray:
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
