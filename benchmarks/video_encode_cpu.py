"""CPU spent on video per recorded camera frame: one encode shared by both formats (what teledex-record does now)
against the two encodes it used to run (LeRobot's PNG staging + encode at save, and a separate H.264 for the native
layout). Frames are a synthetic moving scene at the simulated camera's size.

Run: .venv/bin/python benchmarks/video_encode_cpu.py [--frames 500 --width 320 --height 240]
"""

import argparse
import resource
import tempfile
import time
from pathlib import Path

import numpy as np
from lerobot.configs import rgb_encoder_defaults
from lerobot.datasets.image_writer import write_image
from lerobot.datasets.video_utils import encode_video_frames

from teledex_lerobot.recording.lerobot_dataset import SharedVideoEncoder
from teledex_lerobot.storage.video import H264Writer, silence_encoder_logs


def cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def frames_of(count: int, width: int, height: int) -> list[np.ndarray]:
    """A moving scene with edges and flat areas, like the render camera's pictures."""
    y, x = np.mgrid[0:height, 0:width]
    frames = []
    for i in range(count):
        phase = i / 25
        image = np.zeros((height, width, 3), np.uint8)
        image[..., 0] = (128 + 100 * np.sin(x / 23 + phase)).astype(np.uint8)
        image[..., 1] = (128 + 100 * np.cos(y / 17 - phase)).astype(np.uint8)
        bar = (x - width / 2 - 60 * np.sin(phase)) ** 2 + (y - height / 2) ** 2 < 900
        image[bar] = (250, 250, 250)
        frames.append(image)
    return frames


def shared_encode(frames: list[np.ndarray], folder: Path, fps: int) -> None:
    encoder = SharedVideoEncoder(fps=fps, rgb_encoder=rgb_encoder_defaults())
    encoder.start_episode(["observation.images.top"], folder)
    for frame in frames:
        encoder.feed_frame("observation.images.top", frame)
    encoder.finish_now()
    encoder.discard_finished()


def double_encode(frames: list[np.ndarray], folder: Path, fps: int) -> None:
    native = H264Writer(folder / "native.mp4", frames[0].shape[1], frames[0].shape[0], fps)
    images = folder / "images"
    images.mkdir()
    for i, frame in enumerate(frames):
        write_image(frame, images / f"frame-{i:06d}.png", compress_level=1)
        native.add(frame)
    encode_video_frames(images, folder / "lerobot.mp4", fps, video_encoder=rgb_encoder_defaults(), overwrite=True)
    native.close()


def measure(job, frames, fps: int) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        cpu, wall = cpu_s(), time.perf_counter()
        job(frames, Path(tmp), fps)
        return cpu_s() - cpu, time.perf_counter() - wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--frames", type=int, default=500)
    parser.add_argument("--width", type=int, default=320)
    parser.add_argument("--height", type=int, default=240)
    parser.add_argument("--fps", type=int, default=25)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    silence_encoder_logs()
    frames = frames_of(args.frames, args.width, args.height)
    print(f"{args.frames} frames {args.width}x{args.height}, LeRobot's default encoder "
          f"({rgb_encoder_defaults().vcodec}); best of {args.repeats}")
    print(f"{'path':<44} {'CPU ms/frame':>12} {'wall ms/frame':>14}")
    results = {}
    for name, job in (("one shared encode (LeRobot streaming)", shared_encode),
                      ("two encodes (PNG + LeRobot encode, + H.264)", double_encode)):
        runs = [measure(job, frames, args.fps) for _ in range(args.repeats)]
        cpu, wall = min(runs)
        results[name] = cpu
        print(f"{name:<44} {1e3 * cpu / args.frames:>12.2f} {1e3 * wall / args.frames:>14.2f}")
    shared, double = results.values()
    print(f"CPU saved per frame: {1e3 * (double - shared) / args.frames:.2f} ms ({100 * (1 - shared / double):.0f}%)")


if __name__ == "__main__":
    main()
