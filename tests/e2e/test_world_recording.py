"""Demonstrations a policy can learn from, recorded by teledex-record in the MuJoCo world (in-process): the lockstep
clock (deterministic per seed, no dropped tick), an expert that moves from the first frame, every frame belonging
to its episode (joints and camera), success labels in both formats with the episode ending a settle time after
success, keeping successes only, and recovery perturbations recorded as the expert's corrections."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from lerobot.configs.dataset import DatasetRecordConfig

from lerobot_robot_teledex import TeledexConfig, TeledexWorldCameraConfig
from lerobot_teleoperator_teledex.world_expert import TeledexWorldExpertConfig
from teledex_lerobot.recording.recorder import Recorder, TeledexRecordConfig
from teledex_lerobot.storage.native import load_native_episode, native_episode_dirs
from teledex_lerobot.world.camera import WorldRenderer
from teledex_lerobot.world.perturbation import PerturbationConfig, TargetPerturbation
from teledex_lerobot.world.world import LOCKSTEP, REAL_TIME, World, WorldConfig

FPS = 25
CUBE_S = 20.0  # the task's horizon; the expert succeeds in about 10 s


def world_recorder(root: Path, episodes: int, seconds: float = CUBE_S, camera: bool = False, clock: str = "auto",
                   perturbation: PerturbationConfig | None = None, seed: int = 0, observe_objects: bool = True,
                   **options) -> Recorder:
    cameras = {"top": TeledexWorldCameraConfig(view="oblique", width=96, height=72, fps=FPS)} if camera else {}
    robot = TeledexConfig(backend="mujoco", preset_cameras=False, cameras=cameras,
                          world=WorldConfig(clock=clock, seed=seed, observe_objects=observe_objects))
    return Recorder(TeledexRecordConfig(
        robot=robot, teleop=TeledexWorldExpertConfig(perturbation=perturbation or PerturbationConfig()),
        dataset=DatasetRecordConfig(repo_id="local/world", root=str(root), single_task="cube", fps=FPS,
                                    episode_time_s=seconds, reset_time_s=0, num_episodes=episodes,
                                    push_to_hub=False, video=camera),
        **options))


def frames_of(root: Path) -> pd.DataFrame:
    return pd.concat([pd.read_parquet(path) for path in sorted((root / "data").glob("**/*.parquet"))])


def native_episodes(root: Path) -> list:
    return [load_native_episode(folder) for folder in native_episode_dirs(Path(f"{root}_native"))]


def column(frames: pd.DataFrame, name: str) -> np.ndarray:
    """(frames, values): LeRobot stores one-value features as scalars, the others as arrays."""
    return np.stack(frames[name].to_numpy()).reshape(len(frames), -1)


@pytest.fixture(scope="module")
def cube_recording(tmp_path_factory):
    """One scripted cube episode in lockstep, with the default settle time."""
    root = tmp_path_factory.mktemp("lockstep") / "a"
    recorder = world_recorder(root, episodes=1)
    recorder.run()
    assert recorder.robot.robot.config.world.clock == LOCKSTEP  # auto: a scripted input drives
    return root


def test_two_lockstep_recordings_of_one_seed_are_equal(cube_recording, tmp_path):
    world_recorder(tmp_path / "b", episodes=1).run()
    first, second = frames_of(cube_recording), frames_of(tmp_path / "b")
    assert len(first) == len(second) > 100
    for name in ("observation.state", "observation.environment_state", "action"):
        assert np.array_equal(column(first, name), column(second, name)), name
    # one control period per frame, on the world's clock: nothing dropped, whatever the machine did meanwhile
    assert np.all(np.diff(column(first, "t_frame_ns")[:, 0]) == round(1e9 / FPS))
    assert not column(first, "frame_after_gap").any()
    assert native_episodes(cube_recording)[0].metadata["clock"] == "lockstep"


def test_the_expert_moves_from_the_first_frame(cube_recording):
    frames = frames_of(cube_recording)
    action, state = column(frames, "action"), column(frames, "observation.state")
    assert np.abs(action[3] - action[0]).max() > 1e-3  # the targets move within three ticks ...
    assert np.abs(state[5] - state[0]).max() > 1e-3  # ... and the robot with them
    still = np.all(np.abs(np.diff(state[:30], axis=0)).max(axis=1) < 1e-4)
    assert not still


def test_success_is_labelled_in_both_formats_and_the_episode_ends_a_settle_time_after(cube_recording):
    frames = frames_of(cube_recording)
    success = column(frames, "next.success")[:, 0]
    assert not success[0] and success[-1]
    first = int(np.argmax(success))
    assert len(success) - 1 - first == round(0.5 * FPS)  # --settle_s=0.5, then the episode ends
    [episode] = native_episodes(cube_recording)
    assert episode.metadata["episode"]["success"] is True
    assert np.array_equal(episode.telemetry["success"], success)
    outcome = episode.metadata["outcome"]
    ticks = [outcome["stage_ticks"][stage] for stage in ("reached", "grasped", "lifted", "placed")]
    assert all(tick is not None for tick in ticks) and ticks == sorted(ticks)
    assert outcome["success_tick"] == first
    assert episode.metadata["world"]["seed"] == 0 and episode.metadata["world"]["task"] == "cube_assembly"


def test_keeping_successes_drops_failures_and_tries_new_layouts(tmp_path, capsys):
    """Two seconds are too short for the cube: every attempt fails, none is kept, and the session gives up."""
    recorder = world_recorder(tmp_path / "ds", episodes=1, seconds=2.0, keep="successes")
    recorder.run()
    output = capsys.readouterr().out
    assert output.count("dropped, keeping successes only") == 5
    assert "the input does not solve the task often enough" in output
    assert recorder.session.next_layout == 5  # one layout per attempt
    assert not native_episodes(tmp_path / "ds")


def test_a_failure_is_labelled_a_failure(tmp_path):
    world_recorder(tmp_path / "ds", episodes=1, seconds=2.0).run()
    [episode] = native_episodes(tmp_path / "ds")
    assert episode.metadata["episode"]["success"] is False
    assert episode.metadata["outcome"]["stage"] == "none"
    assert not column(frames_of(tmp_path / "ds"), "next.success").any()


def test_frame_zero_of_the_next_episode_shows_the_robot_at_home_in_the_new_layout(tmp_path):
    """Lockstep and real time: the first frame of episode 1 (state, object poses and camera image) is the new
    layout with the robot at home, never the end of episode 0."""
    from lerobot.datasets import LeRobotDataset

    for clock in (LOCKSTEP, REAL_TIME):
        root = tmp_path / clock
        recorder = world_recorder(root, episodes=2, seconds=3.0, camera=True, clock=clock, settle_s=-1)
        rig = recorder.robot.robot.rig
        recorder.run()
        dataset = LeRobotDataset("local/world", root=root)
        first = dataset.meta.episodes[1]["dataset_from_index"]
        frame = dataset[first]
        home = np.concatenate([part.home for part in rig.parts.values()])
        assert np.abs(frame["observation.state"].numpy() - home).max() < 0.02, clock
        world = World(rig, WorldConfig(task="cube_assembly"), {"top": "oblique"})
        world.reset(1)
        np.testing.assert_allclose(frame["observation.environment_state"].numpy(), world.object_state(), atol=2e-3)
        renderer = WorldRenderer(world, "top", 96, 72)
        expected = renderer.render().astype(float)
        renderer.close()
        image = frame["observation.images.top"].numpy().transpose(1, 2, 0) * 255
        assert np.abs(image - expected).mean() < 6, clock  # the video codec's error only
        last_of_first = dataset[first - 1]["observation.images.top"].numpy().transpose(1, 2, 0) * 255
        assert np.abs(last_of_first - expected).mean() > np.abs(image - expected).mean() + 2, clock


def test_perturbations_are_seeded_fade_in_precise_phases_and_stay_in_limits():
    config = PerturbationConfig(arm_std_rad=0.05, hand_std_rad=0.1)
    lower, upper = {"arm": -np.ones(3)}, {"arm": np.ones(3)}

    def offsets(seed: int, precise_from: int) -> np.ndarray:
        perturbation = TargetPerturbation(config)
        assert perturbation.reset(seed)
        return np.array([perturbation.apply({"arm": np.zeros(3)}, 0.04, {"arm"} if tick >= precise_from else set(),
                                            lower, upper)["arm"] for tick in range(60)])

    a, b = offsets(7, 30), offsets(7, 30)
    assert np.array_equal(a, b) and not np.array_equal(a, offsets(8, 30))
    assert 0.01 < np.abs(a[:30]).max() <= 1.0
    assert np.abs(a[-1]).max() < 1e-3 * np.abs(a[29]).max() + 1e-9  # faded out in the precise phase
    shares = [TargetPerturbation(PerturbationConfig(arm_std_rad=0.01, episode_share=0.25)).reset(s)
              for s in range(400)]
    assert 0.18 < np.mean(shares) < 0.32


@pytest.mark.parametrize("spread_field, drawn", [("take_spread_m", "take_offset_m"),
                                                 ("carry_spread_m", "carry_offset_m"),
                                                 ("pass_delay_spread_s", "pass_delay_s")])
def test_a_handover_spread_is_seeded_in_every_episode_within_its_bound_and_leaves_the_other_draws_alone(
        spread_field, drawn):
    spread = PerturbationConfig(arm_std_rad=0.01, episode_share=0.25, **{spread_field: 0.002})
    plain = PerturbationConfig(arm_std_rad=0.01, episode_share=0.25)
    draws = []
    for seed in range(200):
        spread_one, plain_one = TargetPerturbation(spread), TargetPerturbation(plain)
        assert spread_one.reset(seed) == plain_one.reset(seed)  # the same episodes perturbed
        assert not plain_one.handover  # no spread: the expert's own handover
        others = {name: getattr(spread_one.handover, name) for name in ("take_offset_m", "carry_offset_m",
                                                                         "pass_delay_s") if name != drawn}
        assert not any(np.any(value) for value in others.values())  # only the one spread
        draws.append(getattr(spread_one.handover, drawn))
    draws = np.array(draws)
    assert np.abs(draws).max() <= 0.002 and np.abs(draws).mean() > 0.0008  # every episode, not the share
    if drawn == "pass_delay_s":
        assert draws.min() >= 0  # only ever later
    again = TargetPerturbation(spread)
    again.reset(199)
    assert np.array_equal(getattr(again.handover, drawn), draws[-1])


def test_a_perturbed_episode_records_the_experts_correction_not_the_executed_target(tmp_path):
    """The robot executes the perturbed target (its joints follow it), the dataset keeps the expert's target."""
    recorder = world_recorder(tmp_path / "ds", episodes=1, seconds=2.0, settle_s=-1,
                              perturbation=PerturbationConfig(arm_std_rad=0.05))
    sent = []
    send_action = recorder.robot.robot.send_action
    recorder.robot.robot.send_action = lambda action: sent.append(send_action(action)) or sent[-1]
    recorder.run()
    frames = frames_of(tmp_path / "ds")
    recorded = column(frames, "action")
    executed = np.array([[a[key] for key in recorder.layout.action_names] for a in sent])
    assert len(executed) == len(recorded)
    arm = slice(0, 6)
    difference = np.abs(executed[:, arm] - recorded[:, arm]).max(axis=1)
    assert difference[10:].min() > 1e-4 and difference.max() > 0.02  # always off by the perturbation


@pytest.mark.slow
def test_lerobot_replay_lays_out_the_episodes_own_seed_and_says_whether_it_succeeded(tmp_path):
    from commands import command, run

    world_recorder(tmp_path / "ds", episodes=1, seed=3).run()
    output = run(command("lerobot-replay", "--robot.type=teledex", "--robot.backend=mujoco",
                         "--robot.preset_cameras=false", "--dataset.repo_id=local/world",
                         f"--dataset.root={tmp_path / 'ds'}", "--dataset.episode=0", "--dataset.fps=25",
                         "--play_sounds=false"), tmp_path)
    assert "in its own layout (seed 3)" in output
    assert "Replay of episode 0: succeeded (furthest stage: success)" in output


@pytest.mark.slow
@pytest.mark.long
def test_an_image_policy_trains_and_evaluates_end_to_end(tmp_path):
    """Camera + joints, no object poses: recorded in the world, a few lerobot-train steps of ACT with its ResNet,
    scored by lerobot-eval on the env's camera (the full run is a GPU job: benchmarks/sim_loop.py)."""
    import json

    from commands import command, run

    world_recorder(tmp_path / "ds", episodes=2, seconds=1.0, camera=True, settle_s=-1, observe_objects=False).run()
    run(command("lerobot-train", "--dataset.repo_id=local/world", f"--dataset.root={tmp_path / 'ds'}",
                "--policy.type=act", "--policy.device=cpu", "--policy.push_to_hub=false",
                "--policy.pretrained_backbone_weights=null", "--policy.dim_model=64", "--policy.dim_feedforward=128",
                "--policy.n_encoder_layers=1", "--policy.chunk_size=10", "--policy.n_action_steps=10", "--steps=2",
                "--batch_size=2", "--num_workers=0", "--wandb.enable=false", f"--output_dir={tmp_path / 'train'}"),
        tmp_path)
    checkpoint = tmp_path / "train" / "checkpoints" / "last" / "pretrained_model"
    config = json.loads((checkpoint / "config.json").read_text())
    assert set(config["input_features"]) == {"observation.state", "observation.images.top"}
    run(command("lerobot-eval", "--env.type=teledex", "--env.task=cube_assembly", "--env.obs_type=pixels_agent_pos",
                "--env.observe_objects=false", "--env.width=96", "--env.height=72", "--env.episode_length=20",
                f"--policy.path={checkpoint}", "--policy.device=cpu", "--eval.n_episodes=1", "--eval.batch_size=1",
                f"--output_dir={tmp_path / 'eval'}"), tmp_path)
    assert json.loads((tmp_path / "eval" / "eval_info.json").read_text())["overall"]["n_episodes"] == 1
