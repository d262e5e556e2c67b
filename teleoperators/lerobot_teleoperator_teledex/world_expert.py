"""The scripted expert as a LeRobot teleoperator: drives a robot running with --robot.backend=mujoco.

route=joints returns the expert's joint targets; route=keypoints turns its plan into an operator's hand keypoints and
wrist pose, encodes them as keypoint-stream datagrams and runs them through the parser, hand retargeting and the
control chain a human operator's stream goes through. When the expert has finished (or the task's time is up) it
lays out the next episode in the world: one expert episode per recorded episode when the recorder's episode time
matches the task's (world.task.episode_s).
"""

from dataclasses import dataclass
from functools import cached_property

from lerobot.teleoperators import Teleoperator, TeleoperatorConfig
from lerobot.utils.decorators import check_if_already_connected, check_if_not_connected

from teledex_lerobot.clock import now_ns
from teledex_lerobot.world.devices import current_world
from teledex_lerobot.world.expert import ScriptedExpert
from teledex_lerobot.world.operator_expert import OperatorExpert

from .config_rig import TeledexRigTeleopConfig

ROUTES = ("joints", "keypoints")


@TeleoperatorConfig.register_subclass("teledex_world_expert")
@dataclass(kw_only=True)
class TeledexWorldExpertConfig(TeledexRigTeleopConfig):
    route: str = "joints"
    # Seconds the expert waits after finishing before it lays out the next episode.
    settle_s: float = 1.0

    def __post_init__(self):
        if self.route not in ROUTES:
            raise ValueError(f"route must be one of {ROUTES} (got {self.route!r})")


class TeledexWorldExpert(Teleoperator):
    config_class = TeledexWorldExpertConfig
    name = "teledex_world_expert"

    def __init__(self, config: TeledexWorldExpertConfig):
        super().__init__(config)
        self.config = config
        self.rig = config.rig()
        self.expert = None
        self.sample_capture_ns: int | None = None
        self.episodes_started = 0

    @cached_property
    def action_features(self) -> dict[str, type]:
        return dict.fromkeys(self.rig.action_keys, float)

    @cached_property
    def feedback_features(self) -> dict[str, type]:
        return {}

    @property
    def is_connected(self) -> bool:
        return self.expert is not None

    @property
    def is_calibrated(self) -> bool:
        return True

    def calibrate(self) -> None:
        """Nothing to calibrate: the expert reads the world."""

    def configure(self) -> None:
        pass

    @check_if_already_connected
    def connect(self, calibrate: bool = True) -> None:
        task = current_world().config.task
        scripted = ScriptedExpert(self.rig, task)
        self.expert = scripted if self.config.route == "joints" else OperatorExpert(self.rig, scripted)
        self._started = False

    @check_if_not_connected
    def get_action(self) -> dict[str, float]:
        world = current_world()
        with world.lock:
            if not self._started or self._finished(world):
                if self._started:
                    world.reset()  # the next layout from the world's generator
                self.expert.reset(world)
                self._episode_start_s = world.time_s
                self._started = True
                self.episodes_started += 1
            targets = self.expert.act(world)
        self.sample_capture_ns = now_ns()
        return self.rig.join(targets)

    def _finished(self, world) -> bool:
        elapsed = world.time_s - self._episode_start_s
        plan_s = self.expert.plan_duration_s
        return elapsed >= min(world.task.episode_s, plan_s + self.config.settle_s)

    def send_feedback(self, feedback: dict) -> None:
        pass

    @check_if_not_connected
    def disconnect(self) -> None:
        self.expert = None
