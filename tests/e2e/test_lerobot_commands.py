"""End to end through LeRobot's own commands, as a user runs them: our types are discovered with no extra flags,
lerobot-record writes a dataset that loads, replays and trains."""


import numpy as np
import pytest
from commands import command, run

pytestmark = pytest.mark.slow

REPO_ID = "local/teledex_test"
FPS = 25
EPISODE_S = 3


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("lerobot_commands")


@pytest.fixture(scope="module")
def dataset_root(workdir):
    root = workdir / "dataset"
    run(command("lerobot-record", "--robot.type=teledex", "--robot.id=test", "--teleop.type=teledex_replay",
                "--teleop.id=test", f"--dataset.repo_id={REPO_ID}", f"--dataset.root={root}",
                "--dataset.single_task=grasp and lift", f"--dataset.fps={FPS}", "--dataset.num_episodes=2",
                f"--dataset.episode_time_s={EPISODE_S}", "--dataset.reset_time_s=0.5", "--dataset.push_to_hub=false",
                "--play_sounds=false"), workdir)
    return root


def test_recorded_dataset_loads(dataset_root):
    from lerobot.datasets import LeRobotDataset

    from lerobot_robot_teledex import Teledex, TeledexConfig

    dataset = LeRobotDataset(REPO_ID, root=dataset_root)
    robot = Teledex(TeledexConfig(backend="fake"))
    assert dataset.meta.total_episodes == 2
    assert dataset.meta.fps == FPS
    # LeRobot's loop records until the episode's time is up: a loaded machine gives fewer frames, never more
    assert 0.5 * 2 * FPS * EPISODE_S <= dataset.meta.total_frames <= 2 * FPS * EPISODE_S + 2
    assert dataset.meta.robot_type == "teledex"
    features = dataset.meta.features
    assert features["action"]["names"] == list(robot.action_features)
    assert features["observation.state"]["names"] == list(robot.action_features)
    assert features["observation.images.top"]["dtype"] == "video"
    videos = list(dataset_root.glob("videos/observation.images.top/**/*.mp4"))
    assert videos and all(v.stat().st_size > 10_000 for v in videos)
    frame = dataset[FPS]
    assert frame["observation.images.top"].shape == (3, 480, 640)
    assert frame["action"].shape == (len(robot.action_features),)
    # the operator stream moves the robot: recorded actions are not constant
    actions = np.stack([np.asarray(a) for a in dataset.hf_dataset["action"]])
    assert actions.std(axis=0).max() > 0.05


def test_lerobot_replay(dataset_root, workdir):
    """lerobot-replay sends the episode's actions to our robot: one command per frame, and the robot moved."""
    import re

    from lerobot.datasets import LeRobotDataset

    frames = LeRobotDataset(REPO_ID, root=dataset_root, episodes=[0]).num_frames
    output = run(command("lerobot-replay", "--robot.type=teledex", "--robot.backend=sim", "--robot.id=test",
                         f"--dataset.repo_id={REPO_ID}", f"--dataset.root={dataset_root}", "--dataset.episode=0"),
                 workdir)
    sent, widest = re.search(r"disconnected \((\d+) commands sent, the widest joint range commanded ([\d.]+)\)",
                             output).groups()
    assert int(sent) == frames and float(widest) > 0.05


@pytest.fixture(scope="module")
def act_checkpoint(dataset_root, workdir):
    output_dir = workdir / "train_act"
    run(command("lerobot-train", f"--dataset.repo_id={REPO_ID}", f"--dataset.root={dataset_root}",
                "--policy.type=act", "--policy.device=cpu", "--policy.push_to_hub=false",
                "--policy.pretrained_backbone_weights=null", "--steps=2", "--batch_size=2", "--log_freq=1",
                "--save_freq=2", "--num_workers=0", "--wandb.enable=false", f"--output_dir={output_dir}"), workdir)
    return output_dir / "checkpoints" / "000002" / "pretrained_model"


def test_lerobot_train_act_offline(act_checkpoint):
    assert (act_checkpoint / "model.safetensors").is_file()


def test_lerobot_rollout_runs_the_trained_policy_on_our_robot(act_checkpoint, workdir):
    """The last step of docs/hardware.md: LeRobot's own lerobot-rollout drives our robot with the trained policy
    (here the sim backend; on the rig --robot.backend=real)."""
    import re

    output = run(command("lerobot-rollout", "--strategy.type=base", "--robot.type=teledex", "--robot.backend=sim",
                         "--robot.id=test", f"--policy.path={act_checkpoint}", "--policy.device=cpu",
                         "--task=grasp and lift", f"--fps={FPS}", "--duration=2"), workdir)
    assert "Rollout finished" in output
    assert int(re.search(r"Teledex disconnected \((\d+) commands sent", output).group(1)) > 0


def test_lerobot_calibrate_discovers_our_types(workdir):
    run(command("lerobot-calibrate", "--robot.type=teledex_hand", "--robot.backend=fake", "--robot.id=h"), workdir)
    run(command("lerobot-calibrate", "--teleop.type=teledex_replay", "--teleop.preset=piper_linkerhand_o6_single",
                "--teleop.id=r"), workdir)


def test_lerobot_teleoperate(workdir):
    output = run(command("lerobot-teleoperate", "--robot.type=teledex_arm", "--robot.backend=sim", "--robot.id=a",
                         "--teleop.type=teledex_replay", "--teleop.arm_model=piper",
                         "--teleop.replay_file=wrist_motion", "--teleop.id=a", "--fps=25", "--teleop_time_s=1"),
                 workdir)
    assert "TeledexArm connected (backend=sim)" in output and "TeledexArm disconnected" in output
