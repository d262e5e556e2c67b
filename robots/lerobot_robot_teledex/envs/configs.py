"""`lerobot-eval --env.type=teledex --env.task=<task>`: the MuJoCo world's tasks as a LeRobot environment.

Registered when LeRobot imports our plugin package. Feature names match what teledex-record writes with
--robot.backend=mujoco: observation.state (joints), observation.environment_state (object poses),
observation.images.<camera> (the preset's cameras named in --env.cameras, each --env.width x --env.height: record
them at that size), action. A preset of several rigs (--env.preset=bimanual_piper_linkerhand_l10 --env.task=handover)
runs them in one world, their keys as teledex_followers records them.
"""

from dataclasses import dataclass, field

import gymnasium as gym
from lerobot.configs import FeatureType, PolicyFeature
from lerobot.envs.configs import EnvConfig
from lerobot.utils.constants import ACTION, OBS_ENV_STATE, OBS_IMAGES, OBS_STATE

from teledex_lerobot.errors import ConfigError
from teledex_lerobot.presets import load_preset
from teledex_lerobot.rig import Rig
from teledex_lerobot.world.gym_env import env_cameras
from teledex_lerobot.world.hand_pose_actions import check_action_space, hand_pose_actions_for
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
    # "state": observation.state only; "pixels_agent_pos": also the cameras' images.
    obs_type: str = "state"
    observe_objects: bool = True
    observe_relations: bool = False  # with the object poses, the task's relations (WorldConfig.observe_relations)
    # The preset's cameras observed, by name (--env.cameras='[top, wrist]'), each from the preset's view for it as
    # teledex-record's world cameras (the wrist camera rides on the hand); None: the preset's first camera. The first
    # one films the rollout videos.
    cameras: list[str] | None = None
    width: int = 320
    height: int = 240
    episode_length: int | None = None  # control ticks; None = the task's own horizon
    # "joints" (as recorded) or "hand_pose": each arm acts by its hand's pose beside its joints, the state has the
    # hands' poses after the joints (a copy written by teledex-convert to-hand-pose; world/hand_pose_actions.py)
    action_space: str = "joints"
    features: dict[str, PolicyFeature] = field(default_factory=dict)
    features_map: dict[str, str] = field(default_factory=dict)

    def __post_init__(self):
        if self.task not in TASKS:
            raise ConfigError(f"--env.task={self.task!r}: the task must be one of {sorted(TASKS)}")
        preset = load_preset(self.preset)
        rigs = [Rig.from_preset(load_preset(follower)) for follower in preset.followers.values()] \
            if preset.followers else [Rig.from_preset(preset)]  # a preset of several rigs: all in one world
        views = env_cameras(preset, self.cameras)  # a camera the preset lacks fails here, naming its cameras
        actions = state = sum(len(rig.action_keys) for rig in rigs)
        check_action_space(self.action_space)
        if self.action_space == "hand_pose":
            space = hand_pose_actions_for(self.preset)
            actions, state = len(space.action_names), state + len(space.state_names)
        self.features = {ACTION: PolicyFeature(type=FeatureType.ACTION, shape=(actions,)),
                         "agent_pos": PolicyFeature(type=FeatureType.STATE, shape=(state,))}
        self.features_map = {ACTION: ACTION, "agent_pos": OBS_STATE}
        if self.observe_objects:
            self.features["environment_state"] = PolicyFeature(
                type=FeatureType.ENV, shape=(len(object_state_names(self.task, self.observe_relations)),))
            self.features_map["environment_state"] = OBS_ENV_STATE
        if self.obs_type == "pixels_agent_pos":
            for camera in views:
                key = f"pixels/{camera}"
                self.features[key] = PolicyFeature(type=FeatureType.VISUAL, shape=(self.height, self.width, 3))
                self.features_map[key] = f"{OBS_IMAGES}.{camera}"
        if self.episode_length is None:
            self.episode_length = int(TASKS[self.task].episode_s * self.fps)

    @property
    def package_name(self) -> str:
        return GYM_NAMESPACE

    @property
    def gym_kwargs(self) -> dict:
        return {"preset": self.preset, "obs_type": self.obs_type, "fps": self.fps,
                "observe_objects": self.observe_objects, "observe_relations": self.observe_relations,
                "cameras": self.cameras, "width": self.width, "height": self.height,
                "action_space": self.action_space, "max_episode_steps": self.episode_length}
