"""A grasp test rig: a hand alone, welded to a mocap target (a stiff arm), and one task object on the table.

One trial: the hand comes to the grasp's pre-grasp pose with its preshape, moves to the grasp pose, closes, lifts
the object, then holds still; the rig measures how far the object moved in the hand during the hold (slip) and
whether it came up with the hand. benchmarks/grasp_grid.py runs it over grasps, contact settings, finger forces and
object properties; tests/world/test_world.py holds the defaults to < 5 mm of slip in 5 s.
"""

from dataclasses import dataclass

import mujoco
import numpy as np
from scipy.spatial.transform import Rotation, Slerp

from ..control.hand_grasps import hand_shape, mirrored_joints
from ..presets import PartSpec
from ..rig import Rig
from .grasps import Grasp, heading_frame
from .mjcf import HAND_TARGET_BODY
from .world import ContactConfig, World, WorldConfig

APPROACH_S = 1.0
CLOSE_S = 1.1
LIFT_M = 0.1
LIFT_S = 1.0
SETTLE_S = 0.3
# Held: the object rose with the hand (at least this share of the lift) and slipped less than this in the hold.
LIFTED_SHARE = 0.9
MAX_SLIP_M = 0.005


@dataclass(frozen=True)
class HoldResult:
    lifted_m: float  # how far the object rose from where it lay
    slip_m: float  # how far the object moved in the hand frame during the hold
    rotation_rad: float  # how far it turned in the hand frame during the hold

    @property
    def held(self) -> bool:
        return self.lifted_m >= LIFTED_SHARE * LIFT_M and self.slip_m < MAX_SLIP_M


class GraspRig:
    """The hand of `hand` (a PartSpec) over the objects of `task`, with `contact` as the world's contact model."""

    def __init__(self, hand: PartSpec, task: str, contact: ContactConfig | None = None):
        self.rig = Rig.from_parts(arm=None, hand=hand)
        self.hand = self.rig.parts["hand"]
        self.world = World(self.rig, WorldConfig(task=task, contact=contact or ContactConfig()))
        model = self.world.model
        self._target = model.body(HAND_TARGET_BODY).mocapid[0]
        free = model.joint("hand/free")
        self._free_qpos, self._free_dof = free.qposadr[0], free.dofadr[0]
        self._hand_body = f"hand/{self.hand.model.description.root_link}"

    def shape(self, shape: dict[str, float]) -> np.ndarray:
        return hand_shape(self.hand.joints, shape, self.hand.lower, self.hand.upper,
                          mirrored_joints(self.hand.spec.model, self.hand.spec.side))

    def set_finger_effort(self, effort_nm: float) -> None:
        """Every hand servo's force limit (N m), with its stiffness scaled to keep full effort at the same error."""
        model = self.world.model
        for actuator in self.world._actuator_ids["hand"]:
            old = model.actuator_forcerange[actuator, 1]
            model.actuator_forcerange[actuator] = [-effort_nm, effort_nm]
            model.actuator_gainprm[actuator, 0] *= effort_nm / old
            model.actuator_biasprm[actuator, 1] *= effort_nm / old

    def set_object_mass(self, name: str, mass_kg: float) -> None:
        model = self.world.model
        body = model.body(name).id
        scale = mass_kg / model.body_mass[body]
        model.body_mass[body] *= scale
        model.body_inertia[body] *= scale

    def _place_target(self, pose: np.ndarray, teleport: bool = False) -> None:
        data = self.world.data
        x, y, z, w = Rotation.from_matrix(pose[:3, :3]).as_quat()
        data.mocap_pos[self._target] = pose[:3, 3]
        data.mocap_quat[self._target] = [w, x, y, z]
        if teleport:
            data.qpos[self._free_qpos:self._free_qpos + 3] = pose[:3, 3]
            data.qpos[self._free_qpos + 3:self._free_qpos + 7] = [w, x, y, z]
            data.qvel[self._free_dof:self._free_dof + 6] = 0.0

    def _move(self, start: np.ndarray, goal: np.ndarray, duration_s: float) -> None:
        world = self.world
        steps = world.steps_for(duration_s)
        slerp = Slerp([0.0, 1.0], Rotation.from_matrix(np.stack([start[:3, :3], goal[:3, :3]])))
        for step in range(1, steps + 1):
            progress = step / steps
            smooth = progress * progress * (3 - 2 * progress)
            pose = np.eye(4)
            pose[:3, :3] = slerp(smooth).as_matrix()
            pose[:3, 3] = start[:3, 3] + smooth * (goal[:3, 3] - start[:3, 3])
            self._place_target(pose)
            world.step(1)

    def object_in_hand(self, name: str) -> np.ndarray:
        return np.linalg.inv(self.world.body_pose(self._hand_body)) @ self.world.body_pose(name)

    def heading_frame(self, grasp: Grasp, name: str, offset_m=(0.0, 0.0, 0.0),
                      heading_error_rad: float = 0.0) -> np.ndarray:
        """The object's heading frame as it lies (the heading along a face for a square object), displaced by
        offset_m (in that frame) and turned by heading_error_rad to model where a real arm lands."""
        pose = self.world.object_pose(name)
        frame = heading_frame(pose.position_m, (pose.yaw_rad if grasp.symmetry else 0.0) + heading_error_rad)
        frame[:3, 3] += frame[:3, :3] @ np.asarray(offset_m, dtype=float)
        return frame

    def trial(self, grasp: Grasp, name: str, seed: int = 0, hold_s: float = 5.0, offset_m=(0.0, 0.0, 0.0),
              heading_error_rad: float = 0.0) -> HoldResult:
        world = self.world
        world.reset(seed)
        for other in world.task.objects:  # only the object under test stays on the table
            if other != name and world.model.body(other).jntnum[0] > 0:
                address = world.model.jnt_qposadr[world.model.body(other).jntadr[0]]
                world.data.qpos[address:address + 3] = [0.8, 0.5, 0.05]
        mujoco.mj_forward(world.model, world.data)
        start_height = world.body_position(name)[2]
        frame = self.heading_frame(grasp, name, offset_m, heading_error_rad)
        grasp_pose = frame @ grasp.hand_in_heading()
        pre_grasp = grasp_pose.copy()
        pre_grasp[:3, 3] += frame[:3, :3] @ np.asarray(grasp.approach_m)
        preshape, closed = self.shape(grasp.preshape), self.shape(grasp.closed)
        world.data.qpos[world._joint_qpos["hand"]] = preshape
        world.data.ctrl[world._actuator_ids["hand"]] = preshape
        world.set_targets("hand", preshape)
        world._apply_mimics()
        self._place_target(pre_grasp, teleport=True)
        mujoco.mj_forward(world.model, world.data)
        if world.hand_touches(name):
            raise ValueError(f"The {grasp.name} grasp's pre-grasp pose puts the hand inside the {name}: approach "
                             "from farther away (Grasp.approach_m)")
        world.step(world.steps_for(SETTLE_S))
        self._move(pre_grasp, grasp_pose, APPROACH_S)
        world.set_targets("hand", closed)
        world.step(world.steps_for(CLOSE_S))
        lifted = grasp_pose.copy()
        lifted[2, 3] += LIFT_M
        self._move(grasp_pose, lifted, LIFT_S)
        world.step(world.steps_for(SETTLE_S))
        before = self.object_in_hand(name)
        world.step(world.steps_for(hold_s))
        after = self.object_in_hand(name)
        turn = Rotation.from_matrix(after[:3, :3] @ before[:3, :3].T).magnitude()
        return HoldResult(float(world.body_position(name)[2] - start_height),
                          float(np.linalg.norm(after[:3, 3] - before[:3, 3])), float(turn))
