"""Actions as where each hand should be, not as arm joints: the same demonstrations, another action space.

A policy that outputs arm joint targets has to learn the arm's inverse kinematics over the layouts to the
millimetre; one that outputs the hand's pose (the arm's mount frame in the arm's base, position and the first two
columns of its rotation: the continuous 6-D rotation of Zhou et al. 2019) sees the goal and its action in the same
metres, where placing an object 6 mm further is 6 mm more of the action. The arm's joints stay in the action beside the
pose: near a straight wrist the pose leaves the split between the two wrist rolls open (an IK that tracked the
expert's poses alone ended 2.3 rad away from its joints on the last roll, and 2 of 20 handovers failed), so the IK
starts from the joints the action gives and goes from there to the pose. The hand's own joints stay joints.

`HandPoseActions` maps a rig-by-rig joint vector (a recording's action or observation.state, the world's parts in
order) to that space by forward kinematics, and a hand-pose action back to joint targets by our IK.
recording/hand_pose_training.py writes a recording's training copy in it; the gym env (action_space="hand_pose")
acts in it.
"""

from collections.abc import Mapping

import numpy as np

from ..errors import ConfigError
from ..kinematics import solve_ik
from ..presets import load_preset
from ..rig import Rig, RigPart

POSE_AXES = ("x", "y", "z", "r11", "r21", "r31", "r12", "r22", "r32")
# What a world's actions are: the joints (as recorded) or each arm's hand pose beside them (HandPoseActions)
ACTION_SPACES = ("joints", "hand_pose")
# Our IK's settings for a hand-pose action: the scripted expert's (world/expert.py), whose targets they were
IK_ITERATIONS = 200
ORIENTATION_WEIGHT = 0.3


def check_action_space(name: str) -> None:
    if name not in ACTION_SPACES:
        raise ConfigError(f"--env.action_space={name!r}: joints (as recorded) or hand_pose (on a training copy written "
                          "by teledex-convert to-hand-pose)")


def pose_values(pose: np.ndarray) -> np.ndarray:
    """4x4 -> (9,): position, then the rotation's first two columns."""
    return np.concatenate([pose[:3, 3], pose[:3, 0], pose[:3, 1]])


def pose_from_values(values: np.ndarray) -> np.ndarray:
    """(9,) -> 4x4, the two columns made orthonormal (Gram-Schmidt): a policy's output is near a rotation, not one."""
    x = values[3:6] / np.linalg.norm(values[3:6])
    y = values[6:9] - np.dot(values[6:9], x) * x
    y /= np.linalg.norm(y)
    pose = np.eye(4)
    pose[:3, :3] = np.stack([x, y, np.cross(x, y)], axis=1)
    pose[:3, 3] = values[:3]
    return pose


class HandPoseActions:
    """The hand-pose action space of a world's rigs (by name, "" for one rig alone), parts in the world's order."""

    def __init__(self, rigs: Mapping[str, Rig]):
        self.rigs = dict(rigs)
        for name, rig in self.rigs.items():
            arm = rig.parts.get("arm")
            if arm is None or arm.mount_frame is None:
                raise ConfigError(f"Hand-pose actions need every rig's arm with its mount frame known; rig "
                                  f"{name or rig.name!r} has {'none' if arm is None else 'a URDF arm without one'}: "
                                  "use joint actions (action_space=joints)")

    @staticmethod
    def _prefix(rig_name: str) -> str:
        return f"{rig_name}_" if rig_name else ""

    @property
    def joint_names(self) -> list[str]:
        """The joint vector's names, as a recording names its action and state."""
        return [f"{self._prefix(rig_name)}{key}" for rig_name, _, part in self._parts() for key in part.keys]

    def _parts(self):
        """(rig name, role, part) in the world's order: rig by rig, each rig's parts in its action order."""
        for rig_name, rig in self.rigs.items():
            for role, part in rig.parts.items():
                yield rig_name, role, part

    @property
    def action_names(self) -> list[str]:
        names = []
        for rig_name, role, part in self._parts():
            prefix = self._prefix(rig_name)
            names += [f"{prefix}hand_pose_{axis}" for axis in POSE_AXES] if role == "arm" else []
            names += [f"{prefix}{key}" for key in part.keys]
        return names

    @property
    def state_names(self) -> list[str]:
        """Beside the joints in observation.state: each hand's measured pose."""
        return [f"{self._prefix(rig_name)}hand_pose_{axis}" for rig_name in self.rigs for axis in POSE_AXES]

    def _split(self, vector: np.ndarray, sizes) -> list[np.ndarray]:
        parts, start = [], 0
        for size in sizes:
            parts.append(vector[..., start:start + size])
            start += size
        if start != vector.shape[-1]:
            raise ConfigError(f"Expected {start} values (every rig's parts in order), got "
                              f"{vector.shape[-1]}: a policy acting in hand poses must be trained on a copy of this "
                              "preset's recording (teledex-convert to-hand-pose --preset <the preset>)")
        return parts

    def _arm_pose_values(self, part: RigPart, q_arm: np.ndarray) -> np.ndarray:
        """(..., 6 joints) -> (..., 9) by forward kinematics."""
        flat = q_arm.reshape(-1, q_arm.shape[-1])
        assert part.mount_frame is not None
        values = [pose_values(part.model.frame_pose(part.full_configuration(q), part.mount_frame)) for q in flat]
        return np.asarray(values).reshape(*q_arm.shape[:-1], len(POSE_AXES))

    def from_joints(self, joints: np.ndarray) -> np.ndarray:
        """A joint action (or several, leading axes) -> the hand-pose action."""
        parts = self._split(np.asarray(joints, dtype=float), [len(part.joints) for *_, part in self._parts()])
        return np.concatenate([np.concatenate([self._arm_pose_values(part, q), q], axis=-1) if role == "arm" else q
                               for (_, role, part), q in zip(self._parts(), parts, strict=True)], axis=-1)

    def measured_poses(self, joints: np.ndarray) -> np.ndarray:
        """The state's joints (or several) -> each hand's pose (state_names)."""
        parts = self._split(np.asarray(joints, dtype=float), [len(part.joints) for *_, part in self._parts()])
        return np.concatenate([self._arm_pose_values(part, q)
                               for (_, role, part), q in zip(self._parts(), parts, strict=True) if role == "arm"],
                              axis=-1)

    def to_joints(self, action: np.ndarray) -> dict[tuple[str, str], np.ndarray]:
        """A hand-pose action -> joint targets per (rig, role): each arm's IK from the joints the action gives to
        the pose it gives."""
        sizes = [len(POSE_AXES) + len(part.joints) if role == "arm" else len(part.joints)
                 for _, role, part in self._parts()]
        targets = {}
        for (rig_name, role, part), values in zip(self._parts(), self._split(np.asarray(action, dtype=float), sizes),
                                                  strict=True):
            if role != "arm":
                targets[(rig_name, role)] = values
                continue
            assert part.mount_frame is not None
            start = part.full_configuration(np.clip(values[len(POSE_AXES):], part.lower, part.upper))
            result = solve_ik(part.model, part.mount_frame, pose_from_values(values[:len(POSE_AXES)]), start,
                              max_iters=IK_ITERATIONS, orientation_weight=ORIENTATION_WEIGHT)
            targets[(rig_name, role)] = result.q[part.indices]
        return targets


def hand_pose_actions_for(preset_name: str) -> HandPoseActions:
    """The hand-pose space of a preset's rigs, named as teledex-record names them (a preset of several: by follower)."""
    preset = load_preset(preset_name)
    if preset.followers:
        return HandPoseActions({name: Rig.from_preset(load_preset(follower))
                                for name, follower in preset.followers.items()})
    return HandPoseActions({"": Rig.from_preset(preset)})
