"""teledex-convert: native layout <-> LeRobotDataset, and native -> VITRA (HDF5 + MP4).

  teledex-convert to-lerobot NATIVE_ROOT LEROBOT_ROOT --repo-id local/name
  teledex-convert to-native LEROBOT_ROOT NATIVE_ROOT --repo-id local/name
  teledex-convert to-vitra NATIVE_ROOT OUT_DIR
"""

import argparse
from pathlib import Path

from ..storage.convert import lerobot_to_native, native_to_lerobot
from ..storage.vitra import export_vitra


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    to_lerobot = commands.add_parser("to-lerobot", help="native layout -> a new LeRobotDataset")
    to_lerobot.add_argument("source", type=Path)
    to_lerobot.add_argument("target", type=Path)
    to_lerobot.add_argument("--repo-id", required=True)
    to_native = commands.add_parser("to-native", help="a teledex-record LeRobotDataset -> native layout")
    to_native.add_argument("source", type=Path)
    to_native.add_argument("target", type=Path)
    to_native.add_argument("--repo-id", required=True)
    to_vitra = commands.add_parser("to-vitra", help="native layout -> VITRA <episode>.h5 + <episode>.mp4")
    to_vitra.add_argument("source", type=Path)
    to_vitra.add_argument("target", type=Path)
    args = parser.parse_args(argv)
    if args.target.exists() and any(args.target.iterdir()) and args.command != "to-vitra":
        parser.error(f"{args.target} exists and is not empty; choose a new target folder")
    if args.command == "to-lerobot":
        native_to_lerobot(args.source, args.target, args.repo_id)
    elif args.command == "to-native":
        lerobot_to_native(args.source, args.repo_id, args.target)
    else:
        export_vitra(args.source, args.target)


if __name__ == "__main__":
    main()
