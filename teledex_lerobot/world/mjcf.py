"""A rig's URDFs -> MJCF: the robot half of the MuJoCo world.

Our URDFs are kinematic (no meshes, often no inertials), so the physical model is derived from the kinematics:
- collision: a capsule "bone" from each link's origin to each kept child joint's origin, and for a hand an oriented
  box on its palm link spanning the wrist and the finger bases, in axes derived from them (`hand_palm`), whatever
  way the URDF's axes point;
- inertia: from that geometry at a fixed density (MuJoCo's inertiafromgeom), unless the URDF gives an <inertial>;
- joints: every driven joint, with its URDF limits; mimic joints as joints tied by an equality constraint
  (q = multiplier * q_source + offset); moving joints that are neither driven nor mimics are frozen at home;
- actuators: one position servo per driven joint, in the rig's action order, force-limited by the URDF effort and
  critically damped; the world moves each servo's set-point toward its target no faster than the joint's URDF
  velocity limit (the servo's own trajectory generator), so a far target is reached at the rated speed;
- gravity compensation on robot bodies, as the servos' integral action would give on the real hardware.
Robot geoms collide with objects and the table, not with each other (our URDFs carry no self-collision shapes).
"""

import math
import xml.etree.ElementTree as ET
from dataclasses import dataclass

import numpy as np
from scipy.spatial.transform import Rotation

from ..errors import ConfigError
from ..kinematics.urdf import JointLimits, JointSpec, UrdfDescription
from ..rig import Rig, RigPart
from ..robot_body import (
    FINGER_BONE_RADIUS_M,
    WRIST_CAMERA_FOVY_DEG,
    PalmBox,
    PartBody,
    bone_ends_m,
    bone_radius_m,
    children_of,
    hand_palm,
    kept_arm_links,
)

# Collision bits: robot geoms (ROBOT) touch the scene (SCENE: table, objects) but not each other.
ROBOT_CONTYPE, ROBOT_CONAFFINITY = 2, 1
SCENE_CONTYPE, SCENE_CONAFFINITY = 1, 3

ARM_DENSITY_KG_M3 = 1100.0
HAND_DENSITY_KG_M3 = 1100.0
# A body with joints but no geometry gets this much mass (a sphere of SMALL_BODY_RADIUS_M).
SMALL_BODY_MASS_KG = 0.005
SMALL_BODY_RADIUS_M = 0.005
# Servo stiffness: the full URDF effort at this position error.
ARM_FULL_EFFORT_ERROR_RAD = 0.05
HAND_FULL_EFFORT_ERROR_RAD = 0.1
ARM_ARMATURE = 0.05
HAND_ARMATURE = 0.002
MIMIC_SOLREF = "0.005 1"  # stiff coupling (the Inspire hand's MuJoCo model uses the same)
# A hand alone follows a mocap target through this weld (stiff, critically damped: a position-controlled arm).
HAND_TARGET_BODY = "hand/target"
HAND_WELD_SOLREF = "0.01 1"
# Hand and object geoms share this MJCF default class: the world's contact model (friction, condim, solref).
GRIP_CLASS = "grip"
# When the arm's first moving joint is this far above its root, the arm hangs from a torso: the table goes below.
TABLE_MOUNTED_MAX_SHOULDER_M = 0.3
TORSO_SHOULDER_ABOVE_TABLE_M = 0.3
# A table-mounted arm stands on a stand at the table's edge, its shoulder this far below the table top, so that a
# hand held level (or a side grasp) near the table is well inside the wrist's joint limits: mounted on the table
# top, the Piper's wrist pitch limit (+-1.22 rad) cannot hold the hand level 8 cm above the table anywhere in the
# workspace (benchmarks/world_reach.py).
TABLE_MOUNTED_SHOULDER_BELOW_TABLE_M = 0.057
# At home the hand keeps this far above the table (a home pose in the table would push on it from the first step).
HOME_HAND_CLEARANCE_M = 0.03


@dataclass(frozen=True)
class ActuatedJoint:
    """One servo: its MJCF joint and actuator names."""

    joint: str
    actuator: str
    velocity_limit: float


def _quat_wxyz(rpy) -> np.ndarray:
    x, y, z, w = Rotation.from_euler("xyz", rpy).as_quat()
    return np.array([w, x, y, z])


def _fmt(values) -> str:
    return " ".join(f"{float(v):.6g}" for v in values)


def _limits(joint: JointSpec) -> JointLimits:
    assert joint.limits is not None, f"moving joint {joint.name} has no limits"  # urdf.py gives every moving joint some
    return joint.limits


def _urdf_inertials(description: UrdfDescription) -> dict[str, ET.Element]:
    """<inertial> elements by link name, where the URDF file has them (with a mass value and an inertia)."""
    try:
        root = ET.parse(description.source).getroot()
    except (OSError, ET.ParseError):
        return {}
    found = {}
    for link in root.findall("link"):
        name, inertial = link.get("name"), link.find("inertial")
        if name is None or inertial is None:
            continue
        mass = inertial.find("mass")
        if mass is not None and mass.get("value") is not None and inertial.find("inertia") is not None:
            found[name] = inertial
    return found


def _inertial_element(inertial: ET.Element) -> ET.Element:
    """An MJCF <inertial> from a URDF one that _urdf_inertials kept."""
    origin = inertial.find("origin")
    xyz = [float(v) for v in (origin.get("xyz", "0 0 0") if origin is not None else "0 0 0").split()]
    rpy = [float(v) for v in (origin.get("rpy", "0 0 0") if origin is not None else "0 0 0").split()]
    mass_element, inertia = inertial.find("mass"), inertial.find("inertia")
    assert mass_element is not None and inertia is not None  # _urdf_inertials keeps only inertials with both
    mass = max(float(mass_element.attrib["value"]), 1e-4)
    get = lambda key: float(inertia.get(key, 0.0))  # noqa: E731
    tensor = np.array([[get("ixx"), get("ixy"), get("ixz")], [get("ixy"), get("iyy"), get("iyz")],
                       [get("ixz"), get("iyz"), get("izz")]])
    rotation = Rotation.from_euler("xyz", rpy).as_matrix()
    tensor = rotation @ tensor @ rotation.T  # into the link frame: MuJoCo takes fullinertia without a rotation
    tensor[np.diag_indices(3)] = np.maximum(np.diag(tensor), 1e-7)
    moments, axes = np.linalg.eigh(tensor)
    if moments[2] > moments[0] + moments[1]:
        # Vendor files round small moments so that A + B < C, which no body has and MuJoCo rejects: raise the two
        # smaller ones (in proportion) until they sum to the largest.
        moments[:2] *= moments[2] * (1 + 1e-6) / max(moments[0] + moments[1], 1e-12)
        tensor = axes @ np.diag(moments) @ axes.T
    full = [tensor[0, 0], tensor[1, 1], tensor[2, 2], tensor[0, 1], tensor[0, 2], tensor[1, 2]]
    return ET.Element("inertial", pos=_fmt(xyz), mass=f"{mass:.6g}", fullinertia=_fmt(full))


class PartBuilder:
    """Emits one rig part's body tree under a parent MJCF element, with prefixed names ("arm/", "hand/"; in a world of
    several rigs the rig's name first: "left/arm/")."""

    def __init__(self, part: RigPart, kept_links: set[str] | None = None, rig_prefix: str = ""):
        self.part = part
        self.prefix = f"{rig_prefix}{part.role}/"
        self.description = part.model.description
        self.children = children_of(self.description)
        self.kept_links = kept_links
        self.inertials = _urdf_inertials(self.description)
        self.driven = set(part.joints)
        self.home_by_joint = dict(zip(part.model.joint_names, part.home_full, strict=True))
        self.mimics = self.description.resolved_mimics
        self.equalities: list[ET.Element] = []
        self.is_hand = part.role == "hand"
        self.root_geoms_collide = self.is_hand
        self.palm = hand_palm(part.model, part.spec.side) if self.is_hand else None

    def name(self, urdf_name: str) -> str:
        return self.prefix + urdf_name

    def build(self, parent: ET.Element, pos=(0, 0, 0), quat=(1, 0, 0, 0)) -> ET.Element:
        root = self.description.root_link
        body = ET.SubElement(parent, "body", name=self.name(root), pos=_fmt(pos), quat=_fmt(quat))
        self._fill(body, root, is_root=True)
        return body

    def _kept(self, joint: JointSpec) -> bool:
        return self.kept_links is None or joint.child in self.kept_links

    def _fill(self, body: ET.Element, link: str, is_root: bool = False) -> None:
        kept = [joint for joint in self.children[link] if self._kept(joint)]
        has_geom = self._geoms(body, link, kept, is_root)
        if link in self.inertials:
            body.insert(0, _inertial_element(self.inertials[link]))
        elif not has_geom:
            body.insert(0, ET.Element("inertial", pos="0 0 0", mass=f"{SMALL_BODY_MASS_KG}",
                                      diaginertia=_fmt([0.4 * SMALL_BODY_MASS_KG * SMALL_BODY_RADIUS_M**2] * 3)))
        for joint in kept:
            child = self._child_body(body, joint)
            self._fill(child, joint.child)

    def _child_body(self, body: ET.Element, joint: JointSpec) -> ET.Element:
        rotation = _quat_wxyz(joint.origin_rpy)
        position = np.asarray(joint.origin_xyz, dtype=float)
        child = ET.SubElement(body, "body", name=self.name(joint.child), pos=_fmt(position), quat=_fmt(rotation))
        if not joint.is_moving:
            return child
        driven = joint.name in self.driven
        mimic = self.mimics.get(joint.name)
        if driven or (mimic is not None and mimic.joint in self.driven):
            kind = "slide" if joint.type == "prismatic" else "hinge"
            limits = _limits(joint)
            attributes = {"name": self.name(joint.name), "type": kind, "axis": _fmt(joint.axis),
                          "armature": f"{HAND_ARMATURE if self.is_hand else ARM_ARMATURE}"}
            if math.isfinite(limits.lower) and math.isfinite(limits.upper):
                attributes["range"] = _fmt([limits.lower, limits.upper])
            ET.SubElement(child, "joint", attributes)
            if mimic is not None:
                self.equalities.append(ET.Element(
                    "joint", joint1=self.name(joint.name), joint2=self.name(mimic.joint),
                    polycoef=_fmt([mimic.offset, mimic.multiplier, 0, 0, 0]), solref=MIMIC_SOLREF))
        else:
            # Not driven (e.g. the Piper gripper under a hand): frozen at its home value.
            value = self.home_by_joint.get(joint.name)
            if value is None and mimic is not None:
                value = mimic.multiplier * self.home_by_joint.get(mimic.joint, 0.0) + mimic.offset
            value = value or 0.0
            axis = np.asarray(joint.axis, dtype=float)
            if joint.type == "prismatic":
                child.set("pos", _fmt(position + Rotation.from_quat(np.roll(rotation, -1)).apply(axis * value)))
            else:
                frozen = Rotation.from_quat(np.roll(rotation, -1)) * Rotation.from_rotvec(axis * value)
                x, y, z, w = frozen.as_quat()
                child.set("quat", _fmt([w, x, y, z]))
        return child

    def _geoms(self, body: ET.Element, link: str, kept: list[JointSpec], is_root: bool) -> bool:
        contact = ({"contype": str(ROBOT_CONTYPE), "conaffinity": str(ROBOT_CONAFFINITY)}
                   if (not is_root or self.root_geoms_collide) else {"contype": "0", "conaffinity": "0"})
        density = HAND_DENSITY_KG_M3 if self.is_hand else ARM_DENSITY_KG_M3
        ends = bone_ends_m(kept)
        if self.palm is not None and link == self.palm.link:
            self._palm(body, self.palm, contact, density)
            return True
        added = False
        for index, end in enumerate(ends):
            radius = bone_radius_m(self.part.role, float(np.linalg.norm(end)))
            extra = {"class": GRIP_CLASS} if self.is_hand else {}
            ET.SubElement(body, "geom", {**contact, **extra}, name=f"{self.name(link)}/bone{index}", type="capsule",
                          fromto=_fmt([0, 0, 0, *end]), size=f"{radius}", density=f"{density}",
                          rgba=("0.95 0.6 0.3 1" if self.is_hand else "0.75 0.78 0.85 1"))
            added = True
        return added

    def _palm(self, body: ET.Element, palm: PalmBox, contact: dict[str, str], density: float) -> None:
        """The palm box replaces the palm link's bones."""
        attributes = {"class": GRIP_CLASS, **contact}
        if not np.allclose(palm.rotation, np.eye(3), atol=1e-9):
            x, y, z, w = Rotation.from_matrix(palm.rotation).as_quat()
            attributes["quat"] = _fmt([w, x, y, z])
        ET.SubElement(body, "geom", attributes, name=f"{self.name('palm')}", type="box", pos=_fmt(palm.centre_m),
                      size=_fmt(palm.half_size_m), density=f"{density}", rgba="0.95 0.6 0.3 1")


def add_wrist_camera(worldbody: ET.Element, rig: Rig, name: str, baseline_m: float = 0.0, rig_prefix: str = "") -> None:
    """A camera on the hand's wrist (robot_body.PartBody.wrist_camera_pose), moving with the hand; a stereo pair
    baseline_m apart (its ipd, see world.build_world_xml), or one camera (0). rig_prefix: the rig's in a world of
    several ("left/")."""
    hand = rig.parts.get("hand")
    if hand is None:
        raise ConfigError(f"Camera {name!r} has the wrist view, but the rig has no hand to mount it on; choose a fixed "
                         "view (top, front, side, oblique)")
    pose = PartBody(hand, None).wrist_camera_pose()
    body = worldbody.find(f".//body[@name='{rig_prefix}hand/{hand.model.description.root_link}']")
    assert body is not None, "add_robot emits the hand before its wrist camera"
    right, up = pose[:3, 0], -pose[:3, 1]  # MuJoCo cameras look along their -z with y up
    ET.SubElement(body, "camera", name=name, pos=_fmt(pose[:3, 3]), xyaxes=_fmt([*right, *up]),
                  fovy=f"{WRIST_CAMERA_FOVY_DEG}", ipd=repr(float(baseline_m)))


def arm_base_height_m(rig: Rig) -> float:
    """Height of the arm's root link relative to the table top: a table-mounted arm stands at the table's edge
    with its shoulder TABLE_MOUNTED_SHOULDER_BELOW_TABLE_M below the top; a torso-mounted arm (shoulder far above
    the root) is placed so that the shoulder sits TORSO_SHOULDER_ABOVE_TABLE_M above it. Either is raised as far as
    needed for the hand at home to clear the table by HOME_HAND_CLEARANCE_M (the A7 at home reaches down in front
    of its torso)."""
    arm = rig.parts.get("arm")
    if arm is None:
        return 0.0
    first = next(j for j in arm.model.description.joints if j.is_moving)
    shoulder = arm.model.frame_pose(arm.home_full, first.child)[2, 3]
    if shoulder <= TABLE_MOUNTED_MAX_SHOULDER_M:
        height = -TABLE_MOUNTED_SHOULDER_BELOW_TABLE_M - shoulder
    else:
        height = TORSO_SHOULDER_ABOVE_TABLE_M - shoulder
    home = {role: part.home for role, part in rig.parts.items()}
    hand_points = [segments.reshape(-1, 3) for role, segments in rig.drawing_segments(home) if role == "hand"]
    if hand_points:
        lowest_m = float(np.concatenate(hand_points)[:, 2].min()) - FINGER_BONE_RADIUS_M
        height = max(height, HOME_HAND_CLEARANCE_M - lowest_m)
    return height


def actuator_gains(part: RigPart) -> list[tuple[float, float]]:
    """(kp, force limit) per driven joint: full URDF effort at a fixed position error."""
    error = HAND_FULL_EFFORT_ERROR_RAD if part.role == "hand" else ARM_FULL_EFFORT_ERROR_RAD
    efforts = {j.name: _limits(j).effort for j in part.model.description.actuated_joints}
    gains = []
    for joint in part.joints:
        effort = efforts[joint]
        if not math.isfinite(effort) or effort <= 0:
            effort = 2.0 if part.role == "hand" else 30.0
        gains.append((effort / error, effort))
    return gains


def add_robot(worldbody: ET.Element, actuators: ET.Element, equality: ET.Element, rig: Rig,
              base_pos_m=(0.0, 0.0, 0.0), free_hand_pose: np.ndarray | None = None, rig_prefix: str = "",
              base_yaw_rad: float = 0.0) -> list[ActuatedJoint]:
    """Emit the rig's bodies (arm at base_pos_m turned base_yaw_rad about the vertical, hand on its mount; a hand
    alone at free_hand_pose, a 4x4 pose, on a free joint welded to a mocap body "hand/target": a stiff arm that
    follows the target), its mimic equalities and one actuator per driven joint in action order; every name starts
    with rig_prefix (a world of several rigs: "left/"). (A hand that is itself a mocap body would be teleported with
    zero velocity, and friction, a velocity constraint, would then pin whatever it touches in place.)"""
    builders: dict[str, PartBuilder] = {}
    arm, hand = rig.parts.get("arm"), rig.parts.get("hand")
    if arm is not None:
        builders["arm"] = PartBuilder(arm, kept_arm_links(rig), rig_prefix)
        arm_root = builders["arm"].build(worldbody, pos=base_pos_m,
                                         quat=(np.cos(base_yaw_rad / 2), 0.0, 0.0, np.sin(base_yaw_rad / 2)))
    if hand is not None:
        builders["hand"] = PartBuilder(hand, rig_prefix=rig_prefix)
        mount = rig.hand_mount
        if arm is not None and arm.mount_frame is not None:
            mount_body = arm_root.find(f".//body[@name='{builders['arm'].name(arm.mount_frame)}']")
            assert mount_body is not None, "kept_arm_links keeps the path to the mount frame"
            parent = mount_body
        else:  # a hand alone (or on an arm without a mount frame): welded where asked, or at the arm's base
            parent = worldbody if arm is None else arm_root
            if free_hand_pose is not None:
                mount = free_hand_pose
        x, y, z, w = Rotation.from_matrix(mount[:3, :3]).as_quat()
        hand_root = builders["hand"].build(parent, pos=mount[:3, 3], quat=(w, x, y, z))
        if arm is None:
            hand_root.insert(0, ET.Element("freejoint", name=f"{rig_prefix}hand/free"))
            ET.SubElement(worldbody, "body", name=rig_prefix + HAND_TARGET_BODY, mocap="true", pos=_fmt(mount[:3, 3]),
                          quat=_fmt((w, x, y, z)))
            equality.append(ET.Element("weld", body1=rig_prefix + HAND_TARGET_BODY, body2=hand_root.attrib["name"],
                                       solref=HAND_WELD_SOLREF))
    for builder in builders.values():
        for element in builder.equalities:
            equality.append(element)
    servos = []
    for role, part in rig.parts.items():
        builder = builders[role]
        for joint, (kp, force), velocity in zip(part.joints, actuator_gains(part), part.velocity_limits,
                                                strict=True):
            name = builder.name(joint)
            ET.SubElement(actuators, "position", name=f"{name}/servo", joint=name, kp=f"{kp:.6g}",
                          dampratio="1", forcerange=_fmt([-force, force]),
                          ctrlrange=_fmt([part.model.lower[part.model.joint_names.index(joint)],
                                          part.model.upper[part.model.joint_names.index(joint)]]))
            servos.append(ActuatedJoint(name, f"{name}/servo", float(velocity)))
    for body in worldbody.iter("body"):
        if body.get("name", "").startswith((f"{rig_prefix}arm/", f"{rig_prefix}hand/")):
            body.set("gravcomp", "1")
    return servos
