"""teledex-repair: make a dataset a killed recording left behind loadable again, in both formats, losing nothing
that was saved (damaged files are moved aside, never deleted)."""

import argparse
from pathlib import Path

from ..storage.repair import repair_lerobot, repair_native


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("dataset_root", type=Path, help="the LeRobot dataset root (--dataset.root of the recording)")
    parser.add_argument("--native-root", type=Path, help="the native layout root (default: <dataset_root>_native)")
    args = parser.parse_args(argv)
    native_root = args.native_root or Path(f"{args.dataset_root}_native")
    actions = [f"[lerobot] {a}" for a in repair_lerobot(args.dataset_root)]
    if native_root.is_dir():
        actions += [f"[native] {a}" for a in repair_native(native_root)]
    print("\n".join(actions) if actions else "Nothing to repair: both formats are complete.")


if __name__ == "__main__":
    main()
