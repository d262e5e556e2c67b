"""The MuJoCo world: a rig built from our URDFs (or several, placed side by side), a table, a task's objects, cameras;
stepped by one owner.

The world is not thread-safe by itself: whoever steps it (the real-time runner, or the gym env) holds `lock` while
touching `data`. Servo targets go through `set_targets`; each physics step moves every servo's set-point toward its
target by at most the joint's velocity limit times the timestep.

Parts are named by their role ("arm", "hand") in a world of one rig, and by rig and role ("left/arm") in a world of
several (`part_key`); their bodies carry the same prefix. One physics step moves every rig.
"""

import xml.etree.ElementTree as ET
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field

import mujoco
import numpy as np
from scipy.spatial.transform import Rotation

from ..errors import ConfigError
from ..geometry.camera import WRIST_VIEW, view_pose
from ..presets import RigPlacement, rig_placement
from ..rig import Rig
from .mjcf import (
    GRIP_CLASS,
    SCENE_CONAFFINITY,
    SCENE_CONTYPE,
    ActuatedJoint,
    add_robot,
    add_wrist_camera,
    arm_base_height_m,
)
from .randomization import RandomizationConfig, Randomizer
from .station_timing import StationTimingConfig
from .tasks import ObjectPose, Task, make_task

# The table: its top is the world's z = 0; it starts this far in front of the arm's base (an arm mounted below the
# table top stands at its edge) and ends far beyond the workspace.
TABLE_NEAR_EDGE_M = 0.12
TABLE_FAR_EDGE_M = 0.9
TABLE_HALF_WIDTH_M = 0.6
TABLE_THICKNESS_M = 0.04
FLOOR_M = -0.75  # what falls off the table lands here
CAMERA_FOVY_DEG = 55.0  # as the stick-figure camera (robots/lerobot_robot_teledex/cameras/rig_renderer.py)
# How the world's time passes (world/devices.py): with the wall clock, one control period per recorded tick, or
# whichever suits who drives (teledex-record: lockstep for a scripted teleoperator, real time for a person).
REAL_TIME, LOCKSTEP, AUTO = "real_time", "lockstep", "auto"
CLOCKS = (AUTO, REAL_TIME, LOCKSTEP)


@dataclass
class ContactConfig:
    """Contact model of the hand and the task objects (the MJCF default class "grip"). Defaults measured with
    benchmarks/grasp_grid.py: a held object slips < 5 mm in 5 s."""

    cone: str = "elliptic"  # friction cone: elliptic (holds grasps) or pyramidal (cheaper)
    impratio: float = 100.0  # how much stiffer friction is than the normal force (high: fingers do not slide)
    noslip_iterations: int = 3  # MuJoCo's no-slip solver passes per step (0 = off)
    timestep_s: float = 0.002  # physics step
    friction: float = 1.0  # sliding friction of fingers and objects (rubber on plastic)
    condim: int = 4  # 3: sliding only; 4: + torsional; 6: + rolling
    solref_timeconst_s: float = 0.005  # contact stiffness (>= 2 timesteps)

    def validate(self) -> None:
        if self.cone not in ("elliptic", "pyramidal"):
            raise ConfigError(f"world.contact.cone must be 'elliptic' or 'pyramidal' (got {self.cone!r})")
        if self.impratio < 1 or self.noslip_iterations < 0 or not 0 < self.timestep_s <= 0.01:
            raise ConfigError(f"world.contact needs impratio >= 1, noslip_iterations >= 0, 0 < timestep_s <= 0.01 (got "
                              f"{self.impratio}, {self.noslip_iterations}, {self.timestep_s})")
        if self.friction <= 0 or self.condim not in (3, 4, 6):
            raise ConfigError(f"world.contact needs friction > 0 and condim one of 3, 4, 6 (got {self.friction}, "
                              f"{self.condim})")
        if self.solref_timeconst_s < 2 * self.timestep_s:
            raise ConfigError(f"world.contact.solref_timeconst_s must be >= 2 timesteps ({2 * self.timestep_s} s; got "
                              f"{self.solref_timeconst_s}): MuJoCo would silently clamp it")


@dataclass
class WorldConfig:
    """--robot.world.*: which task, which layout, which contact model."""

    task: str = "cube_assembly"  # cube_assembly or bottle_peg_in_hole
    seed: int = 0  # layout of the first episode; episode i (counting resets) has the layout of seed + i
    # Object poses (position, quaternion wxyz per object) in the robot's observation, so state-based policies can
    # learn from them: teledex-record writes them to observation.environment_state (lerobot-record, which knows no
    # environment state, appends them to observation.state).
    observe_objects: bool = True
    # With the object poses, the task's relations to its goal (Task.relations: the bottle's bottom from the opening),
    # what a state-based policy would otherwise compute from two poses to the millimetre.
    observe_relations: bool = False
    contact: ContactConfig = field(default_factory=ContactConfig)  # --robot.world.contact.*: the contact model
    # real_time: physics keeps pace with the wall clock (a person drives); lockstep: it advances one control period
    # per recorded tick, as fast as the CPU allows, deterministic per seed (a script or a policy drives); auto:
    # teledex-record picks lockstep for a scripted teleoperator, real time otherwise.
    clock: str = AUTO
    # --robot.world.randomize.*: seeded per-episode variation (layout spread, mass, friction, colours, lighting)
    randomize: RandomizationConfig = field(default_factory=RandomizationConfig)
    # --robot.world.timing.*: a real station's camera and joint-read latency, jitter and lost frames (station_timing.py)
    timing: StationTimingConfig = field(default_factory=StationTimingConfig)

    def validate(self) -> None:
        make_task(self.task)
        self.contact.validate()
        self.randomize.validate()
        self.timing.validate()
        if self.clock not in CLOCKS:
            raise ConfigError(f"world.clock must be one of {', '.join(CLOCKS)} (got {self.clock!r})")


@dataclass(frozen=True)
class PlacedRig:
    """One rig of a world of several, and where its base stands: `xyz_m` from where a rig alone would stand (the
    table's edge at the origin, the height its kind of mount takes), turned `yaw_rad` about the vertical."""

    rig: Rig
    xyz_m: tuple[float, float, float] = (0.0, 0.0, 0.0)
    yaw_rad: float = 0.0


def placed_rigs(rigs: Mapping[str, Rig], placements: dict[str, RigPlacement]) -> dict[str, PlacedRig]:
    """Several rigs, by name, as a world's: each where `placements` puts it, or in a row along the table's edge
    (presets.rig_placement)."""
    placed = {}
    for name, rig in rigs.items():
        placement = rig_placement(list(rigs), placements, name)
        placed[name] = PlacedRig(rig, placement.xyz_m, placement.yaw_rad)
    return placed


def part_key(rig_name: str, role: str) -> str:
    """A part's name in the world: its role in a world of one rig (rig_name ""), "<rig>/<role>" in one of several."""
    return f"{rig_name}/{role}" if rig_name else role


def object_state_names(task_name: str, relations: bool = False) -> list[str]:
    """Names of a task's object-state values (position m, quaternion wxyz per object, then with `relations` the
    task's relations), in World.object_state() order."""
    task = make_task(task_name)
    return [f"{name}_{c}" for name in task.objects for c in ("x", "y", "z", "qw", "qx", "qy", "qz")] + \
        (list(task.relation_names) if relations else [])


def build_world_xml(rigs: Mapping[str, PlacedRig], task: Task, contact: ContactConfig, cameras: dict[str, str],
                    stereo_baselines_m: dict[str, float] | None = None,
                    camera_rigs: dict[str, str] | None = None) -> tuple[str, list]:
    """MJCF text of the whole scene and the servos in action order (rig by rig). rigs: name -> placed rig (one rig:
    the name ""); cameras: name -> view; camera_rigs: name -> the rig a wrist camera rides on (needed with several);
    stereo_baselines_m: name -> the baseline of a stereo pair, written as the camera's ipd (MuJoCo's own stereo;
    camera.WorldRenderer renders each eye). Every other camera gets ipd 0: one viewpoint, as a mono render (the eyes'
    average) had it."""
    root = ET.Element("mujoco", model=f"teledex_{task.name}")
    ET.SubElement(root, "compiler", angle="radian", autolimits="true")
    option = ET.SubElement(root, "option", timestep=f"{contact.timestep_s}", integrator="implicitfast",
                           cone=contact.cone, impratio=f"{contact.impratio}")
    if contact.noslip_iterations:
        option.set("noslip_iterations", str(contact.noslip_iterations))
    default = ET.SubElement(ET.SubElement(root, "default"), "default", attrib={"class": GRIP_CLASS})
    ET.SubElement(default, "geom", friction=f"{contact.friction} 0.02 0.0005", condim=str(contact.condim),
                  solref=f"{contact.solref_timeconst_s} 1")
    visual = ET.SubElement(root, "visual")
    ET.SubElement(visual, "global", offwidth="1280", offheight="960")
    # no multisampling: on a CPU (Mesa llvmpipe) 4x MSAA, MuJoCo's default, tripled a 640x480 frame's cost (41 vs 14
    # ms), which a loaded station cannot spare, for edges a camera of that size hardly shows
    ET.SubElement(visual, "quality", shadowsize="0", offsamples="0")
    ET.SubElement(visual, "headlight", ambient="0.35 0.35 0.35", diffuse="0.5 0.5 0.5", specular="0.1 0.1 0.1")
    asset = ET.SubElement(root, "asset")
    ET.SubElement(asset, "texture", name="grid", type="2d", builtin="checker", width="256", height="256",
                  rgb1="0.32 0.34 0.38", rgb2="0.28 0.30 0.34")
    ET.SubElement(asset, "material", name="table", texture="grid", texrepeat="8 8", reflectance="0")
    worldbody = ET.SubElement(root, "worldbody")
    ET.SubElement(worldbody, "light", pos="0.3 0 1.5", dir="0 0 -1", castshadow="false", diffuse="0.6 0.6 0.6")
    table_half_length = (TABLE_FAR_EDGE_M - TABLE_NEAR_EDGE_M) / 2
    ET.SubElement(worldbody, "geom", name="table", type="box", material="table",
                  pos=f"{TABLE_NEAR_EDGE_M + table_half_length} 0 {-TABLE_THICKNESS_M / 2}",
                  size=f"{table_half_length} {TABLE_HALF_WIDTH_M} {TABLE_THICKNESS_M / 2}",
                  contype=str(SCENE_CONTYPE), conaffinity=str(SCENE_CONAFFINITY))
    ET.SubElement(worldbody, "geom", name="floor", type="plane", size="3 3 0.1", pos=f"0 0 {FLOOR_M}",
                  rgba="0.2 0.2 0.22 1", contype=str(SCENE_CONTYPE), conaffinity=str(SCENE_CONAFFINITY))
    actuators = ET.SubElement(root, "actuator")
    equality = ET.SubElement(root, "equality")
    servos = []
    for rig_name, placed in rigs.items():
        servos += _add_rig(worldbody, actuators, equality, rig_name, placed)
    task.add_objects(worldbody)
    for name, view in cameras.items():
        baseline_m = float((stereo_baselines_m or {}).get(name, 0.0))
        if view == WRIST_VIEW:
            rig_name = (camera_rigs or {}).get(name, "")
            if rig_name not in rigs:
                raise ConfigError(f"Camera {name!r} has the wrist view: say which rig's wrist it rides on, one of "
                                  f"{sorted(rigs)}")
            add_wrist_camera(worldbody, rigs[rig_name].rig, name, baseline_m, _prefix(rig_name))
            continue
        pose = view_pose(view, task.workspace_centre_m(), task.view_distance_m)
        right, up = pose[:3, 0], -pose[:3, 1]
        ET.SubElement(worldbody, "camera", name=name, pos=" ".join(f"{v:.6g}" for v in pose[:3, 3]),
                      xyaxes=" ".join(f"{v:.6g}" for v in (*right, *up)), fovy=f"{CAMERA_FOVY_DEG}",
                      ipd=repr(baseline_m))
    if not len(equality):
        root.remove(equality)
    return ET.tostring(root, encoding="unicode"), servos


def _prefix(rig_name: str) -> str:
    return f"{rig_name}/" if rig_name else ""


def _add_rig(worldbody: ET.Element, actuators: ET.Element, equality: ET.Element, rig_name: str,
             placed: PlacedRig) -> list:
    """One rig's stand, bodies and servos where its placement puts it."""
    rig, prefix = placed.rig, _prefix(rig_name)
    offset = np.asarray(placed.xyz_m, dtype=float)
    base = offset + [0.0, 0.0, arm_base_height_m(rig)]
    if "arm" in rig.parts and FLOOR_M < base[2] < 0:  # the stand the arm is mounted on (drawn only)
        ET.SubElement(worldbody, "geom", name=f"{prefix}arm_stand", type="cylinder",
                      size=f"0.06 {(base[2] - FLOOR_M) / 2}",
                      pos=f"{base[0]:.6g} {base[1]:.6g} {(base[2] + FLOOR_M) / 2}",
                      rgba="0.4 0.42 0.45 1", contype="0", conaffinity="0")
    free_hand = None
    if "arm" not in rig.parts:  # a hand alone hangs above the workspace, palm down, fingers forward
        yaw = Rotation.from_euler("z", placed.yaw_rad).as_matrix()
        free_hand = np.eye(4)
        free_hand[:3, :3] = yaw @ np.array([[0, 0, 1], [0, -1, 0], [1, 0, 0]], dtype=float).T
        free_hand[:3, 3] = offset + yaw @ [0.2, 0.0, 0.25]
    return add_robot(worldbody, actuators, equality, rig, tuple(base), free_hand, prefix, placed.yaw_rad)


class World:
    """One scene: model, data, the task, the servos. Control rate and physics rate are the owner's business:
    `step_for(duration_s)` advances whole physics steps.

    `rig`: one rig, or several by name, each placed (PlacedRig); `camera_rigs` names the rig each wrist camera rides
    on in a world of several."""

    def __init__(self, rig: Rig | Mapping[str, PlacedRig], config: WorldConfig | None = None,
                 cameras: dict[str, str] | None = None, stereo_baselines_m: dict[str, float] | None = None,
                 camera_rigs: dict[str, str] | None = None):
        import threading

        self.config = config or WorldConfig()
        self.config.validate()
        self.rigs: dict[str, PlacedRig] = {"": PlacedRig(rig)} if isinstance(rig, Rig) else dict(rig)
        if not self.rigs or (len(self.rigs) > 1 and "" in self.rigs) or any("/" in name for name in self.rigs):
            raise ConfigError(f"A world's rigs need names without '/' (one rig alone may go unnamed); got "
                              f"{sorted(self.rigs)}")
        # every part by its key (part_key): the devices' names for it
        self.parts = {part_key(rig_name, role): part for rig_name, placed in self.rigs.items()
                      for role, part in placed.rig.parts.items()}
        self.task = make_task(self.config.task)
        if self.task.rigs and set(self.task.rigs) != set(self.rigs):
            held = ", ".join(sorted(self.rigs)) if len(self.rigs) > 1 else "one rig"
            raise ConfigError(f"The task {self.task.name!r} needs {len(self.task.rigs)} rigs named "
                              f"{' and '.join(self.task.rigs)}; this world has {held}: use "
                              "--robot.type=teledex_followers --robot.preset=bimanual_piper_linkerhand_l10")
        self.cameras = dict(cameras or {"top": "oblique"})
        self.camera_rigs = dict(camera_rigs or {})
        self.xml, self.servos = build_world_xml(self.rigs, self.task, self.config.contact, self.cameras,
                                                stereo_baselines_m, self.camera_rigs)
        self.model = mujoco.MjModel.from_xml_string(self.xml)
        self.data = mujoco.MjData(self.model)
        self.lock = threading.RLock()
        self._joint_qpos = {key: np.array([self.model.joint(self._servo(key, joint).joint).qposadr[0]
                                           for joint in part.keys]) for key, part in self.parts.items()}
        self._joint_dof = {key: np.array([self.model.joint(self._servo(key, joint).joint).dofadr[0]
                                          for joint in part.keys]) for key, part in self.parts.items()}
        self._actuator_ids = {key: np.array([self.model.actuator(self._servo(key, joint).actuator).id
                                             for joint in part.keys]) for key, part in self.parts.items()}
        self._max_step = np.array([s.velocity_limit for s in self.servos]) * self.model.opt.timestep
        self.targets = np.zeros(self.model.nu)
        body_names = [self.model.body(self.model.geom_bodyid[g]).name for g in range(self.model.ngeom)]
        self._robot_geoms = {g for g, name in enumerate(body_names)
                             if name.startswith(tuple(f"{key}/" for key in self.parts))}
        # each rig's hand geoms, by rig name
        self._rig_hand_geoms = {rig_name: {g for g, name in enumerate(body_names)
                                           if name.startswith(f"{part_key(rig_name, 'hand')}/")}
                                for rig_name in self.rigs}
        self._hand_geoms = set().union(*self._rig_hand_geoms.values())
        free_objects = [name for name in self.task.objects if self.model.body(name).jntnum[0] > 0]
        grip_geoms = [g for g in self._hand_geoms | {g for g in range(self.model.ngeom) if self.model.body(
            self.model.geom_bodyid[g]).name in self.task.objects}]
        self._randomizer = Randomizer(self.model, self.config.randomize, free_objects, sorted(grip_geoms), "table",
                                      list(self.task.objects))
        self.episode_randomization: dict = {}
        self._initial_positions: dict[str, np.ndarray] = {}
        self.episode_index = 0
        self.episode_seed = self.reset()

    def _servo(self, part: str, key: str) -> ActuatedJoint:
        """The servo of a part's joint (its action key)."""
        name = f"{part}/{self.parts[part].joints[self.parts[part].keys.index(key)]}"
        return next(s for s in self.servos if s.joint == name)

    @property
    def rig(self) -> Rig:
        """The world's rig, when it has one."""
        if len(self.rigs) != 1:
            raise ConfigError(f"This world holds several rigs ({', '.join(self.rigs)}): name one (world.rigs)")
        return next(iter(self.rigs.values())).rig

    # ---- episode ------------------------------------------------------------------------------------------------

    def reset(self, seed: int | None = None) -> int:
        """Start an episode: robot at home, objects at the layout of `seed` (default: the world's seed plus the
        number of episodes started so far). Returns the layout's seed; `episode_index` counts the episodes."""
        with self.lock:
            seed = self.config.seed + self.episode_index if seed is None else seed
            self.episode_seed = seed
            self.episode_index += 1
            rng = np.random.default_rng(seed)
            mujoco.mj_resetData(self.model, self.data)
            for key, part in self.parts.items():
                self.data.qpos[self._joint_qpos[key]] = part.home
                self.data.ctrl[self._actuator_ids[key]] = part.home
                self.targets[self._actuator_ids[key]] = part.home
            self._apply_mimics()
            self.episode_randomization = self._randomizer.apply(seed)
            for name, (position, yaw) in self.task.layout(rng, self.config.randomize.layout_spread).items():
                quat = np.array([np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)])
                body = self.model.body(name)
                if body.jntnum[0] > 0:  # a free object
                    address = self.model.jnt_qposadr[body.jntadr[0]]
                    self.data.qpos[address:address + 3] = position
                    self.data.qpos[address + 3:address + 7] = quat
                else:  # a static fixture
                    self.model.body_pos[body.id] = position
                    self.model.body_quat[body.id] = quat
                self._initial_positions[name] = np.asarray(position, dtype=float).copy()
            mujoco.mj_forward(self.model, self.data)
        return seed

    def _apply_mimics(self) -> None:
        """Start mimic joints where their equality wants them (no jolt on the first step)."""
        for index in range(self.model.neq):
            if self.model.eq_type[index] != mujoco.mjtEq.mjEQ_JOINT:
                continue
            child, source = self.model.eq_obj1id[index], self.model.eq_obj2id[index]
            offset, multiplier = self.model.eq_data[index][:2]
            self.data.qpos[self.model.jnt_qposadr[child]] = offset + multiplier * self.data.qpos[
                self.model.jnt_qposadr[source]]

    def initial_position(self, body: str) -> np.ndarray:
        return self._initial_positions[body]

    def episode_description(self) -> dict:
        """What laid out the current episode: the task, the seed, where each object started, what was randomised."""
        return {"task": self.task.name, "seed": self.episode_seed,
                "initial_positions_m": {name: np.round(p, 6).tolist() for name, p in self._initial_positions.items()},
                "randomization": {"config": asdict(self.config.randomize), **self.episode_randomization}}

    # ---- stepping -----------------------------------------------------------------------------------------------

    def set_targets(self, role: str, positions: np.ndarray) -> None:
        self.targets[self._actuator_ids[role]] = positions

    def step(self, n_steps: int = 1) -> None:
        model, data = self.model, self.data
        for _ in range(n_steps):
            data.ctrl[:] += np.clip(self.targets - data.ctrl, -self._max_step, self._max_step)
            mujoco.mj_step(model, data)

    def steps_for(self, duration_s: float) -> int:
        return max(1, round(duration_s / self.model.opt.timestep))

    @property
    def time_s(self) -> float:
        return float(self.data.time)

    # ---- state --------------------------------------------------------------------------------------------------

    def joint_positions(self, role: str) -> np.ndarray:
        return self.data.qpos[self._joint_qpos[role]].copy()

    def joint_velocities(self, role: str) -> np.ndarray:
        return self.data.qvel[self._joint_dof[role]].copy()

    def object_pose(self, name: str) -> ObjectPose:
        body = self.data.body(name)
        return ObjectPose(body.xpos.copy(), body.xquat.copy())

    def body_position(self, name: str) -> np.ndarray:
        return self.data.body(name).xpos.copy()

    def base_pose(self, rig_name: str = "") -> np.ndarray:
        """4x4 pose of a rig's base (the arm's root link, or a hand's alone) in the world: the frame the rig's
        kinematics, its drawing and its cameras' poses are given in."""
        return self._root_pose(rig_name, "arm" if "arm" in self.rigs[rig_name].rig.parts else "hand")

    def hand_pose(self, rig_name: str = "") -> np.ndarray:
        """4x4 pose of a rig's hand (its root link) in the world."""
        return self._root_pose(rig_name, "hand")

    def _root_pose(self, rig_name: str, role: str) -> np.ndarray:
        part = self.rigs[rig_name].rig.parts[role]
        return self.body_pose(f"{part_key(rig_name, role)}/{part.model.description.root_link}")

    def body_pose(self, name: str) -> np.ndarray:
        body = self.data.body(name)
        pose = np.eye(4)
        pose[:3, :3] = body.xmat.reshape(3, 3)
        pose[:3, 3] = body.xpos
        return pose

    def object_state(self) -> np.ndarray:
        values = []
        for name in self.task.objects:
            pose = self.object_pose(name)
            quat = pose.quat_wxyz if pose.quat_wxyz[0] >= 0 else -pose.quat_wxyz  # one sign per rotation
            values.extend([*pose.position_m, *quat])
        relations = self.task.relations(self) if self.config.observe_relations else np.zeros(0)
        return np.concatenate([values, relations])

    def hand_touches(self, body: str) -> bool:
        """Whether any robot geom is in contact with the body."""
        body_id = self.model.body(body).id
        data = self.data
        for index in range(data.ncon):
            contact = data.contact[index]
            geoms = (contact.geom1, contact.geom2)
            bodies = (self.model.geom_bodyid[contact.geom1], self.model.geom_bodyid[contact.geom2])
            if body_id in bodies and any(g in self._robot_geoms for g in geoms):
                return True
        return False

    def hand_links_touching(self, rig_name: str = "") -> frozenset[str]:
        """A rig's hand's URDF links in contact with anything but the robot (objects, the table): what touch sensors
        on every link would report."""
        hand_geoms, prefix = self._rig_hand_geoms[rig_name], f"{part_key(rig_name, 'hand')}/"
        links = set()
        for index in range(self.data.ncon):
            contact = self.data.contact[index]
            for geom, other in ((contact.geom1, contact.geom2), (contact.geom2, contact.geom1)):
                if geom in hand_geoms and other not in self._robot_geoms:
                    links.add(self.model.body(self.model.geom_bodyid[geom]).name.removeprefix(prefix))
        return frozenset(links)

    def hands_touching(self, body: str) -> set[str]:
        """The rigs (by name) whose hand is in contact with the body."""
        body_id = self.model.body(body).id
        rigs = set()
        for index in range(self.data.ncon):
            contact = self.data.contact[index]
            for geom, other in ((contact.geom1, contact.geom2), (contact.geom2, contact.geom1)):
                if self.model.geom_bodyid[other] == body_id:
                    rigs |= {name for name, geoms in self._rig_hand_geoms.items() if geom in geoms}
        return rigs

    def hand_bodies_touching(self, body: str) -> int:
        """How many distinct hand links touch the body (two or more: held between them)."""
        body_id = self.model.body(body).id
        links = set()
        for index in range(self.data.ncon):
            contact = self.data.contact[index]
            for geom, other in ((contact.geom1, contact.geom2), (contact.geom2, contact.geom1)):
                if geom in self._hand_geoms and self.model.geom_bodyid[other] == body_id:
                    links.add(self.model.geom_bodyid[geom])
        return len(links)
