"""Camera frame to headset page: the frame rate the WebXR page receives and the latency from the robot's observation
to the frame decoded in the page, for the world's camera at 640x480 (and 320x240), with the page in the browser
(a laptop or the headset's 2D window) and in an immersive session (IWER's emulated Quest 3, drawing with software GL
in headless Chromium: the browser's render loop then shares these 2 cores with the world, the encoder and the
recorder).

    .venv/bin/python benchmarks/headset_stream.py [--seconds 20] [--fps 30]

teledex-record runs the MuJoCo world (real time, nobody moving it) with --teleop.source=webxr and one world camera;
the page stamps each frame's arrival with performance.timeOrigin + performance.now() and compares it with the
frame's published_ms (the wall clock when the robot's observation carried it, from time.time_ns on the same machine):
frame-to-page latency = JPEG encoding + the WSS link + the page's decode. The recorder's own loop rate (frames
stored per second, from its progress lines) is printed beside: the page can get no more frames than the loop
observes. Needs `make test-deps` (Chromium, IWER).
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent.parent / "tests"))
from browser import Chromium, require_browser  # noqa: E402 (test-only helper: Chromium with IWER)

ENVIRONMENT = {"HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}


def measure(size: tuple[int, int], fps: int, immersive: bool, seconds: float, port: int) -> dict:
    workdir = Path(tempfile.mkdtemp(prefix="teledex-headset-stream-"))
    camera = json.dumps({"top": {"type": "teledex_world", "view": "oblique", "width": size[0], "height": size[1],
                                 "fps": fps}})
    args = [str(Path(sys.executable).parent / "teledex-record"), "--robot.type=teledex", "--robot.backend=mujoco",
            "--robot.world.task=cube_assembly", f"--robot.cameras={camera}", "--teleop.type=teledex_xr",
            "--teleop.source=webxr", f"--teleop.port={port}", f"--teleop.certificate_dir={workdir}",
            f"--teleop.view_hz={fps}", "--dataset.repo_id=local/stream", f"--dataset.root={workdir / 'ds'}",
            "--dataset.single_task=watch", f"--dataset.fps={fps}", "--dataset.num_episodes=1",
            f"--dataset.episode_time_s={seconds + 30}", "--dataset.reset_time_s=0", "--dataset.push_to_hub=false"]
    log = workdir / "record.log"
    recorder = subprocess.Popen(args, stdout=log.open("w"), stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env={**os.environ, **ENVIRONMENT})
    chromium, iwer = require_browser()
    browser = Chromium(chromium)
    try:
        page = browser.open(f"https://127.0.0.1:{port}/", iwer)
        page.wait_for("document.getElementById('status').textContent.includes('Connected to TeleDex')", 180)
        if immersive:
            page.wait_for("!document.getElementById('enter-vr').disabled")
            page.click("#enter-vr")
        page.wait_for("window.teledexView.view.stats.length > 10", 60)
        time.sleep(2)  # past the start
        started = page.evaluate("performance.timeOrigin + performance.now()")
        time.sleep(seconds)
        stats = np.array(page.evaluate(f"window.teledexView.view.stats.filter((s) => s[0] >= {started})"))
    finally:
        browser.close()
        recorder.terminate()  # the episode is saved, marked interrupted
        recorder.wait(timeout=120)
        progress = re.findall(r"episode \d+\s+([\d.]+) s\s+stored (\d+)/", log.read_text())
        shutil.rmtree(workdir, ignore_errors=True)
    arrivals, latency = stats[:, 0], stats[:, 1]
    return {"fps": (len(arrivals) - 1) / ((arrivals[-1] - arrivals[0]) / 1000), "p50": np.percentile(latency, 50),
            "p95": np.percentile(latency, 95), "frames": len(arrivals),
            "loop_hz": int(progress[-1][1]) / float(progress[-1][0]) if progress else float("nan")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--fps", type=int, default=30)
    parser.add_argument("--port", type=int, default=8471)
    args = parser.parse_args()
    rows = []
    for size in ((640, 480), (320, 240)):
        for immersive in (False, True):
            result = measure(size, args.fps, immersive, args.seconds, args.port)
            rows.append((f"{size[0]}x{size[1]}", "immersive-vr (IWER)" if immersive else "2D page", result))
            print(rows[-1], flush=True)
    print(f"\ncamera {args.fps} Hz asked, {args.seconds:g} s each, load average {os.getloadavg()[0]:.1f}")
    print("| camera | page | recorder loop Hz | frames/s at the page | latency p50 ms | latency p95 ms |")
    print("|---|---|---|---|---|---|")
    for size, mode, r in rows:
        print(f"| {size} | {mode} | {r['loop_hz']:.1f} | {r['fps']:.1f} | {r['p50']:.0f} | {r['p95']:.0f} |")


if __name__ == "__main__":
    main()
