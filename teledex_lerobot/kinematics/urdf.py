"""URDF file -> `UrdfDescription` (links, joints, limits, resolved mimics), parsed with xml.etree.

Supported joint types: revolute, prismatic, fixed, and continuous. A continuous joint is treated as revolute with
limits [-pi, pi], so every model has one coordinate per moving joint. Floating and planar joints are rejected:
model a free base outside the URDF.

Vendors often leave velocity and effort at 0 or omit them. A missing or non-positive velocity limit becomes
`DEFAULT_VELOCITY_LIMIT` (2 rad/s, 0.1 m/s for prismatic joints: slow enough for a hand or arm we know nothing
about), a missing or non-positive effort becomes inf (nothing here uses effort), and one warning lists the joints
concerned; `UrdfDescription.defaulted_limits` names them. Lower/upper limits of revolute and prismatic joints are
required: a default range could drive a joint into its hard stop.

Each link's <visual> elements are parsed (`VisualSpec`: origin, box, cylinder, sphere or mesh file and scale;
materials are not: the headset page colours the robot by part) for the headset's drawing; mesh files are never
read here (viewer/link_meshes.py loads them). Collision geometry is ignored.

Mimic joints follow q = multiplier * q_source + offset; chains (a mimic of a mimic) are resolved to the actuated
source. Actuated joints are the moving joints without <mimic>, in URDF document order (= command order).
"""

import logging
import math
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from os import PathLike
from pathlib import Path

from .errors import UrdfError

logger = logging.getLogger(__name__)

MOVING_JOINT_TYPES = ("revolute", "continuous", "prismatic")
DEFAULT_VELOCITY_LIMIT = {"revolute": 2.0, "continuous": 2.0, "prismatic": 0.1}  # rad/s, m/s
SUPPORTED_JOINT_TYPES = MOVING_JOINT_TYPES + ("fixed",)
VISUAL_SHAPES = ("box", "cylinder", "sphere", "mesh")


@dataclass(frozen=True)
class JointLimits:
    lower: float  # rad or m
    upper: float
    velocity: float  # rad/s or m/s
    effort: float  # N·m or N


@dataclass(frozen=True)
class Mimic:
    joint: str  # source joint
    multiplier: float = 1.0
    offset: float = 0.0


@dataclass(frozen=True)
class JointSpec:
    name: str
    type: str  # one of SUPPORTED_JOINT_TYPES
    parent: str
    child: str
    origin_xyz: tuple[float, float, float]  # metres, in the parent link frame
    origin_rpy: tuple[float, float, float]  # radians, URDF fixed-axis roll-pitch-yaw
    axis: tuple[float, float, float]  # unit vector in the joint frame (fixed joints: (1, 0, 0), unused)
    limits: JointLimits | None  # None only for fixed joints
    mimic: Mimic | None  # as written in the file (may point at another mimic joint)

    @property
    def is_moving(self) -> bool:
        return self.type != "fixed"


@dataclass(frozen=True)
class VisualSpec:
    """One <visual> of a link, in the link's frame."""

    link: str
    origin_xyz: tuple[float, float, float]  # metres
    origin_rpy: tuple[float, float, float]  # radians, URDF fixed-axis roll-pitch-yaw
    shape: str  # one of VISUAL_SHAPES
    # box: its edge lengths (x, y, z); cylinder: radius, length (along z); sphere: radius; mesh: scale (x, y, z)
    size: tuple[float, ...]
    filename: str = ""  # a mesh's file as written: package://<package>/<path>, file://<path>, or relative to the URDF


@dataclass(frozen=True)
class UrdfDescription:
    name: str
    source: str  # file path, for messages
    links: tuple[str, ...]  # document order
    joints: tuple[JointSpec, ...]  # document order
    root_link: str
    resolved_mimics: dict[str, Mimic]  # mimic joint -> (actuated source, total multiplier, total offset)
    defaulted_limits: tuple[str, ...] = ()  # "<joint>.velocity" / "<joint>.effort" given a default (see above)
    visuals: tuple[VisualSpec, ...] = ()  # document order

    @property
    def actuated_joints(self) -> tuple[JointSpec, ...]:
        return tuple(j for j in self.joints if j.is_moving and j.mimic is None)

    def joint(self, name: str) -> JointSpec:
        for joint in self.joints:
            if joint.name == name:
                return joint
        raise KeyError(name)


def load_urdf(path: str | PathLike) -> UrdfDescription:
    """Read and validate a URDF file. Raises UrdfError."""
    path = Path(path)
    if not path.is_file():
        raise UrdfError(f"URDF file not found: {path}. Check the path (built-in models: "
                        "teledex_lerobot.kinematics.urdf_path(name)).")
    return parse_urdf(path.read_text(encoding="utf-8"), source=str(path))


def parse_urdf(xml_text: str, source: str = "<string>") -> UrdfDescription:
    """Parse and validate URDF text. Raises UrdfError."""
    try:
        root = ET.fromstring(xml_text)
    except ET.ParseError as exc:
        line, column = exc.position
        raise UrdfError(f"Malformed XML in URDF {source} at line {line}, column {column}: {exc}. "
                        "Fix the XML syntax there.") from None
    if root.tag != "robot":
        raise UrdfError(f"URDF {source}: the root element is <{root.tag}>, expected <robot>.")
    robot_name = root.get("name") or Path(source).stem

    links = tuple(_required_attribute(link, "name", source) for link in root.findall("link"))
    _check_unique(links, "link", source)
    joints = tuple(_parse_joint(element, source) for element in root.findall("joint"))
    _check_unique([j.name for j in joints], "joint", source)
    if not any(j.is_moving for j in joints):
        raise UrdfError(f"URDF {source} defines no movable joints (found {len(joints)} fixed). A kinematic model "
                        "needs at least one revolute, continuous or prismatic joint.")
    root_link = _check_tree(links, joints, source)
    defaulted = tuple(f"{element.get('name')}.{key}" for element in root.findall("joint")
                      if element.get("type") in MOVING_JOINT_TYPES for key in ("velocity", "effort")
                      if _limit_missing(element, key))
    if defaulted:
        logger.warning("URDF %s: no positive limit for %s; using %s rad/s (m/s for prismatic joints) for velocity "
                       "and no effort limit. Add <limit velocity=... effort=...> to set them.", source,
                       ", ".join(defaulted), DEFAULT_VELOCITY_LIMIT["revolute"])
    visuals = tuple(_parse_visual(visual, link.get("name", ""), source) for link in root.findall("link")
                    for visual in link.findall("visual"))
    return UrdfDescription(robot_name, source, links, joints, root_link, _resolve_mimics(joints, source), defaulted,
                           visuals)


def _parse_visual(element: ET.Element, link: str, source: str) -> VisualSpec:
    where = f"URDF {source}, link {link!r} <visual>"
    origin = element.find("origin")
    xyz = _vector(origin, "xyz", (0.0, 0.0, 0.0), where)
    rpy = _vector(origin, "rpy", (0.0, 0.0, 0.0), where)
    geometry = element.find("geometry")
    shapes = [] if geometry is None else [child for child in geometry if child.tag in VISUAL_SHAPES]
    if len(shapes) != 1:
        found = "nothing" if geometry is None or len(geometry) == 0 else ", ".join(f"<{c.tag}>" for c in geometry)
        raise UrdfError(f"{where}: its <geometry> must hold one of <box>, <cylinder>, <sphere> or <mesh> (found "
                        f"{found}). Fix the <geometry>, or remove the <visual>.")
    shape = shapes[0]
    where = f"{where} <{shape.tag}>"
    if shape.tag == "mesh":
        scale = _vector(shape, "scale", (1.0, 1.0, 1.0), where)
        return VisualSpec(link, xyz, rpy, "mesh", scale, _required_attribute(shape, "filename", where))
    if shape.tag == "box":
        edges = _vector(shape, "size", (math.nan,) * 3, where)
        if not all(v > 0 for v in edges):  # nan: missing
            raise UrdfError(f"{where}: size must be three positive edge lengths (metres), e.g. size=\"0.1 0.05 0.02\".")
        return VisualSpec(link, xyz, rpy, "box", edges)
    keys = ("radius", "length") if shape.tag == "cylinder" else ("radius",)
    size = tuple(_float(shape, key, math.nan, where) for key in keys)
    if not all(v > 0 for v in size):
        raise UrdfError(f"{where}: {' and '.join(keys)} must be given, positive (metres).")
    return VisualSpec(link, xyz, rpy, shape.tag, size)


def _parse_joint(element: ET.Element, source: str) -> JointSpec:
    name = _required_attribute(element, "name", source)
    where = f"URDF {source}, joint {name!r}"
    joint_type = element.get("type")
    if joint_type in ("floating", "planar"):
        raise UrdfError(f"{where} has type {joint_type!r}, which is not supported. Remove it and model the free "
                        f"base pose outside the URDF (supported types: {', '.join(SUPPORTED_JOINT_TYPES)}).")
    if joint_type not in SUPPORTED_JOINT_TYPES:
        raise UrdfError(f"{where} has type {joint_type!r}; use one of {', '.join(SUPPORTED_JOINT_TYPES)}.")
    parent, child = (_required_attribute(_required_child(element, tag, where), "link", f"{where} <{tag}>")
                     for tag in ("parent", "child"))
    origin = element.find("origin")
    xyz = _vector(origin, "xyz", (0.0, 0.0, 0.0), where)
    rpy = _vector(origin, "rpy", (0.0, 0.0, 0.0), where)
    axis = (1.0, 0.0, 0.0)
    if joint_type != "fixed":
        axis = _unit(_vector(element.find("axis"), "xyz", (1.0, 0.0, 0.0), where), where)
    limits = _parse_limits(element, joint_type, where)
    mimic = None
    mimic_element = element.find("mimic")
    if mimic_element is not None:
        if joint_type == "fixed":
            raise UrdfError(f"{where} is fixed but has a <mimic>; remove the <mimic> or make the joint movable.")
        mimic = Mimic(_required_attribute(mimic_element, "joint", f"{where} <mimic>"),
                      _float(mimic_element, "multiplier", 1.0, where),
                      _float(mimic_element, "offset", 0.0, where))
    return JointSpec(name, joint_type, parent, child, xyz, rpy, axis, limits, mimic)


def _parse_limits(element: ET.Element, joint_type: str, where: str) -> JointLimits | None:
    if joint_type == "fixed":
        return None
    limit = element.find("limit")
    velocity = _float(limit, "velocity", 0.0, where) if limit is not None else 0.0
    effort = _float(limit, "effort", 0.0, where) if limit is not None else 0.0
    velocity = velocity if velocity > 0 else DEFAULT_VELOCITY_LIMIT[joint_type]
    effort = effort if effort > 0 else math.inf
    if joint_type == "continuous":
        return JointLimits(-math.pi, math.pi, velocity, effort)
    missing = [key for key in ("lower", "upper") if limit is None or limit.get(key) is None]
    if limit is None or missing:
        raise UrdfError(f"{where} ({joint_type}) is missing limit attribute(s) {', '.join(missing)}. Add "
                        '<limit lower="..." upper="..."/> (radians or metres) to the joint.')
    lower, upper = _float(limit, "lower", math.nan, where), _float(limit, "upper", math.nan, where)  # both present
    if lower > upper:
        raise UrdfError(f"{where} has lower limit {lower} > upper limit {upper}; swap them.")
    return JointLimits(lower, upper, velocity, effort)


def _limit_missing(element: ET.Element, key: str) -> bool:
    limit = element.find("limit")
    text = None if limit is None else limit.get(key)
    try:
        return text is None or float(text) <= 0
    except ValueError:
        return False  # reported by _parse_limits


def _check_tree(links: tuple[str, ...], joints: tuple[JointSpec, ...], source: str) -> str:
    """Every joint connects existing links, each link has at most one parent, and there is exactly one root."""
    known = set(links)
    parent_of: dict[str, str] = {}
    for joint in joints:
        for role, link in (("parent", joint.parent), ("child", joint.child)):
            if link not in known:
                raise UrdfError(f"URDF {source}: joint {joint.name!r} has {role} link {link!r}, which is not "
                                f'defined. Add <link name="{link}"/> or fix the joint\'s <{role} link="...">.')
        if joint.child in parent_of:
            raise UrdfError(f"URDF {source}: link {joint.child!r} is the child of two joints "
                            f"({parent_of[joint.child]!r} and {joint.name!r}); a URDF must be a tree.")
        parent_of[joint.child] = joint.name
    roots = [link for link in links if link not in parent_of]
    if len(roots) != 1:
        raise UrdfError(f"URDF {source} must have exactly one root link (a link that is no joint's child); found "
                        f"{len(roots)}: {roots}. Connect the links with joints to form one tree.")
    return roots[0]


def _resolve_mimics(joints: tuple[JointSpec, ...], source: str) -> dict[str, Mimic]:
    """Mimic joint -> Mimic(actuated source, total multiplier, total offset), following chains."""
    by_name = {joint.name: joint for joint in joints}
    resolved: dict[str, Mimic] = {}
    for joint in joints:
        if joint.mimic is None:
            continue
        multiplier, offset, chain, current = 1.0, 0.0, [joint.name], joint
        while current.mimic is not None:
            target = by_name.get(current.mimic.joint)
            if target is None:
                raise UrdfError(f"URDF {source}: joint {current.name!r} mimics {current.mimic.joint!r}, which does "
                                "not exist. Fix <mimic joint=\"...\"> to name an existing movable joint.")
            if not target.is_moving:
                raise UrdfError(f"URDF {source}: joint {current.name!r} mimics {target.name!r}, which is fixed. "
                                "A mimic must follow a movable joint.")
            if target.name in chain:
                cycle = " -> ".join(chain[chain.index(target.name):] + [target.name])
                raise UrdfError(f"URDF {source}: mimic cycle {cycle}. Remove the <mimic> of one joint in the cycle "
                                "so that it is actuated.")
            # q_current = m * q_target + o, and q_joint = multiplier * q_current + offset.
            multiplier, offset = multiplier * current.mimic.multiplier, multiplier * current.mimic.offset + offset
            chain.append(target.name)
            current = target
        resolved[joint.name] = Mimic(current.name, multiplier, offset)
    return resolved


def _check_unique(names, kind: str, source: str) -> None:
    seen = set()
    for name in names:
        if name in seen:
            raise UrdfError(f"URDF {source} defines {kind} {name!r} twice; {kind} names must be unique.")
        seen.add(name)


def _required_child(element: ET.Element, tag: str, where: str) -> ET.Element:
    child = element.find(tag)
    if child is None:
        raise UrdfError(f"{where} has no <{tag}> element; add <{tag} link=\"...\"/>.")
    return child


def _required_attribute(element: ET.Element, key: str, where: str) -> str:
    value = element.get(key)
    if not value:
        raise UrdfError(f"{where}: <{element.tag}> has no {key!r} attribute; add it.")
    return value


def _float(element: ET.Element, key: str, default: float, where: str) -> float:
    text = element.get(key)
    if text is None:
        return default
    try:
        return float(text)
    except ValueError:
        raise UrdfError(f"{where}: <{element.tag} {key}=\"{text}\"> is not a number.") from None


def _vector(element: ET.Element | None, key: str, default: tuple[float, float, float],
            where: str) -> tuple[float, float, float]:
    text = None if element is None else element.get(key)
    if element is None or text is None:
        return default
    try:
        x, y, z = (float(v) for v in text.split())  # ValueError: not a number, or not three
    except ValueError:
        raise UrdfError(f"{where}: <{element.tag} {key}=\"{text}\"> must be three numbers.") from None
    return x, y, z


def _unit(vector: tuple[float, float, float], where: str) -> tuple[float, float, float]:
    norm = math.sqrt(sum(v * v for v in vector))
    if norm < 1e-9:
        raise UrdfError(f"{where} has a zero <axis>; give a non-zero direction such as xyz=\"0 0 1\".")
    x, y, z = vector
    return x / norm, y / norm, z / norm
