"""teledex-merge: several stations' recordings -> one dataset, in both formats, pairs and ids intact.

  teledex-merge OUT_ROOT STATION_ROOT [STATION_ROOT ...] --repo-id local/merged

Each STATION_ROOT is a LeRobot dataset recorded by teledex-record, its native layout beside it (<root>_native).
The LeRobot datasets are merged by LeRobot's own aggregate_datasets (the tool behind `lerobot-edit-dataset
--operation.type merge`); the native episodes are copied byte for byte in the same order and renumbered to match.
Every episode keeps its uuid, sync policy, camera intrinsics and metadata (with where it came from); the result is
checked to hold the same uuid at every index in both formats.
"""

import argparse
import shutil
from pathlib import Path

from ..storage.errors import DatasetError, check_root
from ..storage.lerobot_meta import read_sidecar
from ..storage.native import (
    copy_episode,
    episode_dir_name,
    load_native_episode,
    native_episode_dirs,
    write_json_atomic,
)
from ..storage.repair import committed_episodes
from ..storage.teledex_columns import SIDECAR_DIR
from .errors import run_command


def station_pairs(root: Path) -> list[tuple[int, str]]:
    """A station's (index, uuid) pairs, every file checked (info.json, parquet, manifests and checksums, sidecars)."""
    lerobot = [(int(e["episode_index"]), e["episode_uuid"]) for e in committed_episodes(root, complete=True)]
    native_root = Path(f"{root}_native")
    native = [(e.index, e.episode_uuid) for e in (load_native_episode(folder, verify_checksums=True)
                                                  for folder in native_episode_dirs(native_root))]
    if not lerobot or lerobot != native:
        raise DatasetError(f"{root} and {native_root} do not hold the same episodes (or none): run "
                           f"`teledex-repair {root}` first")
    for index, episode_uuid in lerobot:
        if read_sidecar(root, episode_uuid) is None:
            raise DatasetError(f"{root} has no TeleDex sidecar for episode {index} ({episode_uuid}): it was not "
                               "recorded by teledex-record, so its metadata is unknown")
    return lerobot


def merge(out_root: Path, stations: list[Path], repo_id: str) -> None:
    from lerobot.datasets.aggregate import aggregate_datasets  # here: --help must not load LeRobot

    out_native = Path(f"{out_root}_native")
    for root in (out_root, out_native, *stations, *(Path(f"{station}_native") for station in stations)):
        check_root(root)
    for target in (out_root, out_native):
        if target.exists():
            raise DatasetError(f"{target} already exists; merge into a new root")
    pairs = {station: station_pairs(station) for station in stations}
    uuids = [u for station_pairs_ in pairs.values() for _, u in station_pairs_]
    if len(set(uuids)) != len(uuids):
        raise DatasetError("The same episode uuid is in more than one station's dataset: a station was given twice "
                           "or copied into another")
    try:
        aggregate_datasets([f"station/{i}" for i in range(len(stations))], repo_id, roots=stations, aggr_root=out_root)
    except ValueError as error:  # LeRobot's check that the stations agree (fps, robot_type, features), before writing
        raise DatasetError(f"LeRobot does not merge these stations: {error} Merge stations that record the same rig "
                           "at the same fps with the same features (a station recorded before robot_type named the "
                           "rig says 'teledex': set robot_type in its meta/info.json to the other's)") from None
    merged_index = 0
    for station in stations:
        for (index, episode_uuid), folder in zip(pairs[station], native_episode_dirs(Path(f"{station}_native")),
                                                 strict=True):
            episode = load_native_episode(folder)
            origin = {"root": str(station.resolve()), "episode_index": index}
            metadata = {**episode.metadata, "lerobot": {**episode.metadata.get("lerobot", {}), "repo_id": repo_id,
                                                        "root": str(out_root.resolve()),
                                                        "episode_index": merged_index},
                        "merged_from": [*episode.metadata.get("merged_from", []), origin]}
            session = out_native / folder.parent.name
            session.mkdir(parents=True, exist_ok=True)
            if not (session / "session.json").exists():
                shutil.copyfile(folder.parent / "session.json", session / "session.json")
            copy_episode(folder, session / episode_dir_name(merged_index), metadata)
            sidecar = read_sidecar(station, episode_uuid)
            assert sidecar is not None  # station_pairs checked it is there
            (out_root / SIDECAR_DIR).mkdir(parents=True, exist_ok=True)
            write_json_atomic(out_root / SIDECAR_DIR / f"{episode_uuid}.json", {**sidecar, "metadata": metadata})
            merged_index += 1
    merged = station_pairs(out_root)
    if [u for _, u in merged] != uuids:
        raise DatasetError(f"LeRobot's merge put the episodes in another order than the stations': {out_root} and "
                           f"{out_native} were written but are not paired; delete them and report this")
    print(f"Merged {len(stations)} stations, {len(merged)} episodes, into {out_root} and {out_native}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out_root", type=Path)
    parser.add_argument("stations", type=Path, nargs="+")
    parser.add_argument("--repo-id", required=True)
    args = parser.parse_args(argv)
    run_command("teledex-merge", merge, args.out_root, args.stations, args.repo_id)


if __name__ == "__main__":
    main()
