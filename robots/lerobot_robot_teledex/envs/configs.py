"""`lerobot-eval --env.type=teledex --env.task=<task>`: the MuJoCo world's tasks as a LeRobot environment.

Registered when LeRobot imports our plugin package. Feature names match what teledex-record writes with
--robot.backend=mujoco: observation.state (joints), observation.environment_state (object poses),
observation.images.<camera>, action.
"""

from dataclasses import dataclass, field

import gymnasium as gym
from lerobot.configs import FeatureType, PolicyFeature
from lerobot.envs.configs import EnvConfig
from lerobot.utils.constants import ACTION, OBS_ENV_STATE, OBS_IMAGES, OBS_STATE

from teledex_lerobot.errors import ConfigError
from teledex_lerobot.presets import load_preset
from teledex_lerobot.rig import Rig
from teledex_lerobot.world.tasks import TASKS
from teledex_lerobot.world.world import object_state_names

# gym ids cannot have a dot in their namespace: ours is the plugin package's name.
GYM_NAMESPACE = "lerobot_robot_teledex"

for _task in TASKS:
    if f"{GYM_NAMESPACE}/{_task}" not in gym.registry:
        gym.register(id=f"{GYM_NAMESPACE}/{_task}", entry_point="teledex_lerobot.world.gym_env:TeledexWorldEnv",
                     kwargs={"task": _task})


@EnvConfig.register_subclass("teledex")
@dataclass
class TeledexEnvConfig(EnvConfig):
    task: str | None = "cube_assembly"
    fps: int = 25
    preset: str = "piper_linkerhand_o6_single"
    # "state": observation.state only; "pixels_agent_pos": also the camera's images.
    obs_type: str = "state"
    observe_objects: bool = True
    camera: str = "top"
    width: int = 320
    height: int = 240
    episode_length: int | None = None  # control ticks; None = the task's own horizon
    features: dict[str, PolicyFeature] = field(default_factory=dict)
    features_map: dict[str, str] = field(default_factory=dict)

    def __post_init__(self):
        if self.task not in TASKS:
            raise ConfigError(f"--env.task={self.task!r}: the task must be one of {sorted(TASKS)}")
        rig = Rig.from_preset(load_preset(self.preset))
        joints = len(rig.action_keys)
        self.features = {ACTION: PolicyFeature(type=FeatureType.ACTION, shape=(joints,)),
                         "agent_pos": PolicyFeature(type=FeatureType.STATE, shape=(joints,))}
        self.features_map = {ACTION: ACTION, "agent_pos": OBS_STATE}
        if self.observe_objects:
            self.features["environment_state"] = PolicyFeature(
                type=FeatureType.ENV, shape=(len(object_state_names(self.task)),))
            self.features_map["environment_state"] = OBS_ENV_STATE
        if self.obs_type == "pixels_agent_pos":
            key = f"pixels/{self.camera}"
            self.features[key] = PolicyFeature(type=FeatureType.VISUAL, shape=(self.height, self.width, 3))
            self.features_map[key] = f"{OBS_IMAGES}.{self.camera}"
        if self.episode_length is None:
            self.episode_length = int(TASKS[self.task].episode_s * self.fps)

    @property
    def package_name(self) -> str:
        return GYM_NAMESPACE

    @property
    def gym_kwargs(self) -> dict:
        return {"preset": self.preset, "obs_type": self.obs_type, "fps": self.fps,
                "observe_objects": self.observe_objects, "camera": self.camera, "width": self.width,
                "height": self.height, "max_episode_steps": self.episode_length}
