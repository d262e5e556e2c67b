"""teledex-demo (`make demo`): this project in one command. In the MuJoCo world, the scripted expert assembles the
cube in a few episodes, recorded by teledex-record (a LeRobot dataset and the native TeleDex layout in one pass,
every frame sync-validated; the world runs in lockstep with the expert, and each episode ends half a second after
its success); then the sync report and its plots, and where to look.

    teledex-demo [--task cube_assembly] [--episodes 3] [--root outputs/demo/world_demo]

The same as:
    teledex-record --robot.type=teledex --robot.backend=mujoco --robot.world.task=cube_assembly \\
      --teleop.type=teledex_world_expert --dataset.repo_id=local/world_demo --dataset.root=outputs/demo/world_demo \\
      --dataset.single_task="cube assembly" --dataset.fps=25 --dataset.num_episodes=3 --dataset.episode_time_s=20 \\
      --dataset.reset_time_s=0 --dataset.push_to_hub=false
    teledex-sync-report outputs/demo/world_demo_native --episode-plots=0
"""

import argparse
import shutil
import time
from pathlib import Path

from ..world.tasks import TASKS
from .errors import UserError, run_command


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", default="cube_assembly", choices=sorted(TASKS), help="the world's task")
    parser.add_argument("--preset", default="piper_linkerhand_o6_single", help="the rig (grasps are measured for the "
                        "LinkerHand O6, L10 and L20)")
    parser.add_argument("--episodes", type=int, default=3, help="how many episodes to record")
    parser.add_argument("--root", type=Path, default=Path("outputs/demo/world_demo"),
                        help="the LeRobot dataset; the native layout goes beside it (<root>_native); both are "
                        "replaced on each run")
    parser.add_argument("--repo-id", default="local/world_demo", help="the dataset's repo id (not pushed)")
    return parser.parse_args(argv)


def demo(args: argparse.Namespace) -> None:
    # Heavy imports here, so that --help answers at once.
    from lerobot.configs.dataset import DatasetRecordConfig
    from lerobot.utils.import_utils import register_third_party_plugins

    from lerobot_robot_teledex import TeledexConfig
    from lerobot_teleoperator_teledex.world_expert import TeledexWorldExpertConfig

    from ..presets import load_preset
    from ..recording.recorder import Recorder, TeledexRecordConfig
    from ..storage.video import silence_encoder_logs
    from ..world.world import WorldConfig
    from .sync_report import sync_report

    silence_encoder_logs()
    register_third_party_plugins()
    native_root = Path(f"{args.root}_native")
    for path in (args.root, native_root):
        if path.exists():  # a previous demo run: the demo always starts fresh
            if path == args.root and not (path / "meta" / "info.json").is_file():
                raise UserError(f"{path} exists and is not a LeRobot dataset; choose another --root.")
            shutil.rmtree(path)
    fps = load_preset(args.preset).fps
    horizon_s = TASKS[args.task].episode_s
    print(f"Recording {args.episodes} episodes of the scripted expert ({args.task}, each until half a second after "
          f"success, at most {horizon_s:g} s) in the MuJoCo world on {args.preset}, at {fps} Hz ...", flush=True)
    started = time.perf_counter()
    Recorder(TeledexRecordConfig(
        robot=TeledexConfig(id="world_demo", preset=args.preset, backend="mujoco", world=WorldConfig(task=args.task)),
        teleop=TeledexWorldExpertConfig(id="world_demo", preset=args.preset),
        dataset=DatasetRecordConfig(repo_id=args.repo_id, root=str(args.root), single_task=args.task.replace("_", " "),
                                    fps=fps, episode_time_s=horizon_s, reset_time_s=0,
                                    num_episodes=args.episodes, push_to_hub=False),
    )).run()
    print(f"\nRecorded in {time.perf_counter() - started:.0f} s. The sync report:\n")
    sync_report(argparse.Namespace(path=native_root, json=None, plot=None, episode_plots="0", plot_dir=None))
    print(f"\nLeRobot dataset: {args.root.resolve()}")
    for video in sorted(args.root.glob("videos/**/*.mp4")):
        print(f"  camera video: {video}")
    print(f"Native layout:   {native_root.resolve()} (telemetry.npz, metadata.json, camera_info.json, videos/)")
    print(f"Replay it:       lerobot-replay --robot.type=teledex --robot.backend=mujoco "
          f"--dataset.repo_id={args.repo_id} --dataset.root={args.root} --dataset.episode=0")


def main(argv=None) -> None:
    run_command("teledex-demo", demo, parse_args(argv))

if __name__ == "__main__":
    main()
