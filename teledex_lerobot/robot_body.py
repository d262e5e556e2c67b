"""A rig's body as simple shapes, from its URDFs (ours carry kinematics only): a capsule "bone" from each link's origin
to each kept child joint's origin, and for a hand a box on its palm link spanning the wrist and the finger bases, in
axes derived from them whatever way the URDF's axes point. The MuJoCo world simulates these shapes (world/mjcf.py)
and the headset page draws them (viewer/headset.py): one geometry, so the robot the operator sees is the one that
touches things. Also where each fingertip is, and where a wrist camera sits on the hand.
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from .kinematics import KinematicModel, UrdfError
from .kinematics.urdf import JointSpec, UrdfDescription
from .retargeting.hand_layout import TIP_SUFFIX, HandKeypointLayout, build_layout, reference_pose
from .rig import Rig, RigPart

ARM_BONE_RADIUS_M = 0.03
ARM_DISTAL_BONE_RADIUS_M = 0.022  # bones shorter than ARM_SHORT_BONE_M (wrist links)
ARM_SHORT_BONE_M = 0.1
FINGER_BONE_RADIUS_M = 0.0085
PALM_THICKNESS_M = 0.022
PALM_BEHIND_SHARE = 0.6  # of the thickness behind the plane of the wrist and the finger bases (the back of the hand)
# The finger bases' centroid must lie this far beyond the wrist for a palm to span them.
PALM_MIN_LENGTH_M = 0.01
MIN_BONE_LENGTH_M = 0.004

# A wrist camera on a bracket at the heel of the hand, below the palm, looking along the fingers and a little toward
# the palm: it sees what the hand is about to hold between the thumb and the fingers (from the back of the hand a
# camera sees only the palm). In the hand's palm axes (across, out of the palm, wrist -> fingers), from the wrist.
WRIST_CAMERA_POSITION_M = (0.0, 0.045, -0.01)
WRIST_CAMERA_LOOKS_AT_M = (0.0, 0.07, 0.135)  # where a level pinch holds a small object
WRIST_CAMERA_FOVY_DEG = 70.0


def children_of(description: UrdfDescription) -> dict[str, list[JointSpec]]:
    children: dict[str, list[JointSpec]] = {link: [] for link in description.links}
    for joint in description.joints:
        children[joint.parent].append(joint)
    return children


def ancestors(description: UrdfDescription, link: str) -> list[str]:
    parent_joint = {joint.child: joint for joint in description.joints}
    chain = [link]
    while chain[-1] in parent_joint:
        chain.append(parent_joint[chain[-1]].parent)
    return chain


@dataclass(frozen=True)
class PalmBox:
    """A hand's palm: a box in its palm link's frame. Its axes (the columns of `rotation`) run across the finger
    bases, out of the palm face (the side the fingers flex toward) and from the wrist toward the finger bases."""

    link: str
    centre_m: np.ndarray
    half_size_m: np.ndarray
    rotation: np.ndarray
    wrist_m: np.ndarray  # where the palm's axes start, in the palm link's frame


def _palm_error(description: UrdfDescription, what: str) -> ValueError:
    return ValueError(f"Cannot build a palm for the hand URDF {description.source} (root link "
                      f"{description.root_link!r}): {what}. The palm spans the wrist and the first joints of "
                      "at least two fingers, which must lie beyond the wrist; check the URDF's finger joints.")


def _first_own_joint(model: KinematicModel, palm_link: str, tip_link: str) -> JointSpec | None:
    """The first moving joint below the palm link on the way to a fingertip: where the finger leaves the palm."""
    parent_joint = {joint.child: joint for joint in model.description.joints}
    link, first = tip_link, None
    while link != palm_link and link in parent_joint:
        joint = parent_joint[link]
        if joint.is_moving:
            first = joint
        link = joint.parent
    return first


def hand_layout(model: KinematicModel, side: str) -> HandKeypointLayout:
    """The retargeting layout of a hand (which link is the palm, which finger the thumb), or a ValueError naming the
    URDF."""
    try:
        return build_layout(model, side)
    except (UrdfError, ValueError) as error:
        raise _palm_error(model.description,
                          f"its fingers cannot be told apart ({' '.join(str(error).split())})") from None


def hand_palm(model: KinematicModel, side: str) -> PalmBox:
    """The palm box of a hand URDF, from its fingers as the retargeting layout infers them (the palm link, the wrist,
    which finger is the thumb, the fingers' flexion axis).

    Finger bases: where each non-thumb finger's first joint below the palm link sits (the thumb's too when fewer
    than two other fingers). Axes: across = the fingers' flexion axis (it runs across the palm whatever the pose of
    the fingers); along = from the wrist to the bases' centroid, made perpendicular to it; normal = along x across.
    The box runs from the wrist to the farthest base, as wide as the bases spread plus a finger bone's radius, with
    PALM_THICKNESS_M about the plane of the wrist and the bases. Raises a ValueError naming the URDF where no palm
    can be built."""
    description = model.description
    layout = hand_layout(model, side)
    q = reference_pose(model)
    palm_inverse = np.linalg.inv(model.frame_pose(q, layout.palm_link))
    bases = {}
    for finger in layout.fingers:
        joint = _first_own_joint(model, layout.palm_link, finger.frames[-1].removesuffix(TIP_SUFFIX))
        if joint is not None:
            bases[finger.name] = (palm_inverse @ model.frame_pose(q, joint.child))[:3, 3]
    spanning = {name: base for name, base in bases.items() if name != "thumb"}
    if len(spanning) < 2:
        spanning = bases
    if len(spanning) < 2:
        raise _palm_error(description, f"it has fewer than two finger bases below its palm link "
                                       f"{layout.palm_link!r} (found: {sorted(bases) or 'none'})")
    points = np.array(list(spanning.values()))
    wrist = np.asarray(layout.wrist_offset_m, dtype=float)
    across = layout.base_rotation[0]
    along = points.mean(axis=0) - wrist
    along -= (along @ across) * across
    if np.linalg.norm(along) < PALM_MIN_LENGTH_M:
        raise _palm_error(description, f"its finger bases ({', '.join(sorted(spanning))}) lie at the wrist (their "
                                       f"centroid is {1e3 * np.linalg.norm(along):.1f} mm beyond it along the "
                                       f"fingers, under {1e3 * PALM_MIN_LENGTH_M:.0f} mm)")
    along /= np.linalg.norm(along)
    rotation = np.stack([across, np.cross(along, across), along], axis=1)
    local = (points - wrist) @ rotation
    low = np.array([local[:, 0].min() - FINGER_BONE_RADIUS_M, -PALM_BEHIND_SHARE * PALM_THICKNESS_M, 0.0])
    high = np.array([local[:, 0].max() + FINGER_BONE_RADIUS_M, (1 - PALM_BEHIND_SHARE) * PALM_THICKNESS_M,
                     local[:, 2].max()])
    return PalmBox(layout.palm_link, wrist + rotation @ ((low + high) / 2), (high - low) / 2, rotation, wrist)


def kept_arm_links(rig: Rig) -> set[str] | None:
    """With a hand mounted, the arm's end effector (links past its last driven joint that do not lead to the mount
    frame, e.g. the Piper gripper) is replaced by the hand."""
    arm = rig.parts.get("arm")
    if arm is None or "hand" not in rig.parts or arm.mount_frame is None:
        return None
    description = arm.model.description
    path_to_mount = set(ancestors(description, arm.mount_frame))
    last_driven_child = next(j.child for j in reversed(description.joints) if j.name in set(arm.joints))
    beyond = set()
    children = children_of(description)
    stack = [j.child for j in children[last_driven_child]]
    while stack:
        link = stack.pop()
        beyond.add(link)
        stack.extend(j.child for j in children[link])
    return set(description.links) - (beyond - path_to_mount)


def bone_radius_m(role: str, length_m: float) -> float:
    if role == "hand":
        return FINGER_BONE_RADIUS_M
    return ARM_BONE_RADIUS_M if length_m >= ARM_SHORT_BONE_M else ARM_DISTAL_BONE_RADIUS_M


def bone_ends_m(joints: list[JointSpec]) -> list[np.ndarray]:
    """Where a link's bones end (its kept child joints' origins, in its frame); too short ones are left out."""
    ends = [np.asarray(joint.origin_xyz, dtype=float) for joint in joints]
    return [end for end in ends if np.linalg.norm(end) >= MIN_BONE_LENGTH_M]


@dataclass(frozen=True)
class Bone:
    link: str
    end_m: np.ndarray  # in the link's frame; the bone starts at the link's origin
    radius_m: float


class PartBody:
    """One rig part's shapes: its bones and, for a hand, its palm box and fingertips."""

    def __init__(self, part: RigPart, kept_links: set[str] | None):
        description = part.model.description
        self.part = part
        self.palm = hand_palm(part.model, part.spec.side) if part.role == "hand" else None
        children = children_of(description)
        self.bones: list[Bone] = []
        self.kept_links = [link for link in description.links if kept_links is None or link in kept_links]
        for link in self.kept_links:
            if self.palm is not None and link == self.palm.link:
                continue  # the palm box replaces the palm link's bones
            kept = [joint for joint in children[link] if kept_links is None or joint.child in kept_links]
            for end in bone_ends_m(kept):
                self.bones.append(Bone(link, end, bone_radius_m(part.role, float(np.linalg.norm(end)))))
        self.tips: dict[str, tuple[str, np.ndarray]] = {}  # finger -> (link, offset in the link's frame)
        if part.role == "hand":
            layout = hand_layout(part.model, part.spec.side)
            for finger in layout.fingers:
                frame = finger.frames[-1]
                self.tips[finger.name] = (frame.removesuffix(TIP_SUFFIX),
                                          np.asarray(layout.frame_offsets_m.get(frame, np.zeros(3)), dtype=float))
        self._frames = sorted({bone.link for bone in self.bones} | {link for link, _ in self.tips.values()}
                              | ({self.palm.link} if self.palm is not None else set()))

    def finger_links(self) -> dict[str, str]:
        """Each link of a finger (its tip's link and those above it, up to the palm link) -> the finger's name."""
        description = self.part.model.description
        palm = self.palm.link if self.palm is not None else description.root_link
        finger_of = {}
        for finger, (tip_link, _) in self.tips.items():
            for link in ancestors(description, tip_link):
                if link == palm:
                    break
                finger_of[link] = finger
        return finger_of

    def link_poses(self, q_full: np.ndarray, also: Iterable[str] = ()) -> dict[str, np.ndarray]:
        """Pose of every link that carries a shape, and of the links `also` named, in the part's base frame."""
        frames = sorted(set(self._frames).union(also))
        return dict(zip(frames, self.part.model.frame_poses(q_full, frames), strict=True))

    def wrist_camera_pose(self) -> np.ndarray:
        """4x4 pose of a wrist camera's optical frame (x right, y down, z forward) in the hand's root frame: image up
        toward the back of the hand. Hands only."""
        if self.palm is None:
            raise ValueError(f"A wrist camera sits on a hand; {self.part.spec.model} is an arm")
        palm = self.palm
        position = np.asarray(WRIST_CAMERA_POSITION_M)
        forward = np.asarray(WRIST_CAMERA_LOOKS_AT_M) - position
        forward /= np.linalg.norm(forward)
        down = np.array([0.0, 1.0, 0.0]) - forward[1] * forward  # out of the palm, square to the view
        down /= np.linalg.norm(down)
        in_palm = np.eye(4)
        in_palm[:3, :3] = palm.rotation @ np.stack([np.cross(down, forward), down, forward], axis=1)
        in_palm[:3, 3] = palm.wrist_m + palm.rotation @ position
        q = reference_pose(self.part.model)
        return self.part.model.frame_pose(q, palm.link) @ in_palm


class RigBody:
    """Every part's shapes, placed as the rig places its parts."""

    def __init__(self, rig: Rig):
        kept = kept_arm_links(rig)
        self.rig = rig
        self.parts = {role: PartBody(part, kept if role == "arm" else None) for role, part in rig.parts.items()}

    def placed(self, q_by_role, also: Mapping[str, Iterable[str]] | None = None,
               ) -> dict[str, tuple[np.ndarray, dict[str, np.ndarray]]]:
        """Per part: its base pose in the rig's frame and the poses of its shaped links (and of those `also` names
        for the part) in that frame."""
        bases = self.rig.base_poses(q_by_role)
        placed = {}
        for role, body in self.parts.items():
            part = self.rig.parts[role]
            poses = body.link_poses(part.full_configuration(np.asarray(q_by_role[role], dtype=float)),
                                    (also or {}).get(role, ()))
            placed[role] = (bases[role], {link: bases[role] @ pose for link, pose in poses.items()})
        return placed
