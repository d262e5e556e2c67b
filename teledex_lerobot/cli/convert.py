"""teledex-convert: native layout <-> LeRobotDataset, native -> VITRA (HDF5 + MP4), and an operator stream (.npz)
-> the recorded input file the replay teleoperator plays.

  teledex-convert to-lerobot NATIVE_ROOT LEROBOT_ROOT --repo-id local/name
  teledex-convert to-native LEROBOT_ROOT NATIVE_ROOT
  teledex-convert to-vitra NATIVE_ROOT OUT_DIR
  teledex-convert to-training LEROBOT_ROOT TRAINING_ROOT [--near-m 0.1] [--far-m 3.0]
  teledex-convert only-synced LEROBOT_ROOT NEW_ROOT --repo-id local/name [--min-valid 0.99]
                  [--split-at-invalid [--min-run 10]]
  teledex-convert to-hand-pose LEROBOT_ROOT NEW_ROOT --repo-id local/name --preset PRESET
  teledex-convert stream-to-datagrams STREAM.npz OUT.datagrams.jsonl

Both directions go through the same sinks the recorder uses, so what a conversion writes is what a recording would
have written: telemetry (state, action, tactile, every timestamp, sync flags as recorded) converts exactly, episode
uuids and metadata are kept. to-native copies each episode's video packets out of LeRobot's files (no re-encode);
to-lerobot decodes the native videos and LeRobot encodes them once.

to-training writes a copy of a dataset with depth that lerobot-train's ACT and Diffusion can read: each depth map
rendered as a 3-channel picture, "nothing seen" black (recording/depth_training.py; docs/recording.md).

only-synced writes a copy of a teledex-record dataset that lerobot-train trains on sync-valid data only: the episodes
with at least --min-valid of their frames sync-valid, or with --split-at-invalid only the valid frames, each run of
them an episode of its own (recording/sync_filter.py; docs/recording.md).

to-hand-pose writes a training copy of a teledex-record dataset whose actions give each arm's hand pose beside its
joints (lerobot-eval: --env.action_space=hand_pose), with only the columns a policy reads
(recording/hand_pose_training.py; docs/world.md).
"""

import argparse
import zipfile
from pathlib import Path

from ..storage.errors import DatasetError, check_root
from .errors import run_command


def stream_to_datagrams(source: Path, target: Path) -> None:
    from ..inputs.datagram_file import write_datagrams
    from ..inputs.operator_streams import stream_datagrams
    from ..operator.stream import OperatorStream

    try:
        stream = OperatorStream.load(source)
    except (ValueError, zipfile.BadZipFile) as err:  # ValueError: it names the file, the key and the fix
        raise DatasetError(str(err) if str(source) in str(err) else
                           f"{source}: not an operator stream .npz, cut or damaged? ({err}); fix: regenerate it "
                           "(teledex-generate-streams) or record it again") from None
    parser, control, datagrams = stream_datagrams(stream)
    write_datagrams(target, parser, datagrams, description=stream.description, control=control)
    print(f"wrote {target}: {len(datagrams)} {parser} datagrams over {datagrams[-1][0] / 1e9:.1f} s "
          f"(replay: --teleop.type=teledex_replay --teleop.replay_file={target})")


def _read_depth(path: Path, quantization: dict):
    """A depth video's frames in millimetres with nothing seen 0, by LeRobot's dequantization (loaded for depth
    only)."""
    from ..recording.lerobot_dataset import read_depth_video

    return read_depth_video(path, quantization, nothing_seen_as_zero=True)


def convert(args) -> None:
    if args.command == "stream-to-datagrams":
        if args.target.exists():
            raise DatasetError(f"{args.target} exists; choose a new file")
        return stream_to_datagrams(args.source, args.target)
    for root in (args.source, args.target):
        check_root(root)
    if args.target.exists() and any(args.target.iterdir()):
        raise DatasetError(f"{args.target} exists and is not empty; choose a new target folder")
    if not args.source.is_dir():
        raise DatasetError(f"{args.source} does not exist")
    if args.command == "to-vitra":  # native -> VITRA needs no LeRobot but to decode depth
        from ..storage.vitra import export_vitra

        export_vitra(args.source, args.target, read_depth=_read_depth)
        return
    if args.command == "to-training":
        from ..recording.depth_training import depth_training_copy

        depth_training_copy(args.source, args.target, args.near_m, args.far_m)
        return
    if args.command == "only-synced":
        from ..recording.sync_filter import only_synced

        only_synced(args.source, args.target, args.repo_id, args.min_valid, args.split_at_invalid, args.min_run)
        return
    if args.command == "to-hand-pose":
        from ..recording.hand_pose_training import hand_pose_training_copy

        hand_pose_training_copy(args.source, args.target, args.repo_id, args.preset)
        return
    from ..recording.conversions import lerobot_to_native, native_to_lerobot  # here: --help must not load LeRobot

    if args.command == "to-lerobot":
        native_to_lerobot(args.source, args.target, args.repo_id)
    else:
        lerobot_to_native(args.source, args.target)


def _new_dataset_command(commands, name: str, help: str) -> argparse.ArgumentParser:
    """A conversion that writes a new LeRobotDataset: SOURCE TARGET --repo-id."""
    command = commands.add_parser(name, help=help)
    command.add_argument("source", type=Path)
    command.add_argument("target", type=Path)
    command.add_argument("--repo-id", required=True)
    return command


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    _new_dataset_command(commands, "to-lerobot", "native layout -> a new LeRobotDataset")
    to_native = commands.add_parser("to-native", help="a teledex-record LeRobotDataset -> native layout")
    to_native.add_argument("source", type=Path)
    to_native.add_argument("target", type=Path)
    to_vitra = commands.add_parser("to-vitra", help="native layout -> VITRA <episode>.h5 + <episode>.mp4")
    to_vitra.add_argument("source", type=Path)
    to_vitra.add_argument("target", type=Path)
    to_training = commands.add_parser(
        "to-training", help="a LeRobotDataset with depth -> a copy ACT and Diffusion train on (depth as a 3-channel "
                            "picture, nothing seen black)")
    to_training.add_argument("source", type=Path)
    to_training.add_argument("target", type=Path)
    # the working range of a RealSense and of the world camera around a table
    to_training.add_argument("--near-m", type=float, default=0.1,
                             help="depth rendered brightest, metres (nearer is clipped to it; default 0.1)")
    to_training.add_argument("--far-m", type=float, default=3.0,
                             help="depth rendered darkest but for nothing seen, metres (farther is clipped; "
                                  "default 3.0)")
    only_synced = _new_dataset_command(
        commands, "only-synced", "a teledex-record LeRobotDataset -> a copy of its sync-valid episodes, or with "
                                 "--split-at-invalid of its runs of sync-valid frames, for lerobot-train")
    only_synced.add_argument("--min-valid", type=float, default=None,
                             help="keep the episodes with at least this share of sync-valid frames (default 0.99; "
                                  "with --split-at-invalid none unless given)")
    only_synced.add_argument("--split-at-invalid", action="store_true",
                             help="keep only sync-valid frames, each run of consecutive ones an episode of its own")
    only_synced.add_argument("--min-run", type=int, default=10,
                             help="with --split-at-invalid: drop runs shorter than this many frames (default 10)")
    to_hand_pose = _new_dataset_command(
        commands, "to-hand-pose", "a teledex-record LeRobotDataset -> a training copy acting in each hand's pose (and "
                                  "only the columns a policy reads)")
    to_hand_pose.add_argument("--preset", required=True, help="the preset the dataset was recorded with")
    to_datagrams = commands.add_parser("stream-to-datagrams",
                                       help="operator stream .npz -> recorded input file (.datagrams.jsonl)")
    to_datagrams.add_argument("source", type=Path)
    to_datagrams.add_argument("target", type=Path)
    args = parser.parse_args(argv)
    from ..storage.video import silence_encoder_logs

    silence_encoder_logs()
    run_command("teledex-convert", convert, args)


if __name__ == "__main__":
    main()
