"""teledex-record on the simulated rig (Piper + LinkerHand O6 + one 320x240 simulated camera): achieved rate, late
frames and the report's table 2 sync metrics, at 25 Hz and 50 Hz.

Run: .venv/bin/python benchmarks/record_sync.py [--episodes 3 --seconds 20]
"""

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from teledex_lerobot.storage.native import load_native_episode, native_episode_dirs
from teledex_lerobot.storage.sync_readers import sync_from_native
from teledex_lerobot.sync.report import report

BIN = Path(sys.executable).parent


def record(root: Path, fps: int, episodes: int, seconds: float) -> None:
    camera = f"{{top: {{type: teledex_render, view: oblique, width: 320, height: 240, fps: {fps}}}}}"
    subprocess.run([str(BIN / "teledex-record"), "--robot.type=teledex", "--robot.id=bench", f"--robot.cameras={camera}",
                    "--teleop.type=teledex_replay", "--teleop.id=bench", "--dataset.repo_id=local/bench",
                    f"--dataset.root={root}", "--dataset.single_task=bench", f"--dataset.fps={fps}",
                    f"--dataset.num_episodes={episodes}", f"--dataset.episode_time_s={seconds}",
                    "--dataset.reset_time_s=0.5", "--dataset.push_to_hub=false"],
                   check=True, env={**os.environ, "HF_HUB_OFFLINE": "1"}, stdin=subprocess.DEVNULL,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--episodes", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=20.0)
    args = parser.parse_args()
    print(f"{'rate':>6} {'frames':>7} {'achieved Hz':>12} {'late %':>7} {'sync ok %':>10} {'mean err ms':>12} "
          f"{'p50 ms':>7} {'p99 ms':>7}")
    with tempfile.TemporaryDirectory() as tmp:
        for fps in (25, 50):
            root = Path(tmp) / f"ds{fps}"
            record(root, fps, args.episodes, args.seconds)
            native_root = Path(f"{root}_native")
            episodes = [load_native_episode(d) for d in native_episode_dirs(native_root)]
            frames = sum(e.metadata["sync"]["frames"] for e in episodes)
            late = sum(e.metadata["sync"]["late_frames"] for e in episodes)
            achieved = np.mean([1e9 / np.median(np.diff(e.telemetry["frame_timestamps_ns"])) for e in episodes])
            overall = report(sync_from_native(native_root))["overall"]
            print(f"{fps:>4}Hz {frames:>7} {achieved:>12.2f} {100 * late / frames:>7.2f} "
                  f"{100 * overall['sync_success_rate']:>10.2f} {overall['mean_sync_error_ms']:>12.2f} "
                  f"{overall['max_diff_p50_ms']:>7.2f} {overall['max_diff_p99_ms']:>7.2f}")


if __name__ == "__main__":
    main()
