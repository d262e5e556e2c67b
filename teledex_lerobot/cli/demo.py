"""`make demo`: record a short dataset with LeRobot's own record() on the embedded default rig, then summarise it.

Default: simulated Piper + LinkerHand O6 + one simulated camera, driven by the replayed demo_grasp operator stream.
"""

import argparse
import logging
import shutil
from pathlib import Path

from lerobot.configs.dataset import DatasetRecordConfig
from lerobot.datasets import LeRobotDataset
from lerobot.scripts.lerobot_record import RecordConfig, record

from lerobot_robot_teledex import TeledexConfig
from lerobot_teleoperator_teledex import TeledexReplayConfig

from ..presets import load_preset
from ..storage.video import silence_encoder_logs


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", default="piper_linkerhand_o6_single")
    parser.add_argument("--stream", default="demo_grasp", help="recorded input file: a name in configs/streams/ or a "
                        ".datagrams.jsonl path")
    parser.add_argument("--backend", default="sim", choices=["sim", "fake"])
    parser.add_argument("--episodes", type=int, default=2)
    parser.add_argument("--episode-time-s", type=float, default=8.0)
    parser.add_argument("--root", type=Path, default=Path("outputs/demo/teledex_demo"))
    parser.add_argument("--repo-id", default="local/teledex_demo")
    return parser.parse_args(argv)


def main(argv=None) -> None:
    args = parse_args(argv)
    silence_encoder_logs()
    preset = load_preset(args.preset)
    if args.root.exists():
        if not (args.root / "meta" / "info.json").is_file():
            raise SystemExit(f"{args.root} exists and is not a LeRobot dataset; choose another --root.")
        shutil.rmtree(args.root)  # a previous demo run: the demo always starts fresh
    print(f"Recording {args.episodes} x {args.episode_time_s:g} s at {preset.fps} Hz on {args.preset} "
          f"(backend={args.backend}), driven by stream {args.stream!r} ...", flush=True)
    config = RecordConfig(
        robot=TeledexConfig(id="demo", preset=args.preset, backend=args.backend),
        teleop=TeledexReplayConfig(id="demo", replay_file=args.stream, preset=args.preset),
        dataset=DatasetRecordConfig(
            repo_id=args.repo_id,
            root=str(args.root),
            single_task="grasp and lift (replayed operator stream)",
            fps=preset.fps,
            episode_time_s=args.episode_time_s,
            reset_time_s=1,
            num_episodes=args.episodes,
            push_to_hub=False,
        ),
        play_sounds=False,
    )
    record(config)
    logging.getLogger().setLevel(logging.WARNING)
    print_summary(LeRobotDataset(args.repo_id, root=args.root), args.root)


def print_summary(dataset: LeRobotDataset, root: Path) -> None:
    meta = dataset.meta
    print(f"\nDataset written to {root.resolve()}")
    print(f"  episodes: {meta.total_episodes}   frames: {meta.total_frames}   fps: {meta.fps}   "
          f"robot_type: {meta.robot_type}")
    for key, feature in meta.features.items():
        names = feature.get("names")
        described = f"{len(names)} names" if isinstance(names, list) and len(names) > 6 else names
        print(f"  {key:28s} {feature['dtype']:8s} shape={tuple(feature['shape'])} {described or ''}")
    for video in sorted(root.glob("videos/**/*.mp4")):
        print(f"  video {video.relative_to(root)}: {video.stat().st_size / 1024:.0f} KiB")
    print(f"\nReplay it:  lerobot-replay --robot.type=teledex --dataset.repo_id={dataset.repo_id} "
          f"--dataset.root={root} --dataset.episode=0")


if __name__ == "__main__":
    main()
