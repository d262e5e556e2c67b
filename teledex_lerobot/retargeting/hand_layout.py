"""Which robot frames stand for which human keypoints, and how the robot base sits in the operator wrist frame.

A `HandLayout` pairs MediaPipe-21 keypoint indices with robot frames (links), finger by finger, and holds the
rotation from the URDF root frame to the operator wrist frame (see `teledex_lerobot.operator.hand_model`).

It comes from, in order of preference:
1. a config (`keypoint_frames`, optional `base_rotation`);
2. the standard frame names of our URDFs (`{index,middle,ring,pinky}_{mcp,pip,dip,tip}`, `thumb_{cmc,mcp,ip,tip}`);
3. discovery from the kinematic tree: fingertips are the leaves beyond the deepest moving joint of each branch,
   the thumb is the finger whose root sits nearest the wrist along the hand axis, the other fingers are ordered
   away from the thumb, and intermediate keypoints are the distinct joint centres along each finger.
Whatever the source, the base alignment is computed from the model's reference pose (zero angles clipped into the
limits): +z along the mean direction of the straight non-thumb fingers, +x across their roots toward the pinky
(toward the thumb on a left hand), +y = z × x, i.e. out of the palm.
"""

import logging
from dataclasses import dataclass

import numpy as np

from ..kinematics import KinematicModel, UrdfError
from ..geometry.sides import check_side
from ..operator.keypoints import FINGER_CHAINS, FINGER_NAMES

logger = logging.getLogger(__name__)

# Human keypoint labels per finger, base to tip (MediaPipe order within each finger).
_LABELS = {"thumb": ("cmc", "mcp", "ip", "tip")} | {name: ("mcp", "pip", "dip", "tip") for name in FINGER_NAMES[1:]}
_MERGE_DISTANCE_M = 2e-3  # joint centres closer than this count as one keypoint (e.g. yaw + pitch axes)


@dataclass(frozen=True)
class FingerFrames:
    name: str  # "thumb", "index", ...
    human_indices: tuple[int, ...]  # MediaPipe indices, base to tip; the last is the fingertip
    frames: tuple[str, ...]  # robot frames, same order


@dataclass(frozen=True)
class HandLayout:
    fingers: tuple[FingerFrames, ...]  # thumb first when present, then index..pinky as available
    base_rotation: np.ndarray  # (3, 3): operator-frame coordinates = base_rotation @ URDF-root coordinates
    source: str  # "config", "standard names" or "discovered"

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
            "keypoint_frames": {f.name: {_label(f.name, i): frame for i, frame in zip(f.human_indices, f.frames)}
                                for f in self.fingers},
            "base_rotation": np.round(self.base_rotation, 6).tolist(),
        }


def _label(finger: str, human_index: int) -> str:
    return _LABELS[finger][FINGER_CHAINS[finger].index(human_index)]


def build_layout(model: KinematicModel, side: str, keypoint_frames: dict | None = None,
                 base_rotation=None) -> HandLayout:
    """The layout of `model` (see the module docstring). Raises UrdfError when it cannot be inferred."""
    check_side(side)
    if keypoint_frames:
        fingers, source = _fingers_from_config(model, keypoint_frames), "config"
    elif _has_standard_frames(model):
        fingers, source = _standard_fingers(model), "standard names"
    else:
        fingers, source = _discover_fingers(model), "discovered"
    order = {name: i for i, name in enumerate(FINGER_NAMES)}
    fingers = tuple(sorted(fingers, key=lambda f: order[f.name]))
    if base_rotation is None:
        rotation = _base_rotation(model, fingers, side)
    else:
        rotation = np.asarray(base_rotation, dtype=float)
        if rotation.shape != (3, 3) or not np.allclose(rotation @ rotation.T, np.eye(3), atol=1e-4):
            raise ValueError(f"base_rotation must be a 3x3 rotation matrix, got {rotation.tolist()}")
    layout = HandLayout(fingers, rotation, source)
    _warn_if_flexion_points_away(model, layout)
    return layout


def reference_pose(model: KinematicModel) -> np.ndarray:
    """Zero angles clipped into the joint limits: the open hand every URDF convention starts from."""
    return np.clip(np.zeros(len(model.joint_names)), model.lower, model.upper)


# ---- sources of finger frames ----------------------------------------------------------------------------------

def _fingers_from_config(model: KinematicModel, keypoint_frames: dict) -> list[FingerFrames]:
    fingers = []
    for name, labelled in keypoint_frames.items():
        if name not in _LABELS:
            raise ValueError(f"keypoint_frames: unknown finger {name!r}; use {list(_LABELS)}")
        unknown = set(labelled) - set(_LABELS[name])
        if unknown or "tip" not in labelled:
            raise ValueError(f"keypoint_frames.{name}: labels must be among {_LABELS[name]} and include 'tip'; "
                             f"got {sorted(labelled)}")
        model.require_frames(list(labelled.values()))
        pairs = [(FINGER_CHAINS[name][_LABELS[name].index(label)], labelled[label])
                 for label in _LABELS[name] if label in labelled]
        fingers.append(FingerFrames(name, tuple(i for i, _ in pairs), tuple(f for _, f in pairs)))
    if not fingers:
        raise ValueError("keypoint_frames is empty; give at least one finger with a 'tip' frame")
    return fingers


def _has_standard_frames(model: KinematicModel) -> bool:
    return all(f"{name}_tip" in model.frame_names for name in ("thumb", "index"))


def _standard_fingers(model: KinematicModel) -> list[FingerFrames]:
    fingers = []
    for name in FINGER_NAMES:
        pairs = [(index, f"{name}_{label}") for index, label in zip(FINGER_CHAINS[name], _LABELS[name])
                 if f"{name}_{label}" in model.frame_names]
        if pairs and pairs[-1][1] == f"{name}_tip":
            fingers.append(FingerFrames(name, tuple(i for i, _ in pairs), tuple(f for _, f in pairs)))
    return fingers


def _discover_fingers(model: KinematicModel) -> list[FingerFrames]:
    """Fingers from the kinematic tree alone (see the module docstring)."""
    description = model.description
    child_joints: dict[str, list] = {}
    for joint in description.joints:
        child_joints.setdefault(joint.parent, []).append(joint)
    parent_joint = {joint.child: joint for joint in description.joints}

    def moving_path(link: str) -> list:
        """Moving joints from the root down to `link`."""
        path = []
        while link in parent_joint:
            joint = parent_joint[link]
            if joint.is_moving:
                path.append(joint)
            link = joint.parent
        return path[::-1]

    def has_moving_descendant(link: str) -> bool:
        return any(j.is_moving or has_moving_descendant(j.child) for j in child_joints.get(link, []))

    q_ref = reference_pose(model)
    positions = dict(zip(model.frame_names, model.frame_positions(q_ref, model.frame_names)))
    # Candidate tips: leaves past the last moving joint of their branch, grouped by that joint.
    tips_by_joint: dict[str, str] = {}
    for link in description.links:
        path = moving_path(link)
        if child_joints.get(link) or not path:
            continue
        last = path[-1]
        if has_moving_descendant(last.child):
            continue  # hangs off a middle phalanx (a sensor or pad), not the end of a finger
        best = tips_by_joint.get(last.name)
        centre = positions[last.child]
        if best is None or np.linalg.norm(positions[link] - centre) > np.linalg.norm(positions[best] - centre):
            tips_by_joint[last.name] = link
    tips = list(tips_by_joint.values())
    if not 1 <= len(tips) <= 5:
        raise UrdfError(f"{model.name}: found {len(tips)} fingertip candidates ({tips}); cannot tell the fingers "
                        "apart. Give keypoint_frames in the retargeting config (see configs/retargeting/README.md).")
    paths = {tip: moving_path(tip) for tip in tips}
    # A finger's own joints: those not shared with any other finger.
    shared = {j.name for a in tips for b in tips if a != b for j in paths[a] if j in paths[b]}
    own = {tip: [j for j in paths[tip] if j.name not in shared] or paths[tip][-1:] for tip in tips}
    roots = {tip: positions[own[tip][0].child] for tip in tips}
    axis = _unit(sum(positions[tip] - roots[tip] for tip in tips))
    if len(tips) == 1:
        thumb, others = None, tips
    else:
        thumb = min(tips, key=lambda tip: float(roots[tip] @ axis))
        others = sorted((t for t in tips if t != thumb), key=lambda t: np.linalg.norm(
            _perpendicular_part(roots[t] - roots[thumb], axis)))
    names = (["thumb"] if thumb else []) + list(FINGER_NAMES[1:1 + len(others)])
    fingers = []
    for name, tip in zip(names, ([thumb] if thumb else []) + others):
        centres: list[str] = []
        for joint in own[tip]:
            if centres and np.linalg.norm(positions[joint.child] - positions[centres[-1]]) < _MERGE_DISTANCE_M:
                centres[-1] = joint.child  # same point: keep the deeper link
            else:
                centres.append(joint.child)
        if np.linalg.norm(positions[tip] - positions[centres[-1]]) < _MERGE_DISTANCE_M:
            centres.pop()
            logger.warning("%s: finger %s has no link beyond its last joint; using %s as its tip",
                           model.name, name, tip)
        chain = FINGER_CHAINS[name]
        # Keep the root and the last joints nearest the tip when the robot has more joint centres than the human.
        centres = (centres[:1] + centres[1:][-2:]) if len(centres) > 3 else centres
        fingers.append(FingerFrames(name, chain[:len(centres)] + (chain[-1],), tuple(centres) + (tip,)))
    return fingers


# ---- base alignment ---------------------------------------------------------------------------------------------

def _base_rotation(model: KinematicModel, fingers, side: str) -> np.ndarray:
    q_ref = reference_pose(model)
    non_thumb = [f for f in fingers if f.name != "thumb"]
    thumb = next((f for f in fingers if f.name == "thumb"), None)
    if not non_thumb:
        raise UrdfError(f"{model.name}: a hand needs at least one non-thumb finger to define its axes")
    roots = model.frame_positions(q_ref, [f.frames[0] for f in non_thumb])
    tips = model.frame_positions(q_ref, [f.frames[-1] for f in non_thumb])
    z = _unit((tips - roots).sum(axis=0))
    if len(non_thumb) >= 2:
        across = roots[-1] - roots[0]  # index -> last finger: toward the pinky
    elif thumb is not None:
        across = roots[0] - model.frame_positions(q_ref, [thumb.frames[0]])[0]  # away from the thumb
    else:
        raise UrdfError(f"{model.name}: cannot tell the hand's sides apart from a single finger; give base_rotation")
    x = _unit(_perpendicular_part(across, z))
    if side == "left":
        x = -x
    y = np.cross(z, x)
    return np.stack([x, y, z])


def _warn_if_flexion_points_away(model: KinematicModel, layout: HandLayout) -> None:
    """Flexing every joint toward its upper limit should move the non-thumb fingertips toward +y (the palm side)."""
    tips = [f.frames[-1] for f in layout.fingers if f.name != "thumb"]
    if not tips:
        return
    q_ref = reference_pose(model)
    q_flexed = q_ref + 0.5 * (model.upper - q_ref)
    motion = (model.frame_positions(q_flexed, tips) - model.frame_positions(q_ref, tips)) @ layout.base_rotation.T
    if motion[:, 1].mean() < 0:
        logger.warning("%s: its fingers flex toward the back of the aligned hand; check that `side` matches the "
                       "URDF, or give base_rotation in the retargeting config.", model.name)


def _unit(vector: np.ndarray) -> np.ndarray:
    norm = np.linalg.norm(vector)
    if norm < 1e-9:
        raise UrdfError("degenerate hand geometry: cannot derive the hand axes from the reference pose")
    return vector / norm


def _perpendicular_part(vector: np.ndarray, unit_axis: np.ndarray) -> np.ndarray:
    return vector - (vector @ unit_axis) * unit_axis

