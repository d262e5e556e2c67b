"""Which robot frames stand for which human keypoints, and where the operator wrist frame sits on the robot hand.

A `HandKeypointLayout` pairs MediaPipe-21 keypoint indices with robot keypoint frames, finger by finger, and places
the operator wrist frame (`teledex_lerobot.operator.hand_model`: origin at the wrist, +z toward the middle-finger
MCP, +y out of the palm face, +x = y × z) on the robot: a point and axes fixed in the *palm link*.

Finger frames come from, in order of preference:
1. a config (`keypoint_frames`);
2. the standard frame names of our URDFs (`{index,middle,ring,pinky}_{mcp,pip,dip,tip}`, `thumb_{cmc,mcp,ip,tip}`);
3. the geometry of the model at its reference pose (zero angles clipped into the limits), never link names or
   numbers: fingertips are the leaves beyond the last moving joint of each branch; the thumb is the finger whose
   tip reaches least far along the hand's axis (the mean finger direction); the other fingers are ordered across
   the palm, from the thumb's base to the far side, by the position of their knuckles along the knuckle line; each
   finger's keypoints are its last three distinct joint centres (knuckle, middle, distal; extra proximal joints
   such as a little-finger metacarpal are skipped) and its tip. A finger whose tip link ends at its last knuckle
   (no link beyond it) gets a tip at an offset: `fingertip_offsets_m` from the config, else 0.8 x its last
   segment's length along that segment (a human distal phalanx is about 0.8 of the middle one).

Palm link: the link below every joint the fingers share (a robot wrist, e.g. Shadow's WRJ1/WRJ2, is not part of the
hand: retargeting holds those joints), i.e. the URDF root when the fingers share no moving joint.

Wrist point: a link origin fixed to the palm 0.5-2.2 middle-finger lengths behind the middle knuckle and within 35
degrees of the fingers' direction: the palm link's or a mount flange's above it, else a fixed leaf below it (a wrist
marker such as the "wrist" frame dex-urdf adds to the Allegro hand). With none (a root at the knuckles), the wrist is
placed a human palm's length (0.97 middle-finger lengths) behind the middle knuckle, with a warning.

Axes (whatever the source of the finger frames): x is the flexion axis of the non-thumb fingers (the mean axis of
each finger's last joint) oriented from the thumb's base across the knuckles, i.e. toward the little finger on a
right hand, reversed on a left hand; z runs from the wrist to the middle knuckle (the convention), split evenly with
the fingers' mean root-to-tip direction where the two agree within 15 degrees (on most hands the knuckle joints sit
nearer the back of the hand than the wrist mount, tilting the wrist line by 3-7 degrees), the wrist line alone where
the fingers rest curled beyond that; both with their x component removed; y = z × x. Fingers are ordered by their
knuckles, not their tips (tips splay; a thumb at rest may lie across the palm). Measured on 15 published human
hands against reference frames (dex-retargeting's, or axes read off the URDF): benchmarks/hand_layouts.py,
docs/retargeting.md.

Self-check (_verify_frame): the inferred frame is read against the hand's own kinematics before use: flexing the
fingers must move their tips toward +y, the thumb's base must sit on the side of the knuckles `side` says (the two
give the file's handedness), and z must lie within 15 degrees of the line from the hand's mount to the middle
finger's root. A contradiction is a one-line ModelError naming the file, the links and the setting (`side`,
`base_rotation`), never a silent flip.
"""

import logging
from dataclasses import dataclass, field

import numpy as np

from ..errors import ConfigError, ModelError
from ..geometry.sides import check_side
from ..kinematics import KinematicModel, UrdfError
from ..operator.hand_model import AVERAGE_ADULT_HAND
from ..operator.keypoints import FINGER_CHAINS, FINGER_NAMES

logger = logging.getLogger(__name__)

# Human keypoint labels per finger, base to tip (MediaPipe order within each finger).
_LABELS = {"thumb": ("cmc", "mcp", "ip", "tip")} | {name: ("mcp", "pip", "dip", "tip") for name in FINGER_NAMES[1:]}
_MERGE_DISTANCE_M = 2e-3  # joint centres closer than this count as one keypoint (e.g. yaw + pitch axes)
_TIP_OFFSET_FRACTION = 0.8  # default tip beyond a last knuckle: this fraction of the last segment's length
_WRIST_DEPTH_FINGERS = (0.5, 2.2)  # a wrist lies this many middle-finger lengths behind the middle knuckle
_WRIST_MAX_TILT_DEG = 35.0  # ... and within this angle of the fingers' direction
_REST_CURL_DEG = 15.0  # fingers' rest direction this far off the wrist line: they rest curled, use the wrist line
# wrist -> middle MCP over the middle finger's length (MCP to tip) on the average adult hand
_HUMAN_PALM_PER_FINGER = float(AVERAGE_ADULT_HAND.finger_mcp_positions_m[1][2]
                               / AVERAGE_ADULT_HAND.bone_lengths_m[2].sum())
_THUMB_REACH_MARGIN_M = 0.01  # the thumb's reach must fall this far short of the next finger's to be certain
_THUMB_SIDE_MARGIN_M = 0.005  # a thumb base this close to the knuckles' middle does not tell the index side
# The frame's z this far off the wrist line from the hand's mount refuses the frame (_verify_frame): the tolerance
# _REST_CURL_DEG already grants the fingers' rest direction; the 47 published and built-in hand files read <= 10
# (LEAP right), the failure it is there for 44 (a mount outside the wrist cone, the fingers' direction used instead).
_SELF_CHECK_MAX_DEG = 15.0
_FLEX_STEP_RAD = 0.05  # the small flexion (rad, or m for a slide) that shows which face the fingers curl toward
TIP_SUFFIX = "#tip"  # a keypoint frame "<link>#tip" is a point at an offset from <link>'s origin


@dataclass(frozen=True)
class FingerFrames:
    name: str  # "thumb", "index", ...
    human_indices: tuple[int, ...]  # MediaPipe indices, base to tip; the last is the fingertip
    frames: tuple[str, ...]  # robot keypoint frames, same order


@dataclass(frozen=True)
class HandKeypointLayout:
    fingers: tuple[FingerFrames, ...]  # thumb first when present, then index..pinky as available
    palm_link: str  # every keypoint is below this link; joints above it are held
    wrist_offset_m: np.ndarray  # (3,) the operator wrist origin, in palm-link coordinates
    base_rotation: np.ndarray  # (3, 3): operator-frame coords = base_rotation @ (palm-link coords − wrist_offset_m)
    source: str  # "config", "standard names" or "geometry"
    frame_offsets_m: dict = field(default_factory=dict)  # "<link>#tip" -> (3,) offset in <link>'s frame
    notes: tuple[str, ...] = ()  # what inference was unsure about (also logged as warnings)

    @property
    def finger_names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fingers)

    @property
    def keypoint_frames(self) -> tuple[str, ...]:
        return tuple(frame for f in self.fingers for frame in f.frames)

    @property
    def human_indices(self) -> tuple[int, ...]:
        return tuple(i for f in self.fingers for i in f.human_indices)

    @property
    def fingertip_frames(self) -> tuple[str, ...]:
        return tuple(f.frames[-1] for f in self.fingers)

    @property
    def has_thumb(self) -> bool:
        return bool(self.fingers) and self.fingers[0].name == "thumb"

    def to_config(self) -> dict:
        """The layout as config entries (what to write to pin a discovered layout down)."""
        return {
            "keypoint_frames": {f.name: {_label(f.name, i): frame.removesuffix(TIP_SUFFIX)
                                         for i, frame in zip(f.human_indices, f.frames)} for f in self.fingers},
            "fingertip_offsets_m": {frame.removesuffix(TIP_SUFFIX): np.round(offset, 6).tolist()
                                    for frame, offset in self.frame_offsets_m.items()},
            "base_rotation": np.round(self.base_rotation, 6).tolist(),
        }


def _label(finger: str, human_index: int) -> str:
    return _LABELS[finger][FINGER_CHAINS[finger].index(human_index)]


def build_layout(model: KinematicModel, side: str, keypoint_frames: dict | None = None, base_rotation=None,
                 fingertip_offsets_m: dict | None = None) -> HandKeypointLayout:
    """The layout of `model` (see the module docstring). Raises UrdfError when it cannot be inferred."""
    check_side(side)
    geometry = _Geometry(model)
    notes: list[str] = []
    offsets = {f"{link}{TIP_SUFFIX}": np.asarray(offset, dtype=float)
               for link, offset in (fingertip_offsets_m or {}).items()}
    if keypoint_frames:
        fingers, source = _fingers_from_config(model, keypoint_frames, offsets), "config"
    elif _has_standard_frames(model):
        fingers, source = _standard_fingers(model), "standard names"
    else:
        fingers, source = _fingers_from_geometry(geometry, offsets, notes), "geometry"
    order = {name: i for i, name in enumerate(FINGER_NAMES)}
    fingers.sort(key=lambda f: order[f.name])
    palm_link = _palm_link(model, fingers)
    geometry.use_palm(palm_link)
    rotation = None
    if base_rotation is not None:
        rotation = np.asarray(base_rotation, dtype=float)
        if rotation.shape != (3, 3) or not np.allclose(rotation @ rotation.T, np.eye(3), atol=1e-4):
            raise ConfigError(f"base_rotation must be a 3x3 rotation matrix (orthonormal rows), got "
                              f"{rotation.tolist()}")
    inferred = rotation is None
    rotation, wrist = _axes_and_wrist(geometry, palm_link, fingers, side, offsets, notes, rotation)
    _verify_frame(geometry, palm_link, fingers, side, rotation, offsets, source, notes, inferred)
    for note in notes:
        logger.warning("%s: %s", model.name, note)
    return HandKeypointLayout(tuple(fingers), palm_link, wrist, rotation, source, offsets, tuple(notes))


def reference_pose(model: KinematicModel) -> np.ndarray:
    """Zero angles clipped into the joint limits: the open hand every URDF convention starts from."""
    return np.clip(np.zeros(len(model.joint_names)), model.lower, model.upper)


class _Geometry:
    """The model at its reference pose: link positions and rotations in root, then palm-link, coordinates."""

    def __init__(self, model: KinematicModel):
        self.model = model
        self.q = reference_pose(model)
        description = model.description
        self.children: dict[str, list] = {}
        for joint in description.joints:
            self.children.setdefault(joint.parent, []).append(joint)
        self.parent_joint = {joint.child: joint for joint in description.joints}
        self._poses = {link: model.frame_pose(self.q, link) for link in model.frame_names}
        self._palm_inverse = np.eye(4)

    def use_palm(self, palm_link: str) -> None:
        self._palm_inverse = np.linalg.inv(self._poses[palm_link])

    def pose(self, link: str) -> np.ndarray:
        return self._palm_inverse @ self._poses[link]

    def position(self, frame: str, offsets: dict | None = None) -> np.ndarray:
        link = frame.removesuffix(TIP_SUFFIX)
        pose = self.pose(link)
        offset = (offsets or {}).get(frame, np.zeros(3)) if frame.endswith(TIP_SUFFIX) else np.zeros(3)
        return pose[:3, :3] @ offset + pose[:3, 3]

    def joint_axis(self, joint) -> np.ndarray:
        """A moving joint's axis in palm coordinates (URDF axes are in the child link's frame)."""
        return self.pose(joint.child)[:3, :3] @ np.asarray(joint.axis)

    def moving_path(self, link: str) -> list:
        """Moving joints from the root down to `link`."""
        path = []
        while link in self.parent_joint:
            joint = self.parent_joint[link]
            if joint.is_moving:
                path.append(joint)
            link = joint.parent
        return path[::-1]

    def has_moving_descendant(self, link: str) -> bool:
        return any(j.is_moving or self.has_moving_descendant(j.child) for j in self.children.get(link, []))


# ---- sources of finger frames ----------------------------------------------------------------------------------

def _fingers_from_config(model: KinematicModel, keypoint_frames: dict, offsets: dict) -> list[FingerFrames]:
    fingers = []
    for name, labelled in keypoint_frames.items():
        if name not in _LABELS:
            raise ConfigError(f"keypoint_frames: unknown finger {name!r}; use {list(_LABELS)}")
        unknown = set(labelled) - set(_LABELS[name])
        if unknown or "tip" not in labelled:
            raise ConfigError(f"keypoint_frames.{name}: labels must be among {_LABELS[name]} and include 'tip'; "
                              f"got {sorted(labelled)}")
        model.require_frames(list(labelled.values()))
        pairs = [(FINGER_CHAINS[name][_LABELS[name].index(label)], labelled[label])
                 for label in _LABELS[name] if label in labelled]
        frames = [frame for _, frame in pairs]
        if f"{frames[-1]}{TIP_SUFFIX}" in offsets:  # the configured tip sits at an offset from its link
            frames[-1] = f"{frames[-1]}{TIP_SUFFIX}"
        fingers.append(FingerFrames(name, tuple(i for i, _ in pairs), tuple(frames)))
    if not fingers:
        raise ConfigError("keypoint_frames is empty; give at least one finger with a 'tip' frame")
    return fingers


def _has_standard_frames(model: KinematicModel) -> bool:
    return all(name in model.frame_names for name in ("thumb_cmc", "thumb_tip", "index_mcp", "index_tip"))


def _standard_fingers(model: KinematicModel) -> list[FingerFrames]:
    fingers = []
    for name in FINGER_NAMES:
        pairs = [(index, f"{name}_{label}") for index, label in zip(FINGER_CHAINS[name], _LABELS[name])
                 if f"{name}_{label}" in model.frame_names]
        if pairs and pairs[-1][1] == f"{name}_tip":
            fingers.append(FingerFrames(name, tuple(i for i, _ in pairs), tuple(f for _, f in pairs)))
    return fingers


def _fingers_from_geometry(geometry: _Geometry, offsets: dict, notes: list[str]) -> list[FingerFrames]:
    """Fingers from the kinematic tree and the reference pose alone (see the module docstring)."""
    model, description = geometry.model, geometry.model.description
    # Candidate tips: leaves past the last moving joint of their branch, the farthest one per last joint.
    tips_by_joint: dict[str, str] = {}
    for link in description.links:
        path = geometry.moving_path(link)
        if geometry.children.get(link) or not path:
            continue
        last = path[-1]
        if geometry.has_moving_descendant(last.child):
            continue  # hangs off a middle phalanx (a sensor or pad), not the end of a finger
        best = tips_by_joint.get(last.name)
        centre = geometry.position(last.child)
        if best is None or (np.linalg.norm(geometry.position(link) - centre)
                            > np.linalg.norm(geometry.position(best) - centre)):
            tips_by_joint[last.name] = link
    tips = list(tips_by_joint.values())
    if not 1 <= len(tips) <= 5:
        raise UrdfError(f"{model.name}: found {len(tips)} fingertip candidates ({tips}); a hand has 1-5 fingers "
                        "(give one hand per URDF). Name them with keypoint_frames in the retargeting config "
                        "(configs/retargeting/default.yaml).")
    paths = {tip: geometry.moving_path(tip) for tip in tips}
    shared = {j.name for a in tips for b in tips if a != b for j in paths[a] if j in paths[b]}
    own = {tip: [j for j in paths[tip] if j.name not in shared] or paths[tip][-1:] for tip in tips}

    # Joint centres (merging coincident ones) and the tip point of every finger.
    chains: dict[str, list[str]] = {}
    for tip in tips:
        centres: list[str] = []
        for joint in own[tip]:
            if centres and np.linalg.norm(geometry.position(joint.child)
                                          - geometry.position(centres[-1])) < _MERGE_DISTANCE_M:
                centres[-1] = joint.child  # same point: keep the deeper link
            else:
                centres.append(joint.child)
        tip_frame = tip
        if np.linalg.norm(geometry.position(tip) - geometry.position(centres[-1])) < _MERGE_DISTANCE_M:
            tip_frame = f"{tip}{TIP_SUFFIX}"  # no link beyond the last knuckle: a tip at an offset from it
            if tip_frame not in offsets:
                offsets[tip_frame] = _default_tip_offset(geometry, centres, tip)
                where = (f"{1e3 * np.linalg.norm(offsets[tip_frame]):.0f} mm beyond it along the last segment"
                         if offsets[tip_frame].any() else "at its origin (a one-joint finger)")
                notes.append(f"{tip} ends at its last knuckle; its fingertip is placed {where} (set "
                             "fingertip_offsets_m in the retargeting config to change it)")
        chains[tip] = centres[-3:] + [tip_frame]

    points = {tip: geometry.position(chains[tip][-1], offsets) for tip in tips}
    knuckles = {tip: geometry.position(chains[tip][0]) for tip in tips}
    # the mean knuckle-to-tip direction; for jaws that meet at one point, the direction from the palm to them
    axis = _unit_or(np.sum([points[tip] - knuckles[tip] for tip in tips], axis=0),
                    np.sum(list(points.values()), axis=0))
    if len(tips) == 1:
        thumb, others = None, tips
    else:
        reach = {tip: float(points[tip] @ axis) for tip in tips}
        ranked = sorted(tips, key=reach.__getitem__)
        thumb = ranked[0]
        if reach[ranked[1]] - reach[thumb] < _THUMB_REACH_MARGIN_M:
            notes.append(f"cannot tell the thumb apart by reach ({ranked[0]} and {ranked[1]} reach within "
                         f"{1e3 * (reach[ranked[1]] - reach[thumb]):.0f} mm); took {thumb}. Pin it down with "
                         "keypoint_frames in the retargeting config if that is wrong")
        rest = [t for t in tips if t != thumb]
        # Across the palm by the knuckles, signed away from the thumb's base: tips splay and a thumb at rest may
        # lie across the palm, knuckles and the thumb's base do not move.
        thumb_base = geometry.position(own[thumb][0].child)
        across = _across_direction(np.array([knuckles[t] for t in rest]), [thumb_base, points[thumb]], axis,
                                   geometry.joint_axis(own[rest[0]][-1]))
        if abs(across @ (np.mean([knuckles[t] for t in rest], axis=0) - thumb_base)) < _THUMB_SIDE_MARGIN_M:
            notes.append(f"the thumb's base ({thumb}) sits mid-way across the knuckles, so which side is the index "
                         "finger's comes from where its tip rests. Pin it down with keypoint_frames in the retargeting "
                         "config if that is wrong")
        others = sorted(rest, key=lambda t: float(knuckles[t] @ across))
        by_tips = sorted(rest, key=lambda t: float(points[t] @ across))
        if by_tips != others:
            notes.append(f"the fingers' order across the palm differs by knuckles ({', '.join(others)}) and by tips "
                         f"({', '.join(by_tips)}); took the knuckles'. Pin it down with keypoint_frames in the "
                         "retargeting config if that is wrong")
    names = (["thumb"] if thumb else []) + list(FINGER_NAMES[1:1 + len(others)])
    fingers = []
    for name, tip in zip(names, ([thumb] if thumb else []) + others):
        frames = chains[tip]
        human = FINGER_CHAINS[name]
        fingers.append(FingerFrames(name, human[:len(frames) - 1] + (human[-1],), tuple(frames)))
    return fingers


def _default_tip_offset(geometry: _Geometry, centres: list[str], tip_link: str) -> np.ndarray:
    """0.8 x the last segment, continuing it, in the tip link's frame; none for a one-joint finger (a gripper jaw:
    its tip is then the link origin)."""
    if len(centres) < 2:
        return np.zeros(3)
    segment = geometry.position(centres[-1]) - geometry.position(centres[-2])
    rotation = geometry.pose(tip_link)[:3, :3]
    return rotation.T @ (_TIP_OFFSET_FRACTION * segment)


def _across_direction(finger_points: np.ndarray, thumb_points: list[np.ndarray], axis: np.ndarray,
                      fallback: np.ndarray) -> np.ndarray:
    """The unit direction across the palm (perpendicular to `axis`) from the thumb side to the far side, signed by
    the first of `thumb_points` (its base, then its tip) that lies clearly to one side of the fingers' middle;
    `fallback` (a finger's last joint axis) where the fingers' points coincide (gripper jaws)."""
    if len(finger_points) >= 2:
        centred = finger_points - finger_points.mean(axis=0)
        centred -= np.outer(centred @ axis, axis)
        direction = np.linalg.svd(centred)[2][0]
        sides = [float(direction @ (finger_points.mean(axis=0) - point)) for point in thumb_points]
        side = next((value for value in sides if abs(value) >= _THUMB_SIDE_MARGIN_M), sides[-1])
        return direction if side >= 0 else -direction
    return _unit_or(_perpendicular_part(finger_points[0] - thumb_points[0], axis), _perpendicular_part(fallback, axis))


# ---- palm, wrist and axes ---------------------------------------------------------------------------------------

def _palm_link(model: KinematicModel, fingers) -> str:
    """The child of the last moving joint every finger shares, else the root link."""
    geometry_paths = []
    parent_joint = {joint.child: joint for joint in model.description.joints}
    for finger in fingers:
        link, path = finger.frames[-1].removesuffix(TIP_SUFFIX), []
        while link in parent_joint:
            path.append(parent_joint[link])
            link = parent_joint[link].parent
        geometry_paths.append(path[::-1])
    palm = model.description.root_link
    for joints in zip(*geometry_paths):
        if any(joint.name != joints[0].name for joint in joints):
            break
        if joints[0].is_moving:
            palm = joints[0].child
    return palm


def _flexion_frame(geometry: _Geometry, fingers, side: str, offsets: dict) -> tuple[np.ndarray, np.ndarray]:
    """x (the flexion axis, signed per side) and the fingers' mean direction made perpendicular to it."""
    model = geometry.model
    non_thumb = [f for f in fingers if f.name != "thumb"]
    thumb = next((f for f in fingers if f.name == "thumb"), None)
    if not non_thumb:
        raise UrdfError(f"{model.name}: a hand needs at least one non-thumb finger to define its axes")
    tips = np.array([geometry.position(f.frames[-1], offsets) for f in non_thumb])
    roots = _finger_roots(geometry, fingers)
    bases = np.array([geometry.position(f.frames[0]) for f in non_thumb])  # the knuckles
    direction = _unit_or(sum(tip - roots[f.name] for f, tip in zip(non_thumb, tips)), tips.sum(axis=0))
    last_axis = geometry.joint_axis(geometry.moving_path(non_thumb[0].frames[-1].removesuffix(TIP_SUFFIX))[-1])
    # Across the palm by the knuckles, from the thumb's base: both stay put whatever pose the fingers rest in.
    if len(non_thumb) >= 2:
        thumb_points = ([roots[thumb.name], geometry.position(thumb.frames[-1], offsets)] if thumb is not None
                        else [bases[0] - (bases[-1] - bases[0])])
        across = _across_direction(bases, thumb_points, direction, last_axis)
    elif thumb is not None:
        across = _across_direction(bases, [roots[thumb.name]], direction, last_axis)
    else:
        raise UrdfError(f"{model.name}: cannot tell the hand's sides apart from a single finger; give base_rotation")
    # The flexion axis: each finger's last joint axis, signed along the across direction.
    axes = []
    for finger in non_thumb:
        joint = geometry.moving_path(finger.frames[-1].removesuffix(TIP_SUFFIX))[-1]
        axis = geometry.joint_axis(joint)
        axes.append(axis if axis @ across >= 0 else -axis)
    flexion_axis = _unit(np.sum(axes, axis=0))
    if abs(flexion_axis @ across) < 0.7:  # the last joints do not bend across the palm: use the knuckle line instead
        flexion_axis = across
    x = flexion_axis if side == "right" else -flexion_axis
    return x, _unit(_perpendicular_part(direction, flexion_axis))


def _finger_roots(geometry: _Geometry, fingers) -> dict[str, np.ndarray]:
    """Each finger's root: where its first joint not shared with another finger sits (its base, below any
    offsets that vendors give link frames along the finger)."""
    return {name: geometry.position(link) for name, link in _finger_root_links(geometry, fingers).items()}


def _finger_root_links(geometry: _Geometry, fingers) -> dict[str, str]:
    """Each finger's root link: the child of its first joint not shared with another finger."""
    paths = {f.name: geometry.moving_path(f.frames[-1].removesuffix(TIP_SUFFIX)) for f in fingers}
    roots = {}
    for name, path in paths.items():
        shared = {j.name for other, joints in paths.items() if other != name for j in joints}
        own = [j for j in path if j.name not in shared] or path[-1:]
        roots[name] = own[0].child
    return roots


def _axes_and_wrist(geometry: _Geometry, palm_link: str, fingers, side: str, offsets: dict, notes: list[str],
                    rotation: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """The base rotation (unless given) and the wrist point, both in palm-link coordinates.

    z runs from the wrist to the middle knuckle, as the convention says, once a link marks the wrist: the fingers'
    rest pose (a curl at zero, a hyperextension) then does not tilt the frame. The wrist is the deepest link origin
    fixed to the palm that lies 0.5-2.2 finger lengths behind the middle knuckle and within 35 degrees of the
    fingers' direction, among the palm and the mount above it (a flange), else among the fixed leaves below it (a
    wrist marker); with none (the root sits at the knuckles), it is placed a human palm's length behind the knuckle
    along the fingers' direction.
    """
    non_thumb = [f for f in fingers if f.name != "thumb"]
    middle = next((f for f in non_thumb if f.name == "middle"), None)
    knuckle_fingers = [middle] if middle is not None else non_thumb
    knuckle = np.mean([geometry.position(f.frames[0]) for f in knuckle_fingers], axis=0)
    length = float(np.mean([np.linalg.norm(geometry.position(f.frames[-1], offsets) - geometry.position(f.frames[0]))
                            for f in knuckle_fingers]))
    if rotation is None:
        x, direction = _flexion_frame(geometry, fingers, side, offsets)
    else:
        x, direction = rotation[0], rotation[2]
    best = None
    for tier in _wrist_candidates(geometry, palm_link):
        best_depth = -np.inf
        for candidate in tier:
            position = geometry.position(candidate)
            span = _perpendicular_part(knuckle - position, x)
            depth = float(span @ direction)
            if (_WRIST_DEPTH_FINGERS[0] * length <= depth <= _WRIST_DEPTH_FINGERS[1] * length
                    and depth >= np.cos(np.radians(_WRIST_MAX_TILT_DEG)) * np.linalg.norm(span) and depth > best_depth):
                best, best_depth = position, depth
        if best is not None:
            break
    if best is None:
        best = knuckle - _HUMAN_PALM_PER_FINGER * length * direction
        notes.append(f"no link origin fixed to the palm lies where a wrist could be (0.5-2.2 finger lengths behind "
                     f"the middle knuckle); the wrist is placed {1e3 * _HUMAN_PALM_PER_FINGER * length:.0f} mm behind "
                     "it along the fingers, as on a human hand (a fixed link at the wrist in the URDF pins it down)")
    elif rotation is None:
        # The wrist line and the fingers' rest direction differ by a few degrees on most hands (knuckle joints nearer
        # the back of the hand than the wrist mount): split the difference. Beyond _REST_CURL_DEG the fingers rest
        # curled or bent back, and the wrist line alone holds.
        wrist_line = _unit(_perpendicular_part(knuckle - best, x))
        agree = np.degrees(np.arccos(np.clip(wrist_line @ direction, -1.0, 1.0))) <= _REST_CURL_DEG
        direction = _unit(wrist_line + direction) if agree else wrist_line
    if rotation is None:
        rotation = np.stack([x, np.cross(direction, x), direction])
    return rotation, best


def _wrist_candidates(geometry: _Geometry, palm_link: str) -> tuple[list[str], list[str]]:
    """Links fixed to the palm, in two tiers: the palm link and those above it up to the root or a moving joint (the
    mount the arm holds); then the fixed leaves below it (wrist markers, but also sensors and cameras)."""
    mount, link = [palm_link], palm_link
    while link in geometry.parent_joint and not geometry.parent_joint[link].is_moving:
        link = geometry.parent_joint[link].parent
        mount.append(link)
    leaves, stack = [], [palm_link]
    while stack:
        for joint in geometry.children.get(stack.pop(), []):
            if not joint.is_moving:
                stack.append(joint.child)
                if not geometry.children.get(joint.child):
                    leaves.append(joint.child)
    return mount, leaves


class HandednessError(ModelError):
    """A hand URDF used as the other side than its geometry says; `side` is the geometry's."""

    def __init__(self, message: str, side: str):
        super().__init__(message)
        self.side = side


def _verify_frame(geometry: _Geometry, palm_link: str, fingers, side: str, rotation: np.ndarray, offsets: dict,
                  source: str, notes: list[str], inferred: bool) -> None:
    """Check the frame against the hand's own kinematics, by readings that do not enter its construction:
    (a) the palm face: the non-thumb fingertips, flexed a little from the reference pose, move toward +y;
    (b) the thumb's base lies on the side of the knuckles the frame's side puts it (-x on a right hand, +x on a
        left); with (a), the handedness of the file, which must be `side`;
    (c) the wrist line, from a link of the mount 0.5-2.2 finger lengths behind the middle finger's root to that
        root, lies along the frame's +z within _SELF_CHECK_MAX_DEG.
    (a) reads a face, not an angle: the fingers' rest curl tilts the flexion motion (30 degrees on the BrainCo
    Revo2); the angle of z is (c)'s. A contradiction refuses the frame (a ModelError naming the file, the links and
    the setting) rather than flip it. A frame given as base_rotation is the user's, and a hand whose thumb cannot be
    told apart (a claw, a gripper) or whose fingers close along x (jaws) has no sides to read: there a palm-face
    contradiction is only noted, as before."""
    file = geometry.model.description.source
    x, y, z = rotation
    non_thumb = [f for f in fingers if f.name != "thumb"]
    thumb = next((f for f in fingers if f.name == "thumb"), None)
    if not non_thumb:
        return
    root_links = _finger_root_links(geometry, fingers)
    roots = {name: geometry.position(link) for name, link in root_links.items()}
    knuckles = np.mean([roots[f.name] for f in non_thumb], axis=0)
    tips = [f.frames[-1].removesuffix(TIP_SUFFIX) for f in non_thumb]
    flex_face = _palm_face_by_flexion(geometry, palm_link, tips, x, y)
    back_note = ("its fingers flex toward the back of the inferred hand frame: check that `side` matches the URDF, or "
                 "give base_rotation in the retargeting config")
    if inferred:
        _check_wrist_line(geometry, palm_link, non_thumb, root_links, offsets, x, z)
    thumb_across = 0.0 if thumb is None else float((roots[thumb.name] - knuckles) @ x)
    # the thumb told apart: named, or reaching clearly less far than the fingers; its base clearly to one side
    sides_readable = thumb is not None and abs(thumb_across) >= _THUMB_SIDE_MARGIN_M and (
        source != "geometry" or min(geometry.position(f.frames[-1], offsets) @ z for f in non_thumb)
        - geometry.position(thumb.frames[-1], offsets) @ z >= _THUMB_REACH_MARGIN_M)
    if not (inferred and sides_readable and flex_face and thumb is not None):  # thumb: for the type checker
        if flex_face < 0:
            notes.append(back_note)
        return
    thumb_link, tip_names = thumb.frames[-1].removesuffix(TIP_SUFFIX), ", ".join(tips)
    handedness = "right" if (thumb_across < 0) == (flex_face > 0) else "left"
    if handedness != side:
        raise HandednessError(f"{file} is a {handedness} hand by its geometry (its thumb {thumb_link} against the "
                              f"fingers {tip_names}, which curl toward the palm), used as {side}: set side to "
                              f"{handedness}, or give the {side}-hand URDF", handedness)
    if flex_face < 0:
        raise ModelError(f"{file}: the inferred {side}-hand frame faces the back of the hand (its fingers "
                         f"{tip_names} curl toward its -y); give base_rotation in the retargeting config")


def _palm_face_by_flexion(geometry: _Geometry, palm_link: str, tips: list[str], x: np.ndarray, y: np.ndarray) -> int:
    """+1 when the fingertips, every joint below the palm stepped a little toward its far limit (the flexion side
    in our URDF convention), move toward +y; -1 toward -y; 0 when they move along x (jaws closing)."""
    model, q = geometry.model, geometry.q
    far = np.where(np.abs(model.upper - q) >= np.abs(model.lower - q), model.upper, model.lower)
    step = np.sign(far - q) * np.minimum(_FLEX_STEP_RAD, np.abs(far - q))
    below = set(_joints_below(model, palm_link))
    step[[name not in below for name in model.joint_names]] = 0.0
    palm = model.frame_pose(q, palm_link)[:3, :3]
    motion = ((model.frame_positions(q + step, tips) - model.frame_positions(q, tips)) @ palm).mean(axis=0)
    curl = _perpendicular_part(motion, x)
    return int(np.sign(curl @ y)) if np.linalg.norm(curl) > 0.25 * np.linalg.norm(motion) > 0 else 0


def _check_wrist_line(geometry: _Geometry, palm_link: str, non_thumb, root_links: dict, offsets: dict,
                      x: np.ndarray, z: np.ndarray) -> None:
    """Refuse a frame whose z is more than _SELF_CHECK_MAX_DEG off the line from the mount (the farthest of the palm
    link and the links fixed above it, 0.5-2.2 finger lengths from the middle finger's root) to that root."""
    knuckle_fingers = [f for f in non_thumb if f.name == "middle"] or non_thumb
    knuckle = np.mean([geometry.position(root_links[f.name]) for f in knuckle_fingers], axis=0)
    length = float(np.mean([np.linalg.norm(geometry.position(f.frames[-1], offsets) - geometry.position(f.frames[0]))
                            for f in knuckle_fingers]))
    spans = {link: _perpendicular_part(knuckle - geometry.position(link), x)
             for link in _wrist_candidates(geometry, palm_link)[0]}
    lengths = {link: float(np.linalg.norm(span)) for link, span in spans.items()}
    mounts = [link for link in spans
              if _WRIST_DEPTH_FINGERS[0] * length <= lengths[link] <= _WRIST_DEPTH_FINGERS[1] * length]
    if not mounts:
        return
    mount = max(mounts, key=lengths.__getitem__)
    angle = _angle_deg(spans[mount], z)
    if angle > _SELF_CHECK_MAX_DEG:
        raise ModelError(f"{geometry.model.description.source}: the wrist line from {mount} to the middle finger's "
                         f"root ({', '.join(root_links[f.name] for f in knuckle_fingers)}) is {angle:.0f} degrees off "
                         f"the hand frame inferred from the fingers (more than {_SELF_CHECK_MAX_DEG:.0f}), so where "
                         "the wrist is cannot be read; give base_rotation in the retargeting config")


def _joints_below(model: KinematicModel, link: str) -> list[str]:
    children: dict[str, list] = {}
    for joint in model.description.joints:
        children.setdefault(joint.parent, []).append(joint)
    names, stack = [], [link]
    while stack:
        for joint in children.get(stack.pop(), []):
            names.append(joint.name)
            stack.append(joint.child)
    return names


def _angle_deg(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.degrees(np.arccos(np.clip(_unit(a) @ _unit(b), -1.0, 1.0))))


def _unit_or(vector: np.ndarray, fallback: np.ndarray) -> np.ndarray:
    """`vector` normalised, or `fallback` normalised when `vector` is (nearly) zero."""
    return _unit(vector) if np.linalg.norm(vector) > 1e-6 else _unit(fallback)


def _unit(vector: np.ndarray) -> np.ndarray:
    norm = np.linalg.norm(vector)
    if norm < 1e-9:
        raise UrdfError("degenerate hand geometry: cannot derive the hand axes from the reference pose")
    return vector / norm


def _perpendicular_part(vector: np.ndarray, unit_axis: np.ndarray) -> np.ndarray:
    return vector - (vector @ unit_axis) * unit_axis
