"""teledex-repair: make a dataset a killed recording left behind loadable again and reconcile its two formats by
episode uuid, losing nothing that was saved (whatever is set aside moves to <root>.damaged/, never deleted).
Safe to interrupt and run again."""

import argparse
from pathlib import Path

import numpy as np

from ..storage.errors import DatasetError, check_root
from ..storage.repair import repair_lerobot, repair_native
from .errors import run_command


def recompute_stats(root: Path, episodes: list[dict]) -> None:
    """stats.json from the per-episode statistics LeRobot stores with each committed episode."""
    from lerobot.datasets.compute_stats import aggregate_stats  # here, not at the top: --help must not load LeRobot
    from lerobot.datasets.io_utils import write_stats

    per_episode = []
    for episode in episodes:
        stats: dict[str, dict] = {}
        for column, value in episode.items():
            if column.startswith("stats/") and value is not None:
                _, feature, stat = column.split("/", 2)
                stats.setdefault(feature, {})[stat] = np.asarray(value)
        per_episode.append(stats)
    write_stats(aggregate_stats(per_episode), root)


def lerobot_columns(episode, features: dict):
    """The LeRobot columns of a native episode (recording/conversions.py), imported only for a data file that lost
    a column: the rest of a repair needs no LeRobot import."""
    from ..recording.conversions import lerobot_columns as columns

    return columns(episode, features)


def repair(dataset_root: Path, native_root: Path | None) -> None:
    given = native_root is not None
    native_root = native_root or Path(f"{dataset_root}_native")
    for root in (dataset_root, native_root):
        check_root(root)
    if given and not native_root.is_dir():
        raise DatasetError(f"--native-root {native_root} does not exist; give the folder the recording wrote its "
                           "native layout to (its --native.root), or leave the flag out")
    looked = native_root.is_dir()
    actions, episodes = repair_lerobot(dataset_root, recompute_stats, native_root if looked else None,
                                       lerobot_columns)
    actions = [f"[lerobot] {a}" for a in actions]
    if looked:
        lerobot_uuids = {int(e["episode_index"]): e["episode_uuid"] for e in episodes}
        actions += [f"[native] {a}" for a in repair_native(native_root, lerobot_uuids)]
        print("\n".join(actions) if actions else "Nothing to repair: both formats are complete and hold the same "
              f"{len(episodes)} episode(s).")
        return
    # the native layout was never looked at: nothing may be said of it, least of all that it is complete
    unseen = (f"[native] not looked at: there is no native layout at {native_root}, where teledex-record writes it "
              "unless told otherwise (--native.root); if it wrote one elsewhere, run again with --native-root PATH")
    print("\n".join([*actions, unseen]) if actions else f"Nothing to repair in the LeRobot dataset: it is complete "
          f"({len(episodes)} episode(s)).\n{unseen}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("dataset_root", type=Path, help="the LeRobot dataset root (--dataset.root of the recording)")
    parser.add_argument("--native-root", type=Path, help="the native layout root (default: <dataset_root>_native)")
    args = parser.parse_args(argv)
    run_command("teledex-repair", repair, args.dataset_root, args.native_root)


if __name__ == "__main__":
    main()
