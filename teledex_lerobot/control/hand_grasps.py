"""The hand shapes of grasps that hold, per hand model: where the fingers wait (preshape) and where they close to
(closed: beyond contact, the servos' force limits set the grip). Measured on the grasp rig (benchmarks/grasp_grid.py);
where the hand meets the object for each task, and why these shapes, is in world/grasps.py.

A controller's analog input closes the hand along the operator's chosen grasp (hand_method "analog", the control
config's `hand_grasps`): `grasp_paths` turns the chosen names into this hand's paths, from the preshape at 0 to
closed at 1, and the retargeter's analog method (retargeting/analog.py) closes the hand along them. "fist" is the
one every hand has: open hand at 0, a fist at 1, through the hand's joint map.

Keypoint retargeting makes the same grasps when the operator's hand makes the person's grasp each answers (`human`:
operator/object_grasps.py; `grasp_anchors`, retargeting/grasp_anchors.py).
"""

import logging
from dataclasses import dataclass

import numpy as np

from ..operator.object_grasps import human_grasps
from ..retargeting.analog import FIST, GraspPath
from ..retargeting.grasp_anchors import GraspAnchors, GraspAnchorSettings

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class GraspShape:
    preshape: dict[str, float]  # joint name (or name ending) -> rad
    closed: dict[str, float]
    human: str  # the person's grasp it answers (operator/object_grasps.py): "pinch" or "wrap"


# O6, level pinch of a 4 x 4 x 2 cm half-cube: the opposed thumb (yaw at its limit) a post, the fingers curl onto it.
# Side wrap of a 6 cm bottle: thumb in the palm plane, the fingers curled round the far side.
# L20 and L10: the O6's strategies with each hand's thumb post (world/grasps.py says how they were found).
_L20_THUMB_POST = {"thumb_cmc_roll": 1.3, "thumb_cmc_yaw": 0.15, "thumb_cmc_pitch": 0.5, "thumb_ip": 0.85}
_L10_THUMB_POST = {"thumb_cmc_roll": -1.01, "thumb_cmc_yaw": 0.22, "thumb_cmc_pitch": 0.65}
GRASP_SHAPES: dict[str, dict[str, GraspShape]] = {
    "linkerhand_o6": {
        "level_pinch": GraspShape({"thumb_cmc_yaw": 1.36, "thumb_cmc_pitch": 0.35, "mcp_pitch": 0.3},
                                  {"thumb_cmc_yaw": 1.36, "thumb_cmc_pitch": 0.35, "mcp_pitch": 0.65}, "pinch"),
        "side_wrap": GraspShape({"thumb_cmc_yaw": 0.0, "thumb_cmc_pitch": 0.0, "mcp_pitch": 0.0},
                                {"thumb_cmc_yaw": 0.0, "thumb_cmc_pitch": 0.0, "mcp_pitch": 1.5}, "wrap"),
    },
    "linkerhand_l20": {
        "level_pinch": GraspShape({**_L20_THUMB_POST, "mcp_pitch": 0.3, "dip": 0.205},
                                  {**_L20_THUMB_POST, "mcp_pitch": 0.65, "dip": 0.445}, "pinch"),
        "side_wrap": GraspShape({"thumb_cmc_roll": 0.0, "thumb_cmc_yaw": 0.15, "thumb_cmc_pitch": 0.0,
                                 "mcp_pitch": 0.0},
                                {"thumb_cmc_roll": 0.0, "thumb_cmc_yaw": 0.15, "thumb_cmc_pitch": 0.0,
                                 "mcp_pitch": 1.4, "dip": 1.02}, "wrap"),
    },
    "linkerhand_l10": {
        "level_pinch": GraspShape({**_L10_THUMB_POST, "mcp_pitch": 0.3}, {**_L10_THUMB_POST, "mcp_pitch": 0.65},
                                  "pinch"),
        "side_wrap": GraspShape({"thumb_cmc_roll": 0.0, "thumb_cmc_yaw": 0.0, "thumb_cmc_pitch": 0.0,
                                 "mcp_pitch": 0.0},
                                {"thumb_cmc_roll": 0.0, "thumb_cmc_yaw": 0.0, "thumb_cmc_pitch": 0.0,
                                 "mcp_pitch": 1.5}, "wrap"),
    },
}
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


def grasp_paths(names: list[str], hand_model: str, joints: list[str], lower, upper) -> dict[str, GraspPath | None]:
    """The operator's grasps for this hand, in order: each measured grasp's path (preshape, closed) over `joints`,
    None for the fist. Grasps the hand has no measured shape for are left out (said once, in the log)."""
    shapes = GRASP_SHAPES.get(hand_model, {})
    paths: dict[str, GraspPath | None] = {}
    for name in names:
        if name == FIST:
            paths[name] = None
        elif name in shapes:
            paths[name] = (hand_shape(joints, shapes[name].preshape, lower, upper),
                           hand_shape(joints, shapes[name].closed, lower, upper))
    left_out = [name for name in names if name not in paths]
    if left_out:
        logger.info("hand %s has no measured %s grasp shape (benchmarks/grasp_grid.py measures one): choosing "
                    "among %s", hand_model, ", ".join(left_out), ", ".join(paths) or FIST)
    return paths or {FIST: None}


def grasp_anchors(names: list[str], hand_model: str, joints: list[str], lower, upper, side: str,
                  settings: GraspAnchorSettings) -> GraspAnchors | None:
    """Keypoint retargeting's anchors: each measured grasp among `names` with the person's grasp it answers; None
    when the hand has none of them (or only the fist was named)."""
    shapes = GRASP_SHAPES.get(hand_model, {})
    measured = [name for name in names if name in shapes]
    if not measured:
        return None
    paths = grasp_paths(measured, hand_model, joints, lower, upper)
    person = human_grasps()
    return GraspAnchors(paths, {name: person[shapes[name].human] for name in measured}, side, settings)
