"""The scripted expert as a LeRobot teleoperator: drives a robot running with --robot.backend=mujoco.

route=joints returns the expert's joint targets; route=keypoints turns its plan into an operator's hand keypoints and
wrist pose, encodes them as keypoint-stream datagrams and runs them through the parser, hand retargeting and the
control chain a human operator's stream goes through. The expert plans afresh whenever the world starts an episode
(teledex-record calls the robot's reset_episode() before each one); once done it holds still. Recorders that do not
reset the world (lerobot-record) can let the expert lay out the next episode itself when it is done
(--teleop.lay_out_next_episode=true, with --dataset.episode_time_s about the task's plan, ~10 s).

Driving a robot of two followers, `left` and `right` (teledex_followers in a world of both), it runs the two-rig expert
of the task (world/bimanual_expert.py: the handover, the bimanual lift) and emits both rigs' prefixed keys.

It is not a person (`scripted`): teledex-record runs the world in lockstep with it. With --teleop.perturbation.* the
robot executes the expert's targets plus seeded recovery perturbations (world/perturbation.py) while the recording
keeps the expert's own targets as the actions (executed_action()); with --teleop.perturbation.place_miss_m the
perturbed bottle episodes aim the first insertion off the opening and show the expert's recovery; with
--teleop.perturbation.take_spread_m every handover's take aims a seeded millimetre or two off the half's centre,
with carry_spread_m its carry ends a seeded few millimetres off over the goal, with pass_delay_spread_s the right hand
comes for the half a seeded moment later.
With a station's input stalls (--robot.world.timing.input_stalls_per_min, world/station_timing.py) it delivers nothing
new during each: the same action, its sample ever older.
"""

import logging
from dataclasses import dataclass, field
from functools import cached_property

from lerobot.teleoperators import Teleoperator, TeleoperatorConfig
from lerobot.utils.decorators import check_if_already_connected, check_if_not_connected
from lerobot.utils.errors import DeviceNotConnectedError

from teledex_lerobot.errors import ConfigError
from teledex_lerobot.station import Station, join_station
from teledex_lerobot.world.bimanual_expert import HandoverExpert, LiftExpert, TwoRigExpert
from teledex_lerobot.world.devices import WorldRunner
from teledex_lerobot.world.expert import ScriptedExpert, UnreachableGrasp
from teledex_lerobot.world.operator_expert import OperatorExpert
from teledex_lerobot.world.perturbation import PerturbationConfig, TargetPerturbation
from teledex_lerobot.world.station_timing import InputStall
from teledex_lerobot.world.world import World, part_key

from .config_rig import TeledexRigTeleopConfig

logger = logging.getLogger(__name__)

ROUTES = ("joints", "keypoints")


@TeleoperatorConfig.register_subclass("teledex_world_expert")
@dataclass(kw_only=True)
class TeledexWorldExpertConfig(TeledexRigTeleopConfig):
    # joints: the planned joint targets sent as they are; keypoints: as operator hand keypoints + wrist poses through
    # the keypoint parser, hand retargeting and the control chain.
    route: str = "joints"
    # When done, lay out the next episode's world (for recorders that do not reset it, like lerobot-record).
    lay_out_next_episode: bool = False
    # Seconds the expert waits after finishing before it lays out the next episode (lay_out_next_episode).
    settle_s: float = 1.0
    # Recovery data (teledex-record): seeded noise on the executed targets, the expert's correction recorded.
    perturbation: PerturbationConfig = field(default_factory=PerturbationConfig)
    # Not a person: a world it drives may run in lockstep (teledex-record's --robot.world.clock=auto).
    scripted: bool = True

    def __post_init__(self):
        if self.route not in ROUTES:
            raise ConfigError(f"--teleop.route={self.route!r}: choose one of {', '.join(ROUTES)}")
        self.perturbation.validate()


class TeledexWorldExpert(Teleoperator):
    config_class = TeledexWorldExpertConfig
    name = "teledex_world_expert"

    def __init__(self, config: TeledexWorldExpertConfig):
        super().__init__(config)
        self.config = config
        self.rigs = config.rigs()  # key prefix ("" or "<follower>_") -> rig
        # every part driven, by its key in the world: its rig's key prefix and its role
        self._parts = {part_key(prefix.removesuffix("_"), role): (prefix, role)
                       for prefix, rig in self.rigs.items() for role in rig.parts}
        if len(self.rigs) > 1 and config.route != "joints":
            raise ConfigError(f"--teleop.route={config.route}: the two-rig expert sends joint targets only; use "
                              "--teleop.route=joints")
        self.expert: ScriptedExpert | OperatorExpert | TwoRigExpert | None = None  # for the world
        self.connected = False
        self.sample_capture_ns: int | None = None
        self.episodes_started = 0
        self.runner: WorldRunner | None = None
        self.station: Station | None = None  # its robot's, from connect: the world runs there
        self.perturbation = TargetPerturbation(config.perturbation)
        self._precise: frozenset[str] = frozenset()  # the parts in a precise phase at the last action (they fade)
        self._tick_s = self._last_tick_s = 0.0  # world time of the last action and of the one before
        self._stall: InputStall | None = None  # the world's input stalls (world.timing), made with the expert
        self._last_action: dict[str, float] | None = None  # this episode's
        self._unreachable: dict | None = None  # the held targets of a layout the expert cannot plan

    @cached_property
    def action_features(self) -> dict[str, type]:
        return {prefix + key: float for prefix, rig in self.rigs.items() for key in rig.action_keys}

    @cached_property
    def feedback_features(self) -> dict[str, type]:
        return {}

    @property
    def is_connected(self) -> bool:
        return self.connected

    @property
    def is_calibrated(self) -> bool:
        return True

    def calibrate(self) -> None:
        """Nothing to calibrate: the expert reads the world."""

    def configure(self) -> None:
        pass

    @check_if_already_connected
    def connect(self, calibrate: bool = True) -> None:
        """The world may not run yet (recorders connect the teleoperator first): the expert meets it at the first
        action."""
        self.station = join_station(self.config.station)
        self.connected = True
        self.expert = None
        self._planned_episode: int | None = None

    def _expert_for(self, world: World) -> ScriptedExpert | OperatorExpert | TwoRigExpert:
        if self.expert is None:
            self.expert = self._make_expert(world)
            timing = world.config.timing
            self._stall = InputStall(timing.input_stalls_per_min, timing.input_stall_ms, timing.seed, "input") \
                if timing.input_stalls_per_min else None
        return self.expert

    def _make_expert(self, world: World) -> ScriptedExpert | OperatorExpert | TwoRigExpert:
        task = world.config.task
        if world.task.rigs:
            rigs = {prefix.removesuffix("_"): rig for prefix, rig in self.rigs.items()}
            return HandoverExpert(rigs, task) if task == "handover" else LiftExpert(rigs, task)
        if list(self.rigs) != [""]:
            raise ConfigError(f"The task {task!r} is one rig's, and the robot has several followers "
                              f"({', '.join(p.removesuffix('_') for p in self.rigs)}): choose a two-rig task "
                              "(--robot.world.task=handover) or a robot of one rig")
        rig = self.rigs[""]
        scripted = ScriptedExpert(rig, task)
        return scripted if self.config.route == "joints" else OperatorExpert(rig, scripted)

    def _join(self, targets: dict) -> dict[str, float]:
        """The action of every part's targets (by world part key)."""
        action: dict[str, float] = {}
        for prefix, rig in self.rigs.items():
            own = rig.join({role: targets[key] for key, (each, role) in self._parts.items() if each == prefix})
            action.update({prefix + key: value for key, value in own.items()})
        return action

    def _split(self, action: dict[str, float]) -> dict:
        """Every part's targets (by world part key) in an action."""
        targets = {}
        for prefix, rig in self.rigs.items():
            own = rig.split_action({key.removeprefix(prefix): value for key, value in action.items()
                                    if key.startswith(prefix)}, self.name)
            targets.update({part_key(prefix.removesuffix("_"), role): q for role, q in own.items()})
        return targets

    @property
    def _station(self) -> Station:
        if self.station is None:
            raise DeviceNotConnectedError(f"{self} is not connected: call connect() first")
        return self.station

    def attach_world(self, runner: WorldRunner) -> None:
        """The world to read (teledex-record passes the robot's); without, the one of the robot in its station."""
        self.runner = runner

    @check_if_not_connected
    def get_action(self) -> dict[str, float]:
        runner = self.runner or self._station.world()
        world = runner.world
        expert = self._expert_for(world)
        with world.lock:
            if self._planned_episode is not None and self.config.lay_out_next_episode and \
                    self._finished(world, expert):
                runner.reset_episode()
            if world.episode_index != self._planned_episode:
                self.perturbation.reset(world.episode_seed)
                self._unreachable = None
                try:
                    expert.reset(world, self.perturbation.place_miss_m, self.perturbation.handover)
                except UnreachableGrasp as error:  # this layout is beyond the arms: a failed episode, not a crash
                    logger.warning("layout seed %d: %s; the expert holds the robot where it is (the episode fails)",
                                   world.episode_seed, error)
                    self._unreachable = {key: world.joint_positions(key) for key in self._parts}
                self._planned_episode = world.episode_index
                self._episode_start_s = world.time_s
                self.episodes_started += 1
                self._tick_s = world.time_s
                self._last_action = None
            now_ns = runner.clock.now_ns()
            if self._last_action is not None and self._stall is not None and self._stall.stalled(now_ns):
                self._last_tick_s = self._tick_s  # nothing new: the robot holds, the perturbation too
                return dict(self._last_action)
            targets = expert.act(world) if self._unreachable is None else self._unreachable
            self._precise = expert.precise_parts if self._unreachable is None else frozenset()
            self._last_tick_s, self._tick_s = self._tick_s, world.time_s
        self.sample_capture_ns = now_ns
        self._last_action = self._join(targets)
        return dict(self._last_action)

    def executed_action(self, action: dict[str, float]) -> dict[str, float]:
        """What the robot executes for the expert's action: the action itself, or with this episode's recovery
        perturbation added (teledex-record sends this and records the action)."""
        if not self.perturbation.active:
            return action
        parts = {key: self.rigs[prefix].parts[role] for key, (prefix, role) in self._parts.items()}
        executed = self.perturbation.apply(self._split(action), self._tick_s - self._last_tick_s, self._precise,
                                           {key: part.lower for key, part in parts.items()},
                                           {key: part.upper for key, part in parts.items()})
        return self._join(executed)

    def _finished(self, world: World, expert: ScriptedExpert | OperatorExpert | TwoRigExpert) -> bool:
        elapsed = world.time_s - self._episode_start_s
        if self._unreachable is not None:  # nothing planned: the next layout once the settle time is over
            return elapsed >= self.config.settle_s
        plan_s = expert.plan_duration_s
        return elapsed >= min(world.task.episode_s, plan_s + self.config.settle_s)

    def send_feedback(self, feedback: dict) -> None:
        pass

    @check_if_not_connected
    def disconnect(self) -> None:
        self.connected = False
        self.expert = None
        self.station = None
