"""Training on synchronised frames only: teledex-convert only-synced.

lerobot-train samples every frame of a dataset, sync-valid or not, and has no switch to skip frames by a column. So
the filter writes a new LeRobotDataset that lerobot-train reads as it is:
- by episode (the default): the episodes whose share of sync-valid frames is at least min_valid, through LeRobot's
  own delete_episodes (each recorded episode lives in its own files, so its videos are copied, not re-encoded). The
  sidecars of the kept episodes come along (their metadata's lerobot.episode_index renumbered);
- by frame (split_at_invalid): only the valid frames, each run of consecutive valid frames its own episode (runs
  shorter than min_run dropped), so that no training sample, nor LeRobot's delta_timestamps window, spans a gap.
  The runs go through the recorder's LeRobotSink (videos decoded and encoded once, as to-lerobot does); each run gets
  a new episode uuid (uuid5 of its episode's and its first frame) and a sidecar with its episode's metadata, camera
  intrinsics and sync policy, plus "sync_filter": the episode uuid and frames it came from.
Every frame's own columns (sync flags, timestamps, device_fault) are kept as recorded; episodes are kept or split by
their recorded sync flags (by frame, each frame is also judged again by its recording's rule as it is copied). The
dataset is written in a scratch folder beside the target and renamed into place when complete: a refusal, before or
while writing, leaves nothing at the target, and the source is only read.
"""

import json
import shutil
import tempfile
import uuid
from collections.abc import Callable, Generator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
from lerobot.configs import DepthEncoderConfig
from lerobot.datasets import LeRobotDataset
from lerobot.datasets.dataset_tools import delete_episodes
from lerobot.utils.constants import OBS_ENV_STATE

from ..geometry.camera import CameraInfo
from ..storage.errors import DatasetError, UserError
from ..storage.frame import FrameLayout, RecordedFrame
from ..storage.lerobot_meta import read_info, read_sidecar, sidecar_path
from ..storage.native import write_json_atomic
from ..storage.repair import committed_episodes
from ..storage.sink import EpisodeHeader, commit_pair
from ..storage.sync_readers import is_lerobot_root, sync_from_lerobot
from ..storage.sync_rule import recorded_rule
from ..storage.teledex_columns import (
    DEVICE_FAULT,
    FRAME_TIME,
    INFO_BACKUP,
    SUCCESS,
    SYNC_VALID,
    TACTILE,
    source_column,
)
from ..storage.video import copy_video_segment, video_frames
from .conversions import frame_faults, rejudged_packet, stream_shapes
from .lerobot_dataset import LeRobotSink, feature_depth_quantization, quiet_depth_encoder, read_depth_video

DEFAULT_MIN_VALID = 0.99  # the episode filter's default share of sync-valid frames
DEFAULT_MIN_RUN = 10  # frames: shorter runs of valid frames are dropped (at 25-30 fps, a third of a second)


@dataclass(frozen=True)
class Piece:
    """What the filtered dataset keeps of one source episode: its frames [start, stop), or the whole episode."""

    episode_index: int
    episode_uuid: str | None
    start: int
    stop: int


def valid_runs(valid: np.ndarray, min_run: int) -> list[tuple[int, int]]:
    """The runs [start, stop) of consecutive True of at least min_run frames."""
    edges = np.flatnonzero(np.diff(np.concatenate(([0], np.asarray(valid, dtype=np.int8), [0]))))
    return [(int(a), int(b)) for a, b in zip(edges[::2], edges[1::2], strict=True) if b - a >= min_run]


def only_synced(source: Path, target: Path, repo_id: str, min_valid: float | None = None,
                split_at_invalid: bool = False, min_run: int = DEFAULT_MIN_RUN,
                progress: Callable[[str], None] = print) -> list[Piece]:
    """Writes the filtered copy of the teledex-record LeRobotDataset at source to target (a new folder); returns what
    it kept. min_valid: the least share of valid frames an episode needs (None: DEFAULT_MIN_VALID by episode, no
    episode threshold by frame)."""
    source, target = Path(source), Path(target)
    if min_valid is not None and not 0 <= min_valid <= 1:
        raise UserError(f"--min-valid {min_valid}: give a share of frames between 0 and 1, e.g. 0.99")
    if min_run < 1:
        raise UserError(f"--min-run {min_run}: give a number of frames >= 1, e.g. {DEFAULT_MIN_RUN}")
    if not is_lerobot_root(source):
        raise DatasetError(f"{source} is not a LeRobotDataset (no meta/ folder); give the LeRobot root teledex-record "
                           "wrote, or convert a native root first (teledex-convert to-lerobot)")
    episodes = sync_from_lerobot(source)  # refuses a dataset without the sync columns in one line
    threshold = DEFAULT_MIN_VALID if min_valid is None and not split_at_invalid else min_valid
    pieces: list[Piece] = []
    lines = []  # what is kept and dropped, said once something is kept (a refusal is one line)
    for episode in episodes:
        share, count = float(episode.valid.mean()), len(episode.valid)
        if threshold is not None and share < threshold:
            lines.append(f"episode {episode.episode_index}: dropped, {share:.1%} of {count} frames sync-valid "
                         f"(< --min-valid {threshold})")
            continue
        if not split_at_invalid:
            pieces.append(Piece(episode.episode_index, episode.episode_uuid, 0, count))
            lines.append(f"episode {episode.episode_index}: kept, {share:.1%} of {count} frames sync-valid")
            continue
        runs = valid_runs(episode.valid, min_run)
        kept = sum(b - a for a, b in runs)
        pieces += [Piece(episode.episode_index, episode.episode_uuid, a, b) for a, b in runs]
        lines.append(f"episode {episode.episode_index}: {count} frames, {share:.1%} sync-valid -> {len(runs)} "
                     f"run(s) of {kept} valid frames kept ({int(episode.valid.sum()) - kept} valid frames in runs "
                     f"shorter than --min-run {min_run} dropped)")
    total = sum(len(e.valid) for e in episodes)
    kept_frames = sum(p.stop - p.start for p in pieces)
    if not pieces:
        fix = (f"lower --min-run (now {min_run})" if split_at_invalid and threshold is None else
               f"lower --min-valid (now {threshold})" + (f" or --min-run (now {min_run})" if split_at_invalid else ""))
        raise UserError(f"{source}: the filter keeps nothing of its {len(episodes)} episodes ({total} frames, "
                        f"{sum(int(e.valid.sum()) for e in episodes) / max(total, 1):.1%} sync-valid); {fix}, "
                        "or record again")
    for line in lines:
        progress(line)
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=f".{target.name}.") as scratch:
        copy = Path(scratch) / target.name
        if split_at_invalid:
            _write_runs(source, copy, repo_id, pieces, Path(scratch), progress)
        else:
            _keep_episodes(source, copy, repo_id, {e.episode_index for e in episodes} - {p.episode_index
                                                                                        for p in pieces}, pieces)
        if target.exists():  # empty: checked by the command
            target.rmdir()
        copy.rename(target)
    progress(f"wrote {target}: {len(pieces)} episodes, {kept_frames} of {total} frames kept "
             f"({total - kept_frames} dropped); train with lerobot-train --dataset.repo_id={repo_id} "
             f"--dataset.root={target}")
    return pieces


def _keep_episodes(source: Path, copy: Path, repo_id: str, dropped: set[int], pieces: list[Piece]) -> None:
    if dropped:
        delete_episodes(LeRobotDataset(repo_id, root=source), sorted(dropped), output_dir=copy, repo_id=repo_id)
    else:  # LeRobot's tool refuses to delete nothing: the dataset as it is
        shutil.copytree(source, copy, ignore=shutil.ignore_patterns("images"))
    for new_index, piece in enumerate(pieces):  # delete_episodes keeps the order
        if piece.episode_uuid is None:
            continue
        sidecar = read_sidecar(source, piece.episode_uuid)
        if sidecar is None:  # not a teledex-record episode: nothing to carry
            continue
        metadata = sidecar["metadata"]
        metadata["lerobot"] = {**metadata.get("lerobot", {}), "episode_index": new_index}
        path = sidecar_path(copy, piece.episode_uuid)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_json_atomic(path, sidecar)
    write_json_atomic(copy / INFO_BACKUP, json.loads((copy / "meta" / "info.json").read_text()))


def _write_runs(source: Path, copy: Path, repo_id: str, pieces: list[Piece], scratch: Path,
                progress: Callable[[str], None]) -> None:
    info = read_info(source)
    features = info["features"]
    committed = {int(e["episode_index"]): e for e in committed_episodes(source, complete=True)}
    sidecars = {}
    for index in dict.fromkeys(p.episode_index for p in pieces):  # every sidecar read before anything is written
        episode_uuid = next(p.episode_uuid for p in pieces if p.episode_index == index)
        sidecar = read_sidecar(source, episode_uuid) if episode_uuid else None
        if sidecar is None:
            raise DatasetError(f"{source} has no TeleDex sidecar for episode {index} (meta/teledex_episodes): it was "
                               "not recorded by teledex-record, so its sync policy and cameras are unknown")
        sidecars[index] = sidecar
    first = sidecars[pieces[0].episode_index]
    cameras = {n: CameraInfo(**{**c, "distortion": tuple(c["distortion"])}) for n, c in first["camera_info"].items()}
    depth = {n: q for n in cameras
             if (q := feature_depth_quantization(features.get(f"observation.images.{n}", {}))) is not None}
    layout = FrameLayout(
        state_names=tuple(features["observation.state"]["names"]), action_names=tuple(features["action"]["names"]),
        tactile_names=tuple(features[TACTILE]["names"]) if TACTILE in features else (),
        cameras=stream_shapes(cameras, depth), source_names=tuple(first["source_names"]), fps=info["fps"],
        environment_names=tuple(features[OBS_ENV_STATE]["names"]) if OBS_ENV_STATE in features else (),
        judged=SUCCESS in features)
    writer_options: dict = {"streaming_encoding": True}
    if depth:  # one quantization per dataset (LeRobot's): the source's
        writer_options["depth_encoder"] = quiet_depth_encoder(DepthEncoderConfig(**next(iter(depth.values()))))
    sink = LeRobotSink.open(repo_id, copy, layout.fps, info["robot_type"], layout, resume=False, use_video=True,
                            writer_options=writer_options, extra_sidecar={})
    try:
        for index, sidecar in sidecars.items():
            runs = [p for p in pieces if p.episode_index == index]
            frames = _frames(source, info, committed[index], layout, sidecar, scratch)
            position = 0
            for run in runs:
                for _ in range(run.start - position):  # the invalid frames before the run, decoded and passed
                    next(frames)
                header = EpisodeHeader(str(uuid.uuid5(uuid.UUID(run.episode_uuid), str(run.start))),
                                       sink.next_index, sidecar["metadata"]["episode"]["task_name"])
                sink.extra_sidecar = {key: sidecar[key] for key in ("camera_info", "sync_policy", "source_names")}
                sink.begin(header)
                for _ in range(run.stop - run.start):
                    sink.add(next(frames))
                metadata = {**sidecar["metadata"],
                            "lerobot": {**sidecar["metadata"].get("lerobot", {}), "episode_index": header.index},
                            "sync_filter": {"from_episode_uuid": run.episode_uuid, "from_episode_index": index,
                                            "frames": [run.start, run.stop]}}
                commit_pair(sink, None, metadata)
                position = run.stop
                progress(f"episode {index} frames {run.start}..{run.stop - 1} -> episode {header.index}")
            frames.close()
    finally:
        sink.close()


def _frames(source: Path, info: dict, episode: dict, layout: FrameLayout, sidecar: dict,
            scratch: Path) -> Generator[RecordedFrame]:
    """A LeRobot episode's frames as the recorder fed them to its sink, each checked against the recorded sync rule;
    pictures decoded one at a time from the episode's video segments."""
    index = int(episode["episode_index"])
    data = source / info["data_path"].format(chunk_index=episode["data/chunk_index"],
                                             file_index=episode["data/file_index"])
    rows = pq.read_table(data).to_pandas()
    rows = rows[rows["episode_index"] == index]
    videos = {}
    for name in layout.cameras:
        key = f"observation.images.{name}"
        video = source / info["video_path"].format(video_key=key, chunk_index=episode[f"videos/{key}/chunk_index"],
                                                   file_index=episode[f"videos/{key}/file_index"])
        segment = scratch / f"{index}_{name}.mp4"
        if copy_video_segment(video, segment, episode[f"videos/{key}/from_timestamp"],
                              episode[f"videos/{key}/to_timestamp"]) != len(rows):
            raise DatasetError(f"{video}: episode {index} has not one video frame per row ({len(rows)}); run "
                               f"`teledex-repair {source}`")
        quantization = feature_depth_quantization(info["features"][key])
        videos[name] = video_frames(segment) if quantization is None else read_depth_video(segment, quantization)
    rule = recorded_rule(sidecar["sync_policy"], sidecar_path(source, sidecar["episode_uuid"]))
    stamps = np.stack([rows[source_column(s)].to_numpy() for s in layout.source_names], axis=1)
    metadata = sidecar["metadata"]
    for i, (_, row) in enumerate(rows.iterrows()):
        where = f"{source} episode {index} frame {i}"
        yield RecordedFrame(np.asarray(row["observation.state"]), np.asarray(row["action"]),
                            np.asarray(row[TACTILE]) if layout.tactile_names else np.zeros(0),
                            {name: next(frames) for name, frames in videos.items()},
                            rejudged_packet(stamps[i], row[FRAME_TIME], layout.source_names, rule, row[SYNC_VALID],
                                            where),
                            frame_faults(metadata, row[DEVICE_FAULT], where),
                            environment=np.asarray(row[OBS_ENV_STATE]) if layout.environment_names else np.zeros(0),
                            success=layout.judged and bool(row[SUCCESS]))
