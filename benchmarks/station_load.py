"""A station's load on this machine: 1, 2 and 3 cameras at 640x480 and 30 Hz recorded by teledex-record's loop for
one long episode, with each encoder choice; memory over time (its slope) and the rate the loop achieved.

    .venv/bin/python benchmarks/station_load.py [--seconds 600] [--cameras 1 2 3] [--encoders av1-p12 h264]
                                                [--plot docs/station_load.png]

Each row is one recording in a fresh process (the fake arm and hand, the replayed demo input, N cameras, the LeRobot
dataset and the native layout written as in teledex-record). The cameras cost no CPU of their own (a USB camera's
frames arrive decoded by its driver): each plays a ring of noisy moving frames (noise, so the encoder works as on a
real sensor's pictures), at its own 30 Hz in its own thread, stamped at capture. The process samples its resident
memory every 2 s from the episode's start to its save; the slope is fitted over the episode's second half (after
the encoders' buffers fill; the save that follows is drawn, not fitted). Achieved rate and dropped ticks are the
episode's own timing metadata (the same numbers the "Saved episode" line prints).

Encoder choices (LeRobot's streaming encoder, PyAV in threads; every choice decodes with LeRobot's video decoders):
  av1-p12  libsvtav1 preset 12, crf 30, GOP 2 (LeRobot's default)
  av1-p8   libsvtav1 preset 8 (slower than preset 12, which already falls behind with two cameras; not measured)
  h264     libx264 preset ultrafast, crf 23, GOP 2 (least CPU; files several times larger)
"""

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

ENVIRONMENT = {"HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
ENCODERS = {
    "av1-p12": {"vcodec": "libsvtav1", "preset": 12, "crf": 30, "g": 2},
    "av1-p8": {"vcodec": "libsvtav1", "preset": 8, "crf": 30, "g": 2},
    "h264": {"vcodec": "h264", "preset": "ultrafast", "crf": 23, "g": 2},
}
WIDTH, HEIGHT, FPS = 640, 480, 30
RING = 60  # distinct frames each camera cycles through (2 s at 30 Hz)
SAMPLE_S = 2.0


def rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status (Linux only)")


def pattern_ring(seed: int) -> list[np.ndarray]:
    """Moving bars and sensor noise: the encoder sees new detail every frame, as on a real camera."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:HEIGHT, 0:WIDTH]
    frames = []
    for i in range(RING):
        phase = 2 * np.pi * i / RING
        image = np.empty((HEIGHT, WIDTH, 3), np.float32)
        image[..., 0] = 128 + 90 * np.sin(x / 31 + phase)
        image[..., 1] = 128 + 90 * np.cos(y / 19 - phase)
        image[..., 2] = 128 + 60 * np.sin((x + y) / 47 + 2 * phase)
        image += rng.normal(0, 6, image.shape)
        frames.append(np.clip(image, 0, 255).astype(np.uint8))
    return frames


def define_pattern_camera():
    """The ring camera as a LeRobot camera type (registered as `bench_pattern`; LeRobot finds PatternCamera beside
    its config in this module)."""
    from dataclasses import dataclass

    from lerobot.cameras import CameraConfig

    from lerobot_robot_teledex.cameras.config_render_camera import TeledexRenderCameraConfig
    from lerobot_robot_teledex.cameras.render_camera import TeledexRenderCamera

    @CameraConfig.register_subclass("bench_pattern")
    @dataclass(kw_only=True)
    class PatternCameraConfig(TeledexRenderCameraConfig):
        seed: int = 0

    class PatternCamera(TeledexRenderCamera):
        """A render camera whose pictures come from the ring: its thread, pacing and capture stamps are the render
        camera's."""

        def attach_scene(self, scene, centre_m, distance_m) -> None:
            self._scene, self._ring, self._next = scene, pattern_ring(self.config.seed), 0

        def _capture(self):
            self._next = (self._next + 1) % RING
            return self._ring[self._next], None

    globals().update(PatternCameraConfig=PatternCameraConfig, PatternCamera=PatternCamera)
    return PatternCameraConfig


class EpisodeMarks(io.TextIOBase):
    """stdout, watched for the loop's "Recording episode" and "Saved episode" lines: memory is sampled between."""

    def __init__(self):
        self.started = self.ended = None

    def write(self, text: str) -> int:
        if text.startswith("Recording episode"):
            self.started = time.perf_counter()
        elif text.startswith("Saved episode"):
            self.ended = time.perf_counter()
        return sys.__stdout__.write(text)


def run_one(cameras: int, encoder: str, seconds: float, out: Path) -> None:
    """Child process: record one episode and write its memory samples and timing to `out`."""
    from lerobot.configs import RGBEncoderConfig
    from lerobot.configs.dataset import DatasetRecordConfig

    from lerobot_robot_teledex import TeledexConfig
    from lerobot_teleoperator_teledex import TeledexReplayConfig
    from teledex_lerobot.recording.recorder import Recorder, TeledexRecordConfig
    from teledex_lerobot.storage.video import silence_encoder_logs

    silence_encoder_logs()
    camera_config = define_pattern_camera()
    samples, stop, episode = [], threading.Event(), EpisodeMarks()

    def sample() -> None:
        while not stop.wait(SAMPLE_S):
            if episode.started is not None and episode.ended is None:
                samples.append((round(time.perf_counter() - episode.started, 1), round(rss_mb(), 1)))

    with tempfile.TemporaryDirectory(prefix="station_load_") as tmp:
        root = Path(tmp) / "ds"
        config = TeledexRecordConfig(
            robot=TeledexConfig(backend="fake", cameras={
                f"cam{i}": camera_config(width=WIDTH, height=HEIGHT, fps=FPS, seed=i) for i in range(cameras)}),
            teleop=TeledexReplayConfig(),
            dataset=DatasetRecordConfig(repo_id="local/station", root=str(root), single_task="station load",
                                        fps=FPS, episode_time_s=seconds, reset_time_s=0, num_episodes=1,
                                        push_to_hub=False, rgb_encoder=RGBEncoderConfig(**ENCODERS[encoder])))
        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        with contextlib.redirect_stdout(episode):
            Recorder(config).run()
        stop.set()
        metadata = json.loads(next(Path(f"{root}_native").glob("*/episode_000000/metadata.json")).read_text())
        video_mb = sum(p.stat().st_size for p in root.glob("videos/**/*.mp4")) / 2**20
    out.write_text(json.dumps({"samples": samples, "timing": metadata["timing"], "video_mb": video_mb}))


def slope_mb_per_min(samples: list[tuple[float, float]], seconds: float) -> float:
    """Least-squares slope of resident memory over the episode's second half (not its save, which follows)."""
    half = np.asarray([(t, mb) for t, mb in samples if seconds / 2 <= t <= seconds], dtype=float)
    if len(half) < 2:
        return float("nan")
    return float(np.polyfit(half[:, 0], half[:, 1], 1)[0] * 60)


def plot(results: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(8, 4.5))
    for (cameras, encoder), result in results.items():
        times, memory = zip(*result["samples"], strict=True)
        axes.plot(np.asarray(times) / 60, memory, label=f"{cameras} camera{'s' * (cameras > 1)}, {encoder}")
    axes.set_xlabel("minutes into the episode")
    axes.set_ylabel("resident memory (MB)")
    axes.set_title(f"teledex-record, {WIDTH}x{HEIGHT} cameras at {FPS} Hz, one episode")
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    print(f"plot: {path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=600.0, help="episode length")
    parser.add_argument("--cameras", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--encoders", nargs="+", default=list(ENCODERS), choices=sorted(ENCODERS))
    parser.add_argument("--plot", type=Path, default=None, help="where to draw memory over time (PNG)")
    parser.add_argument("--results", type=Path, default=None, help="where to write every run's samples (JSON)")
    parser.add_argument("--child", nargs=3, metavar=("CAMERAS", "ENCODER", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        run_one(int(args.child[0]), args.child[1], args.seconds, Path(args.child[2]))
        return
    results = {}
    header = ("| cameras | encoder | achieved Hz | dropped ticks | peak MB | MB/min (2nd half) | video MB/min |\n"
              "|---|---|---|---|---|---|---|")
    rows = []
    with tempfile.TemporaryDirectory(prefix="station_load_results_") as tmp:
        for cameras in args.cameras:
            for encoder in args.encoders:
                out = Path(tmp) / f"{cameras}_{encoder}.json"
                print(f"recording {args.seconds:g} s with {cameras} camera(s), {encoder} ...", flush=True)
                done = subprocess.run([sys.executable, __file__, "--seconds", str(args.seconds), "--child",
                                       str(cameras), encoder, str(out)], env={**os.environ, **ENVIRONMENT},
                                      stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                if done.returncode != 0:
                    raise SystemExit(f"the recording failed ({done.returncode}):\n{done.stderr[-3000:]}")
                result = results[(cameras, encoder)] = json.loads(out.read_text())
                timing, memory = result["timing"], [m for _, m in result["samples"]]
                rows.append(f"| {cameras} | {encoder} | {timing['achieved_hz']:.1f} | {timing['dropped_ticks']} of "
                            f"{timing['frames_expected']} | {max(memory):.0f} | "
                            f"{slope_mb_per_min(result['samples'], args.seconds):+.1f} | "
                            f"{result['video_mb'] / (args.seconds / 60):.1f} |")
                print(rows[-1], flush=True)
                print("  memory (MB) by minute: " + "  ".join(
                    f"{t / 60:.0f}: {mb:.0f}" for t, mb in result["samples"] if t % 60 < SAMPLE_S), flush=True)
    print(f"\n{WIDTH}x{HEIGHT} at {FPS} Hz, {args.seconds:g} s episodes, load average {os.getloadavg()[0]:.1f}\n")
    print(header)
    print("\n".join(rows))
    if args.results:
        args.results.write_text(json.dumps([{"cameras": c, "encoder": e, **r} for (c, e), r in results.items()]))
    if args.plot:
        plot(results, args.plot)


if __name__ == "__main__":
    main()
