"""The hand shapes of grasps that hold, per hand model: where the fingers wait (preshape) and where they close to
(closed: beyond contact, the servos' force limits set the grip). Measured on the grasp rig (benchmarks/grasp_grid.py)
and written in each hand's descriptor (configs/hands/<hand>.yaml, `grasps`); where the hand meets the object for each
task, and why these shapes, is in world/grasps.py.

A controller's analog input closes the hand along the operator's chosen grasp (hand_method "analog", the control
config's `hand_grasps`): `grasp_paths` turns the chosen names into this hand's paths, from the preshape at 0 to
closed at 1, and the retargeter's analog method (retargeting/analog.py) closes the hand along them. "fist" is the
one every hand has: open hand at 0, a fist at 1, through the hand's joint map.

Keypoint retargeting makes the same grasps when the operator's hand makes the person's grasp each answers (`human`:
operator/object_grasps.py; `grasp_anchors`, retargeting/grasp_anchors.py): the operator's own grasp, recorded by
teledex-calibrate-hand, or the hand model's.
"""

import logging
from functools import cache

import numpy as np

from ..errors import ConfigError
from ..kinematics.catalogue import resolve_urdf
from ..kinematics.hands import HANDS, GraspShape
from ..kinematics.model import KinematicModel
from ..operator.object_grasps import human_grasps
from ..retargeting.analog import FIST, GraspPath
from ..retargeting.grasp_anchors import GraspAnchors, GraspAnchorSettings, GraspTemplate
from ..retargeting.joint_mapping import joint_map_path, load_joint_map

logger = logging.getLogger(__name__)


def _grasp_shapes() -> dict[str, dict[str, GraspShape]]:
    """Every hand's measured grasps, from its descriptor: hand model -> grasp name -> its shapes."""
    for hand in HANDS.values():
        if FIST in hand.grasps:
            raise ConfigError(f"{hand.where('grasps.' + FIST)}: {FIST!r} is every hand's own grasp (open hand to a "
                              "fist, through its joint map); give the measured grasp another name")
    return {name: dict(hand.grasps) for name, hand in HANDS.items() if hand.grasps}


GRASP_SHAPES = _grasp_shapes()
KNOWN_GRASPS = (FIST, *sorted({name for shapes in GRASP_SHAPES.values() for name in shapes}))


@cache
def mirrored_joints(hand_model: str, side: str) -> frozenset[str]:
    """The joints of a `side` hand that turn the other way than the right hand's (the hand's joint maps run them in
    opposite directions: a left thumb's roll, its spreads). The shapes are measured on right hands: a left hand
    makes them with these joints negated. None on a right hand or a hand with one side."""
    if side == "right" or hand_model not in HANDS or not {"right", side} <= set(HANDS[hand_model].urdf):
        return frozenset()
    directions = {}
    for each in ("right", side):
        model = KinematicModel.from_urdf(resolve_urdf(hand_model, each))
        joint_map = load_joint_map(joint_map_path(hand_model, each), model.joint_names, model.lower, model.upper)
        directions[each] = dict(zip(joint_map.joints, joint_map.robot_at_high - joint_map.robot_at_low, strict=True))
    return frozenset(joint for joint, direction in directions[side].items()
                     if direction * directions["right"].get(joint, 0.0) < 0)


def hand_shape(joints: list[str], shape: dict[str, float], lower, upper,
               mirrored: frozenset[str] = frozenset()) -> np.ndarray:
    """Joint targets for a named shape: an exact joint name wins, else the joint's name ending (e.g. mcp_pitch);
    `mirrored` joints (mirrored_joints: a left hand's) take the shape's value negated."""
    q = np.zeros(len(joints))
    for index, joint in enumerate(joints):
        if joint in shape:
            q[index] = shape[joint]
        else:
            for suffix, value in shape.items():
                if joint.endswith(suffix):
                    q[index] = value
        if joint in mirrored:
            q[index] = -q[index]
    return np.clip(q, lower, upper)


def _path(shape: GraspShape, joints: list[str], lower, upper, mirrored: frozenset[str]) -> GraspPath:
    return (hand_shape(joints, shape.preshape, lower, upper, mirrored),
            hand_shape(joints, shape.closed, lower, upper, mirrored))


def grasp_paths(names: list[str], hand_model: str, joints: list[str], lower, upper,
                mirrored: frozenset[str] = frozenset()) -> dict[str, GraspPath | None]:
    """The operator's grasps for this hand, in order: each measured grasp's path (preshape, closed) over `joints`
    (`mirrored`: a left hand's, mirrored_joints), None for the fist. Grasps the hand has no measured shape for are
    left out (said once, in the log)."""
    shapes = GRASP_SHAPES.get(hand_model, {})
    paths: dict[str, GraspPath | None] = {}
    for name in names:
        if name == FIST:
            paths[name] = None
        elif name in shapes:
            paths[name] = _path(shapes[name], joints, lower, upper, mirrored)
    left_out = [name for name in names if name not in paths]
    if left_out:
        logger.info("hand %s has no measured %s grasp shape (benchmarks/grasp_grid.py measures one): choosing "
                    "among %s", hand_model, ", ".join(left_out), ", ".join(paths) or FIST)
    return paths or {FIST: None}


def grasp_anchors(names: list[str], hand_model: str, joints: list[str], lower, upper, side: str,
                  settings: GraspAnchorSettings, templates: dict[str, GraspTemplate] | None = None,
                  mirrored: frozenset[str] = frozenset()) -> GraspAnchors | None:
    """Keypoint retargeting's anchors: each measured grasp among `names` with the person's grasp it answers, from
    `templates` (the operator's own, by kind: a calibration's) or, when None, the hand model's; None when the hand
    has none of them (or only the fist was named). A grasp whose kind the templates lack is left out (logged).
    `side`: the operator's; `mirrored`: the robot hand's mirrored_joints."""
    shapes = GRASP_SHAPES.get(hand_model, {})
    measured = [name for name in names if name in shapes]
    if templates is None:
        model = human_grasps()
        templates = {kind: GraspTemplate.of_model(grasp, side) for kind, grasp in model.items()}
    unrecorded = [name for name in measured if shapes[name].human not in templates]
    if unrecorded:
        kinds = " and ".join(sorted({shapes[name].human for name in unrecorded}))
        logger.warning("%s: the operator's %s is not recorded, so the hand's %s is left to the retargeting "
                       "(teledex-calibrate-hand records an operator's pinch and wrap; --teleop.hand_calibration "
                       "names the operator)", hand_model, kinds, " and ".join(unrecorded))
    measured = [name for name in measured if name not in unrecorded]
    if not measured:
        return None
    paths = {name: _path(shapes[name], joints, lower, upper, mirrored) for name in measured}
    return GraspAnchors(paths, {name: templates[shapes[name].human] for name in measured}, settings)
