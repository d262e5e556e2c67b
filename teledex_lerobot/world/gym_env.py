"""The world as a gymnasium environment, stepped synchronously at the control rate (for lerobot-eval).

Observations use the names lerobot-eval maps to a dataset's features: "agent_pos" (observation.state: the rig's
joints in action order), "environment_state" (observation.environment_state: the task's object poses, when
observed, as teledex-record writes them) and "pixels": {camera: HxWx3} (observation.images.<camera>): the preset's
cameras by name, placed as the recorder's world cameras are (World builds each from its view, the wrist one on the
hand), so a policy trained on a recording with those cameras sees the same names and viewpoints. Actions are
absolute joint targets in action order, or with action_space="hand_pose" each arm's hand pose beside its joints
(world/hand_pose_actions.py: a training copy written by teledex-convert to-hand-pose), the state then ending with
each hand's measured pose. A preset of several rigs (bimanual_piper_linkerhand_l10) runs them in one
world as teledex_followers records them: joints rig by rig, cameras "<follower>_<camera>" (shared_world_cameras).
info["is_success"]: the task's predicate held for its success ticks; info["stage"]: the furthest stage reached
(world/episode.py). The reward is that stage's progress (0, 0.2 reached ... 0.8 placed, 1 success), so lerobot-eval's
per-episode max_reward says how far a failed episode got; render() (the rollout videos) writes the stage on the frame.
"""

from collections.abc import Sequence

import cv2
import gymnasium as gym
import numpy as np

from ..errors import ConfigError
from ..presets import Preset, load_preset, shared_world_cameras
from ..rig import Rig
from .camera import WorldRenderer
from .episode import EpisodeOutcome, control_tick
from .hand_pose_actions import HandPoseActions, check_action_space
from .world import PlacedRig, World, WorldConfig, object_state_names, placed_rigs

WORLD_DEFAULT_CAMERA = {"top": "oblique"}  # a preset without cameras: the world's own


def env_cameras(preset: Preset, names: Sequence[str] | None) -> dict[str, tuple[str, str]]:
    """Camera name -> (view, the rig it belongs to) of the env's cameras: `names` among the preset's cameras (the names
    and views teledex-record records with them); None: the preset's first camera, or the world's own `top` for a
    preset with none."""
    if preset.followers:
        shared = shared_world_cameras(preset.followers)
        cameras = {name: (view, follower) for name, (follower, _, view) in shared.items()}
    else:
        cameras = {name: (settings.get("view", "oblique"), "") for name, settings in preset.cameras.items()}
    if names is None:
        names = list(cameras)[:1]
        if not names:
            return {name: (view, "") for name, view in WORLD_DEFAULT_CAMERA.items()}
    if not names or any(name not in cameras for name in names):
        fix = (f"name some of its cameras {list(cameras)}, e.g. --env.cameras='[{', '.join(cameras)}]'"
               if cameras else "it has none: leave --env.cameras out (the world's own top camera)")
        raise ConfigError(f"--env.cameras={list(names)}: not cameras of preset {preset.name!r}; {fix}")
    return {name: cameras[name] for name in names}


class TeledexWorldEnv(gym.Env):
    metadata = {"render_modes": ["rgb_array"], "render_fps": 25}

    def __init__(self, task: str = "cube_assembly", preset: str = "piper_linkerhand_o6_single",
                 obs_type: str = "state", fps: int = 25, observe_objects: bool = True, observe_relations: bool = False,
                 cameras: Sequence[str] | None = None, width: int = 320, height: int = 240,
                 render_mode: str = "rgb_array", action_space: str = "joints"):
        """cameras: the preset's cameras observed (env_cameras), each width x height; the first films render().
        action_space "hand_pose": each arm's action is its hand's pose (world/hand_pose_actions.py), and the
        observed state has each hand's measured pose after the joints."""
        preset_spec = load_preset(preset)
        rigs: Rig | dict[str, PlacedRig] = Rig.from_preset(preset_spec) if not preset_spec.followers else placed_rigs(
            {name: Rig.from_preset(load_preset(follower)) for name, follower in preset_spec.followers.items()},
            preset_spec.placements)
        cameras_of = env_cameras(preset_spec, cameras)
        views = {name: view for name, (view, _) in cameras_of.items()}
        self.world = World(rigs, WorldConfig(task=task, observe_objects=observe_objects,
                                             observe_relations=observe_relations), views,
                           camera_rigs={name: rig for name, (_, rig) in cameras_of.items()})
        self.obs_type, self.fps = obs_type, fps
        self.render_mode = render_mode
        self.metadata = {**self.metadata, "render_fps": fps}
        self.observe_objects = observe_objects
        self.task = self.world.task.name
        self.task_description = self.world.task.description
        self._renderers = {name: WorldRenderer(self.world, name, width, height, rig)
                           for name, (_, rig) in cameras_of.items()}
        parts = self.world.parts  # rig by rig, each part in action order: the dataset's action order
        check_action_space(action_space)
        self.hand_poses = HandPoseActions({name: placed.rig for name, placed in self.world.rigs.items()}) \
            if action_space == "hand_pose" else None
        joints = sum(len(p.joints) for p in parts.values())
        if self.hand_poses is None:
            low = np.concatenate([p.lower for p in parts.values()])
            high = np.concatenate([p.upper for p in parts.values()])
            self.action_space = gym.spaces.Box(low.astype(np.float32), high.astype(np.float32))
        else:
            n = len(self.hand_poses.action_names)
            self.action_space = gym.spaces.Box(-np.inf, np.inf, (n,), np.float32)
            joints += len(self.hand_poses.state_names)
        spaces: dict[str, gym.spaces.Space] = {"agent_pos": gym.spaces.Box(-np.inf, np.inf, (joints,), np.float64)}
        if observe_objects:
            names = object_state_names(task, observe_relations)
            spaces["environment_state"] = gym.spaces.Box(-np.inf, np.inf, (len(names),), np.float64)
        if obs_type == "pixels_agent_pos":
            spaces["pixels"] = gym.spaces.Dict(
                {name: gym.spaces.Box(0, 255, (height, width, 3), np.uint8) for name in views})
        self.observation_space = gym.spaces.Dict(spaces)
        self._outcome = EpisodeOutcome(self.world)

    def _observation(self) -> dict:
        joints = np.concatenate([self.world.joint_positions(key) for key in self.world.parts])
        observation = {"agent_pos": joints if self.hand_poses is None else
                       np.concatenate([joints, self.hand_poses.measured_poses(joints)])}
        if self.observe_objects:
            observation["environment_state"] = self.world.object_state()
        if self.obs_type == "pixels_agent_pos":
            observation["pixels"] = {name: renderer.render() for name, renderer in self._renderers.items()}
        return observation

    def reset(self, seed: int | None = None, options=None):
        super().reset(seed=seed)
        self.world.reset(seed if seed is not None else int(self.np_random.integers(2**31)))
        self._outcome = EpisodeOutcome(self.world)
        return self._observation(), {"is_success": False, "stage": "none"}

    def step(self, action):
        action = np.asarray(action, dtype=float)
        if self.hand_poses is not None:
            action = np.concatenate(list(self.hand_poses.to_joints(action).values()))
        targets, start = {}, 0
        for key, part in self.world.parts.items():
            targets[key] = np.clip(action[start:start + len(part.joints)], part.lower, part.upper)
            start += len(part.joints)
        control_tick(self.world, targets, self.fps)
        success = self._outcome.update()
        info = {"is_success": success, "stage": self._outcome.stage}
        return self._observation(), self._outcome.progress, success, False, info

    def render(self):
        """The first camera's frame with the episode's seed, time and furthest stage written on it."""
        image = np.ascontiguousarray(next(iter(self._renderers.values())).render())
        text = f"seed {self.world.episode_seed}  {self.world.time_s:4.1f} s  {self._outcome.stage}"
        colour = (60, 220, 60) if self._outcome.succeeded else (255, 255, 255)
        cv2.putText(image, text, (6, 16), cv2.FONT_HERSHEY_SIMPLEX, 0.45, (0, 0, 0), 3, cv2.LINE_AA)
        cv2.putText(image, text, (6, 16), cv2.FONT_HERSHEY_SIMPLEX, 0.45, colour, 1, cv2.LINE_AA)
        return image

    def close(self):
        for renderer in self._renderers.values():
            renderer.close()
