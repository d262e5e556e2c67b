"""--env.type=teledex with several cameras: the preset's, by the names, views and shapes teledex-record records them
with, so a policy trained on such a recording evaluates in the env (benchmarks/sim_loop.py --pixels)."""

import numpy as np
import pytest
from lerobot.envs.factory import make_env_config
from lerobot.envs.utils import env_to_policy_features
from lerobot.utils.constants import ACTION
from lerobot.utils.feature_utils import dataset_to_policy_features, hw_to_dataset_features

from lerobot_robot_teledex import Teledex, TeledexConfig, TeledexWorldCameraConfig
from teledex_lerobot.errors import ConfigError
from teledex_lerobot.presets import load_preset
from teledex_lerobot.world.camera import WorldRenderer
from teledex_lerobot.world.gym_env import TeledexWorldEnv
from teledex_lerobot.world.world import WorldConfig

PRESET = "piper_linkerhand_o6_single"  # a top and a wrist camera
WIDTH, HEIGHT = 64, 48


def test_the_env_observes_every_named_camera():
    env = TeledexWorldEnv(task="cube_assembly", preset=PRESET, obs_type="pixels_agent_pos", observe_objects=False,
                          cameras=["top", "wrist"], width=WIDTH, height=HEIGHT)
    try:
        observation, _ = env.reset(seed=3)
        assert set(observation) == {"agent_pos", "pixels"}  # no object poses
        assert set(observation["pixels"]) == {"top", "wrist"}
        for image in observation["pixels"].values():
            assert image.shape == (HEIGHT, WIDTH, 3) and image.dtype == np.uint8 and image.std() > 0
        assert not np.array_equal(observation["pixels"]["top"], observation["pixels"]["wrist"])
        assert env.observation_space.contains(observation)
        step = env.step(observation["agent_pos"])[0]
        assert {name: image.shape for name, image in step["pixels"].items()} == {
            "top": (HEIGHT, WIDTH, 3), "wrist": (HEIGHT, WIDTH, 3)}
        # each camera placed by the world from the preset's view, as the recorder's world cameras are: the wrist one
        # on the hand, the top one fixed
        assert WorldRenderer(env.world, "wrist", WIDTH, HEIGHT).mount is not None
        assert WorldRenderer(env.world, "top", WIDTH, HEIGHT).mount is None
        assert env.render().shape == (HEIGHT, WIDTH, 3)  # the rollout videos: the first camera
    finally:
        env.close()


def test_env_config_features_match_what_teledex_record_writes_for_the_preset_cameras():
    import lerobot_robot_teledex  # noqa: F401  (registers --env.type=teledex)

    env_config = make_env_config("teledex", preset=PRESET, obs_type="pixels_agent_pos", observe_objects=False,
                                 cameras=["top", "wrist"], width=WIDTH, height=HEIGHT)
    env_features = env_to_policy_features(env_config)
    cameras = {name: TeledexWorldCameraConfig(**{**settings, "width": WIDTH, "height": HEIGHT})
               for name, settings in load_preset(PRESET).cameras.items()}
    robot = Teledex(TeledexConfig(preset=PRESET, backend="mujoco", cameras=cameras,
                                  world=WorldConfig(observe_objects=False)))
    recorded = dataset_to_policy_features(hw_to_dataset_features(robot.observation_features, "observation"))
    assert {key: feature.shape for key, feature in env_features.items() if key != ACTION} == \
        {key: feature.shape for key, feature in recorded.items()} == {
            "observation.state": (12,), "observation.images.top": (3, HEIGHT, WIDTH),
            "observation.images.wrist": (3, HEIGHT, WIDTH)}
    assert env_config.gym_kwargs["cameras"] == ["top", "wrist"]


def test_a_camera_the_preset_lacks_is_refused_naming_its_cameras():
    import lerobot_robot_teledex  # noqa: F401

    with pytest.raises(ConfigError, match=r"--env\.cameras=\['side'\].*'piper_linkerhand_o6_single'.*\['top', "
                                          r"'wrist'\].*--env\.cameras='\[top, wrist\]'"):
        make_env_config("teledex", preset=PRESET, obs_type="pixels_agent_pos", cameras=["side"])
    # a preset without a top camera: by default its first one (the world's own top camera for a preset with none)
    front = make_env_config("teledex", preset="linker_a7_linkerhand_l10_single", obs_type="pixels_agent_pos")
    assert [key for key in env_to_policy_features(front) if "images" in key] == ["observation.images.front"]
