"""Depth a policy can use: teledex-convert to-training.

LeRobot 0.6.1 stores a depth map as its own depth feature (recording/lerobot_dataset.py): one channel of
millimetres, decoded from 12-bit log codes. lerobot-train cannot train ACT or Diffusion on it: ACT passes every
image feature through a torchvision ResNet whose first convolution takes 3 channels ("expected input[..., 1, H, W]
to have 3 channels"), Diffusion wants every image the same shape as the first. Neither has a depth encoder, nor a
switch to leave one image out short of writing out --policy.input_features; LeRobot's way is to drop the feature
(lerobot-edit-dataset remove_feature). And "nothing seen" (0: the simulated world's sky, no return on a RealSense) is
stored as code 0, which LeRobot decodes as depth_min (10 mm by default): a near object, to a policy.

The training copy keeps depth: each depth feature becomes a 3-channel picture under the same key, which ACT passes
through its backbone with the other cameras and Diffusion through a ResNet of its own (its default
use_separate_rgb_encoder_per_camera: a separate depth encoder). The picture is grey (R = G = B: colour subsampling
and colour conversion keep it), brighter nearer, log between near_m and far_m (the same relative precision at every
distance, as LeRobot's own quantization) over RENDER_FLOOR..255; nothing seen is 0, black, a gap of RENDER_FLOOR
levels below the farthest depth (a lossy re-encode crosses it only at a few edge pixels). The copy's videos of it
are H.264, lossless; every other file is copied as it is (colour videos byte for byte), and the feature's stats are
computed from the rendering as LeRobot's recording computes a colour camera's. The rendering's settings are in the
feature's info (DEPTH_RENDERING): a policy trained on the copy must see live depth through render_depth with them.
"""

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import av
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from lerobot.configs.video import RGBEncoderConfig
from lerobot.datasets.compute_stats import RunningQuantileStats, aggregate_stats, auto_downsample_height_width
from lerobot.datasets.io_utils import load_stats, write_stats
from lerobot.datasets.video_utils import get_video_info

from ..storage.errors import DatasetError, UserError
from ..storage.lerobot_meta import read_info
from ..storage.native import write_json_atomic
from ..storage.repair import committed_episodes
from ..storage.teledex_columns import INFO_BACKUP
from .lerobot_dataset import feature_depth_quantization, read_depth_video

RENDER_FLOOR = 32  # the grey of far_m and beyond; nothing seen is 0
DEPTH_RENDERING = "teledex_depth_rendering"  # the feature info's entry: what the rendering was made with
# Lossless coding (crf 0) of a grey the RGB -> YUV conversion keeps within one level; g=2 as LeRobot's colour
# videos, for random access while training.
RENDER_ENCODER = RGBEncoderConfig(vcodec="h264", pix_fmt="yuv420p", crf=0, g=2, preset="veryfast")


def render_depth(depth_mm: np.ndarray, near_m: float, far_m: float) -> np.ndarray:
    """(H, W) or (H, W, 1) millimetres, 0 = nothing seen -> (H, W, 3) uint8 grey: 255 at near_m and nearer,
    RENDER_FLOOR at far_m and farther, log in between; 0 where nothing was seen."""
    depth_mm = np.asarray(depth_mm).reshape(depth_mm.shape[:2])
    metres = np.clip(depth_mm.astype(np.float32) / 1000, near_m, far_m)
    nearness = np.log(far_m / metres) / np.log(far_m / near_m)  # 1 at near_m, 0 at far_m
    grey = np.where(depth_mm > 0, np.rint(RENDER_FLOOR + (255 - RENDER_FLOOR) * nearness), 0).astype(np.uint8)
    return np.repeat(grey[..., None], 3, axis=-1)


def _episode_stats(tracker: RunningQuantileStats) -> dict:
    """A colour camera's episode stats as LeRobot's streaming encoder and writer make them: every frame, downsampled,
    per channel, in [0, 1]."""
    return {name: value if name == "count" else np.squeeze(value.reshape(1, -1, 1, 1) / 255.0, axis=0)
            for name, value in tracker.get_statistics().items()}


def _render_video(source: Path, target: Path, quantization: dict, fps: int, near_m: float, far_m: float,
                  episodes: dict[int, range]) -> tuple[int, dict[int, dict], np.ndarray]:
    """Renders every frame of a depth video into a colour video. episodes: episode index -> its frames in the video.
    Returns the frame count, each episode's stats, and how many seen pixels fell nearer than near_m, farther than
    far_m, and in all."""
    trackers = {index: RunningQuantileStats() for index in episodes}
    clipped = np.zeros(3, dtype=np.int64)
    target.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with av.open(str(target), "w") as output:
        stream = output.add_stream(RENDER_ENCODER.vcodec, fps, options=RENDER_ENCODER.get_codec_options(
            as_strings=True))
        stream.pix_fmt = RENDER_ENCODER.pix_fmt
        for i, depth in enumerate(read_depth_video(source, quantization, nothing_seen_as_zero=True)):
            if i == 0:
                stream.height, stream.width = depth.shape[:2]
            seen = depth[depth > 0]
            clipped += (int((seen < near_m * 1000).sum()), int((seen > far_m * 1000).sum()), seen.size)
            picture = render_depth(depth, near_m, far_m)
            for index, frames in episodes.items():
                if i in frames:
                    trackers[index].update(auto_downsample_height_width(picture.transpose(2, 0, 1))
                                           .transpose(1, 2, 0).reshape(-1, 3))
            output.mux(stream.encode(av.VideoFrame.from_ndarray(picture, format="rgb24")))
            count = i + 1
        output.mux(stream.encode())
    return count, {index: _episode_stats(tracker) for index, tracker in trackers.items()}, clipped


def depth_training_copy(source: Path, target: Path, near_m: float, far_m: float,
                        progress: Callable[[str], None] = print) -> list[str]:
    """Writes the training copy of the LeRobot dataset at source to target (a new folder, renamed into place when
    complete); returns the depth features rendered."""
    source, target = Path(source), Path(target)
    if not 0 < near_m < far_m:
        raise UserError(f"--near-m {near_m} and --far-m {far_m}: give 0 < near < far, in metres")
    info = read_info(source)
    depth = {key: q for key, feature in info["features"].items()
             if (q := feature_depth_quantization(feature)) is not None}
    if not depth:
        raise DatasetError(f"{source} has no depth feature: lerobot-train reads it as it is, no copy is needed")
    episodes = committed_episodes(source, complete=True)
    if not episodes:
        raise DatasetError(f"{source} has no saved episode: record some first")
    fps = info["fps"]
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=f".{target.name}.") as scratch:
        copy = Path(scratch) / target.name
        depth_folders = {str(Path(info["video_path"]).parts[0]) + "/" + key for key in depth}
        shutil.copytree(source, copy, ignore=lambda folder, names: [
            n for n in names if Path(folder, n).relative_to(source).as_posix() in depth_folders])
        stats = load_stats(copy) or {}
        episode_stats: dict[str, dict[int, dict]] = {}
        for key, quantization in depth.items():
            files: dict[tuple[int, int], list[dict]] = {}
            for episode in episodes:
                files.setdefault((episode[f"videos/{key}/chunk_index"], episode[f"videos/{key}/file_index"]),
                                 []).append(episode)
            episode_stats[key], clipped = {}, np.zeros(3, dtype=np.int64)
            for (chunk, file), held in sorted(files.items()):
                relative = info["video_path"].format(video_key=key, chunk_index=chunk, file_index=file)
                frames = {e["episode_index"]: range(start := round(e[f"videos/{key}/from_timestamp"] * fps),
                                                    start + e["length"]) for e in held}
                count, held_stats, file_clipped = _render_video(source / relative, copy / relative, quantization,
                                                                fps, near_m, far_m, frames)
                clipped += file_clipped
                if count < (expected := max(f.stop for f in frames.values())):
                    raise DatasetError(f"{source / relative} has {count} frames, meta/episodes puts {expected} in it; "
                                       f"run `teledex-repair {source}`")
                episode_stats[key].update(held_stats)
            first_video = copy / info["video_path"].format(video_key=key, chunk_index=episodes[0][
                f"videos/{key}/chunk_index"], file_index=episodes[0][f"videos/{key}/file_index"])
            height, width = info["features"][key]["shape"][:2]
            info["features"][key] = {
                "dtype": "video", "shape": [height, width, 3], "names": ["height", "width", "channels"],
                "info": {**get_video_info(first_video, RENDER_ENCODER), DEPTH_RENDERING: {
                    "near_m": near_m, "far_m": far_m, "from_quantization": quantization,
                    "grey": f"{RENDER_FLOOR} at far_m and farther .. 255 at near_m and nearer, log in between; "
                            "0 = nothing seen",
                    "how": "teledex_lerobot.recording.depth_training.render_depth"}}}
            stats[key] = aggregate_stats([{key: s} for s in episode_stats[key].values()])[key]
            seen = max(int(clipped[2]), 1)
            progress(f"{key}: rendered for training (3-channel grey, {near_m}..{far_m} m; {clipped[0] / seen:.1%} of "
                     f"seen pixels nearer, {clipped[1] / seen:.1%} farther, clipped)")
        _write_episode_stats(copy, episode_stats)
        write_stats(stats, copy)
        write_json_atomic(copy / "meta" / "info.json", info)
        if (copy / INFO_BACKUP).exists():
            write_json_atomic(copy / INFO_BACKUP, info)
        if target.exists():  # empty: checked by the command
            target.rmdir()
        copy.rename(target)
    progress(f"wrote {target}: lerobot-train --dataset.root={target} trains ACT and Diffusion on it")
    return list(depth)


def _write_episode_stats(root: Path, episode_stats: dict[str, dict[int, dict]]) -> None:
    """The per-episode stats columns (stats/<key>/<stat>) of meta/episodes, which LeRobot aggregates again when it
    merges, splits or deletes episodes."""
    for path in sorted((root / "meta" / "episodes").glob("*/*.parquet")):
        table = pq.read_table(path)
        indices = table.column("episode_index").to_pylist()
        for key, by_episode in episode_stats.items():
            for stat in next(iter(by_episode.values())):
                column = f"stats/{key}/{stat}"
                values = pa.array([np.asarray(by_episode[i][stat]).tolist() for i in indices])
                table = table.set_column(table.schema.get_field_index(column), column, values)
        pq.write_table(table, path)
