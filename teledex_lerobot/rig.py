"""A rig: the kinematic chains one robot is made of (an arm, a hand, or both), where they sit, and their keys.

The rig is the single source of truth for a robot's joint keys: the LeRobot robot and the teleoperators that drive
it both build the same Rig, so their action keys cannot drift apart.
"""

from collections.abc import Mapping
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

from .errors import ConfigError
from .kinematics import KinematicModel
from .kinematics.catalogue import BUILTIN_MODELS, is_urdf_path, resolve_urdf
from .presets import HandMount, PartSpec, Preset


class RigPart:
    """One chain: its model, the joints driven (in command order), a home pose and its LeRobot keys."""

    def __init__(self, role: str, spec: PartSpec, mount_frame: str | None = None):
        self.role = role  # "arm" or "hand"
        self.spec = spec
        self.model = KinematicModel.from_urdf(resolve_urdf(spec.model, spec.side))
        self.joints = list(spec.joints) if spec.joints else list(self.model.joint_names)
        self.model.require_joints(self.joints)
        self.model.require_joints(list(spec.home))
        self.indices = np.array([self.model.joint_names.index(j) for j in self.joints])
        home_full = np.zeros(len(self.model.joint_names))
        for name, value in spec.home.items():
            home_full[self.model.joint_names.index(name)] = value
        self.home_full = self.model.clip(home_full)
        self.mount_frame = mount_frame
        if mount_frame is not None:
            self.model.require_frames([mount_frame])
        self.keys = [f"{role}_{joint}.pos" for joint in self.joints]

    @property
    def lower(self) -> np.ndarray:
        return self.model.lower[self.indices]

    @property
    def upper(self) -> np.ndarray:
        return self.model.upper[self.indices]

    @property
    def velocity_limits(self) -> np.ndarray:
        return self.model.velocity_limits[self.indices]

    @property
    def home(self) -> np.ndarray:
        return self.home_full[self.indices]

    def full_configuration(self, q_driven: np.ndarray) -> np.ndarray:
        """Every actuated joint of the model: the driven ones from q_driven, the rest at home."""
        q = self.home_full.copy()
        q[self.indices] = q_driven
        return q


def _part_from_spec(role: str, spec: PartSpec) -> RigPart:
    info = BUILTIN_MODELS.get(spec.model)
    if info is not None and info.kind != role:
        raise ConfigError(f"Model {spec.model!r} is {'an arm' if info.kind == 'arm' else 'a hand'}, but it was "
                          f"given as the {role}: give it as the {info.kind}, or give the {role}'s model as the {role}")
    # A URDF arm has no known mount frame: a hand on it is drawn at the arm's base.
    mount_frame = info.mount_frame_for(spec.side) if (info and role == "arm") else None
    return RigPart(role, spec, mount_frame)


def _transform(mount: HandMount) -> np.ndarray:
    pose = np.eye(4)
    pose[:3, :3] = Rotation.from_euler("xyz", mount.rpy_rad).as_matrix()
    pose[:3, 3] = mount.xyz_m
    return pose


class Rig:
    """Named parts plus the hand mount. Roles are "arm" and "hand" (a rig has one of each at most)."""

    def __init__(self, parts: list[RigPart], hand_mount: HandMount | None = None):
        self.parts = {part.role: part for part in parts}
        self.hand_mount_spec = hand_mount or HandMount()
        self.hand_mount = _transform(self.hand_mount_spec)
        self.action_keys = [key for part in parts for key in part.keys]

    @classmethod
    def from_preset(cls, preset: Preset) -> "Rig":
        return cls.from_parts(preset.arm, preset.hand, preset.hand_mount)

    @classmethod
    def from_parts(cls, arm: PartSpec | None, hand: PartSpec | None, hand_mount: HandMount | None = None) -> "Rig":
        parts = [_part_from_spec(role, spec) for role, spec in (("arm", arm), ("hand", hand)) if spec]
        if not parts:
            raise ConfigError("A rig needs an arm, a hand, or both: give the preset an 'arm' and/or a 'hand'")
        return cls(parts, hand_mount)

    @property
    def name(self) -> str:
        """What the rig is made of, arm first ("piper+linkerhand_o6"): its robot_type in a dataset, as LeRobot's
        robots name their model. A URDF by its file's stem: its path names a folder of this machine, not the robot."""
        return "+".join(Path(part.spec.model).stem if is_urdf_path(part.spec.model) else part.spec.model
                        for part in self.parts.values())

    @property
    def side(self) -> str:
        """The side it works on, as the operator's hands are named: its hand's (else its arm's)."""
        return self.parts.get("hand", next(iter(self.parts.values()))).spec.side

    def split_action(self, action: Mapping[str, float], robot_name: str) -> dict[str, np.ndarray]:
        """Action dict -> driven joint vector per role. Keys must match exactly: nothing guessed, nothing dropped."""
        given = set(action)
        expected = set(self.action_keys)
        if given != expected:
            missing = sorted(expected - given)
            unknown = sorted(given - expected)
            raise KeyError(
                f"Action keys do not match robot {robot_name!r}: missing {missing}, unknown {unknown}. "
                f"Expected exactly: {self.action_keys}. Check that the teleoperator drives the same preset/model."
            )
        return {role: np.array([float(action[k]) for k in part.keys]) for role, part in self.parts.items()}

    def join(self, q_by_role: Mapping[str, np.ndarray]) -> dict[str, float]:
        out: dict[str, float] = {}
        for role, part in self.parts.items():
            out.update(zip(part.keys, (float(v) for v in q_by_role[role]), strict=True))
        return out

    def base_poses(self, q_by_role: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """World pose of each part's base: the arm at the origin, the hand on the arm's mount frame."""
        poses = {role: np.eye(4) for role in self.parts}
        arm, hand = self.parts.get("arm"), self.parts.get("hand")
        if arm is not None and hand is not None and arm.mount_frame is not None:
            mount = arm.model.frame_pose(arm.full_configuration(q_by_role["arm"]), arm.mount_frame)
            poses["hand"] = mount @ self.hand_mount
        return poses

    def drawing_segments(self, q_by_role: Mapping[str, np.ndarray]) -> list[tuple[str, np.ndarray]]:
        """(role, segments (m,2,3) in world frame) for every part, for the simulated camera."""
        poses = self.base_poses(q_by_role)
        drawn = []
        for role, part in self.parts.items():
            segments = part.model.link_segments(part.full_configuration(q_by_role[role]))
            pose = poses[role]
            drawn.append((role, segments @ pose[:3, :3].T + pose[:3, 3]))
        return drawn
