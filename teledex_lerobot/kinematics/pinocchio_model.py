"""The one place a `UrdfDescription` becomes a pinocchio model (kinematics only: no inertias, no meshes).

Every moving joint is an independent 1-DoF joint (mimic joints are expanded by the callers through q_full = A q + b,
because pinocchio's own mimic support differs between versions); continuous joints are revolute joints with one
coordinate; fixed joints are folded into placements. Every link below the start link gets a BODY frame of its name.
Built from the description directly, so the URDF file is parsed once and meshes are never looked for.
"""

import numpy as np
import pinocchio as pin
from scipy.spatial.transform import Rotation

from .urdf import UrdfDescription


def build_pinocchio_model(description: UrdfDescription, start_link: str | None = None,
                          start_placement: pin.SE3 | None = None):
    """(model, joint ids by name, link anchors) for the tree below `start_link` (default: the root link).

    `start_placement` places the start link in the model's world frame (default: identity). A link anchor is
    (pinocchio joint the link moves with, the link's placement in that joint's frame); joints above `start_link`
    are not in the model.
    """
    start = description.root_link if start_link is None else start_link
    children: dict[str, list] = {}
    for joint in description.joints:
        children.setdefault(joint.parent, []).append(joint)
    model = pin.Model()
    model.name = description.name
    joint_ids: dict[str, int] = {}
    anchors = {start: (0, pin.SE3.Identity() if start_placement is None else start_placement)}
    stack = [start]
    while stack:
        link = stack.pop()
        parent_id, placement = anchors[link]
        model.addFrame(pin.Frame(link, parent_id, placement, pin.FrameType.BODY))
        for joint in children.get(link, []):
            origin = placement * pin.SE3(Rotation.from_euler("xyz", joint.origin_rpy).as_matrix(),
                                         np.asarray(joint.origin_xyz, dtype=float))
            if joint.is_moving:
                axis = np.asarray(joint.axis, dtype=float)
                joint_model = (pin.JointModelPrismaticUnaligned(axis) if joint.type == "prismatic"
                               else pin.JointModelRevoluteUnaligned(axis))
                joint_ids[joint.name] = model.addJoint(parent_id, joint_model, origin, joint.name)
                anchors[joint.child] = (joint_ids[joint.name], pin.SE3.Identity())
            else:
                anchors[joint.child] = (parent_id, origin)
            stack.append(joint.child)
    return model, joint_ids, anchors
