"""A person's station, quiet and loaded: the recorder's control loop rate and the camera stream the WebXR page
receives (frames per second, latency), without and with a load generator keeping every core busy (as a station PC
recording several cameras, or a build beside it, would). Whatever else runs on the machine runs too: each row prints
the load average.

    .venv/bin/python benchmarks/headset_load.py [--seconds 20] [--fps 25] [--sizes 640x480] [--pages 2d immersive]
                                                [--loads quiet loaded] [--runs 1]

Each row is one fresh teledex-record: the MuJoCo world in real time (nobody moving it), --teleop.source=webxr and
one world camera at the loop's rate; headless Chromium opens the page the moment the URL's port listens (as a
browser does when the operator is quick), on the 2D page or in an immersive session (IWER's emulated Quest 3,
drawing with software GL on the same cores: tests/browser.py). The load generator is one Python process spinning per
core at normal priority (tests/load.py), started before teledex-record, so its start-up is loaded too.

Figures, over a window of --seconds after the page has received its first frames:
- loop Hz, dropped ticks, sync ok: the recorder's progress lines (frames stored, ticks dropped and the share of
  sync-valid frames so far, by the report's own timing and sync metrics) at the window's start and end; a tick the
  loop missed is a dropped tick, a frame whose sources were not one instant is not sync ok (the 2D page sends no
  tracking: its frames are never sync ok). The recorder is then stopped with SIGTERM, its episode not needed.
- page fps, latency p50 / p95: the page's `window.teledexView.view.stats` (arrival on the page's clock, and arrival
  minus the frame's published_ms: the observation that carried it, on the wall clock both share); latency = JPEG
  encoding + the WSS link + the page's decode.
A start that fails prints its last line instead (it should not: issue 30, item 5).
"""

import argparse
import json
import multiprocessing
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent.parent / "tests"))
from browser import Chromium, require_browser  # noqa: E402 (test-only helpers: Chromium with IWER, the load)
from load import busy_cores  # noqa: E402

ENVIRONMENT = {"HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", "MUJOCO_GL": "egl"}
PAGES = {"2d": "2D page", "immersive": "immersive-vr (IWER)"}
# teledex-record's progress line (recording/loop.py): elapsed s, frames stored, ticks dropped, sync ok % so far
PROGRESS = re.compile(r"episode \d+\s+([\d.]+) s\s+stored (\d+)/\d+ frames \((\d+) dropped ticks\)"
                      r"\s+sync ok\s+([\d.]+)%")


def progress(log: Path) -> tuple[float, int, int, float]:
    """The last progress line: (elapsed s, frames stored, ticks dropped, sync-valid frames)."""
    elapsed, stored, dropped, sync_ok = PROGRESS.findall(log.read_text())[-1]
    return float(elapsed), int(stored), int(dropped), int(stored) * float(sync_ok) / 100


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_listening(port: int, recorder: subprocess.Popen, timeout_s: float = 300) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and recorder.poll() is None:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.02)
    raise RuntimeError("teledex-record never listened")


def wait_for(page, expression: str, recorder: subprocess.Popen, timeout_s: float) -> None:
    """The page's expression turns true, or the recorder ended (its log then says why)."""
    deadline = time.monotonic() + timeout_s
    while recorder.poll() is None:
        try:
            page.wait_for(expression, 1.0)
            return
        except TimeoutError:
            if time.monotonic() > deadline:
                raise
    raise RuntimeError("teledex-record ended")


def measure(size: tuple[int, int], fps: int, immersive: bool, seconds: float) -> dict:
    workdir = Path(tempfile.mkdtemp(prefix="teledex-headset-load-"))
    port = free_port()
    camera = json.dumps({"top": {"type": "teledex_world", "view": "oblique", "width": size[0], "height": size[1],
                                 "fps": fps}})
    args = [str(Path(sys.executable).parent / "teledex-record"), "--robot.type=teledex", "--robot.backend=mujoco",
            "--robot.world.task=cube_assembly", f"--robot.cameras={camera}", "--teleop.type=teledex_xr",
            "--teleop.source=webxr", f"--teleop.port={port}", f"--teleop.certificate_dir={workdir}",
            f"--teleop.view_hz={fps}", "--dataset.repo_id=local/load", f"--dataset.root={workdir / 'ds'}",
            "--dataset.single_task=watch", f"--dataset.fps={fps}", "--dataset.num_episodes=1",
            f"--dataset.episode_time_s={seconds + 120}", "--dataset.reset_time_s=0", "--dataset.push_to_hub=false"]
    log = workdir / "record.log"
    recorder = subprocess.Popen(args, stdout=log.open("w"), stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env={**os.environ, **ENVIRONMENT})
    chromium, iwer = require_browser()
    browser = Chromium(chromium)
    try:
        wait_listening(port, recorder)
        page = browser.open(f"https://127.0.0.1:{port}/", iwer)
        wait_for(page, "document.getElementById('status').textContent.includes('Connected to TeleDex')", recorder,
                 180)
        if immersive:
            wait_for(page, "!document.getElementById('enter-vr').disabled", recorder, 60)
            page.click("#enter-vr")
        wait_for(page, "window.teledexView.view.stats.length > 10", recorder, 120)
        time.sleep(2)  # past the start
        page_start = page.evaluate("performance.timeOrigin + performance.now()")
        first = progress(log)
        time.sleep(seconds)
        last = progress(log)
        load_average = os.getloadavg()[0]
        stats = np.array(page.evaluate(f"window.teledexView.view.stats.filter((s) => s[0] >= {page_start})"))
    except Exception as error:  # a start that failed, or a page that got nothing: the recorder's last line says why
        ended = recorder.poll()
        lines = log.read_text().strip().splitlines()
        why = f"teledex-record ended, rc {ended}: {lines[-1][:150]}" if ended is not None and lines else \
            f"{type(error).__name__}: {str(error)[:100]}"
        print(log.read_text()[-3000:], file=sys.stderr)
        return {"failed": why}
    finally:
        browser.close()
        recorder.terminate()
        recorder.wait(timeout=300)
        shutil.rmtree(workdir, ignore_errors=True)
    stored, valid = last[1] - first[1], last[3] - first[3]
    arrivals, latency = stats[:, 0], stats[:, 1]
    return {"load": load_average, "loop_hz": stored / (last[0] - first[0]), "dropped": last[2] - first[2],
            "sync_ok": valid / stored, "page_fps": (len(arrivals) - 1) / ((arrivals[-1] - arrivals[0]) / 1000),
            "p50": np.percentile(latency, 50), "p95": np.percentile(latency, 95)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=20.0, help="the window measured (the page keeps 600 frames)")
    parser.add_argument("--fps", type=int, default=25, help="the loop's rate, the camera's and the page's view")
    parser.add_argument("--sizes", nargs="+", default=["640x480"])
    parser.add_argument("--pages", nargs="+", choices=list(PAGES), default=list(PAGES))
    parser.add_argument("--loads", nargs="+", choices=["quiet", "loaded"], default=["quiet", "loaded"])
    parser.add_argument("--runs", type=int, default=1, help="rows per configuration")
    args = parser.parse_args()
    cores = multiprocessing.cpu_count()
    rows = []
    for load in args.loads:
        for size in args.sizes:
            for page in args.pages:
                for _ in range(args.runs):
                    width, height = map(int, size.split("x"))
                    with busy_cores(cores if load == "loaded" else 0):
                        result = measure((width, height), args.fps, page == "immersive", args.seconds)
                    rows.append((load, size, PAGES[page], result))
                    print(rows[-1], flush=True)
    print(f"\n{cores} cores; loaded = {cores} busy Python processes at normal priority; loop, camera and page view "
          f"at {args.fps} Hz; {args.seconds:g} s windows")
    print("| load | camera | page | load average | loop Hz | dropped ticks | sync ok % | page fps | latency p50 ms | "
          "p95 ms |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for load, size, page, r in rows:
        if "failed" in r:
            print(f"| {load} | {size} | {page} | start failed: {r['failed']} | | | | | | |")
            continue
        print(f"| {load} | {size} | {page} | {r['load']:.1f} | {r['loop_hz']:.1f} | {r['dropped']} | "
              f"{100 * r['sync_ok']:.0f} | {r['page_fps']:.1f} | {r['p50']:.0f} | {r['p95']:.0f} |")


if __name__ == "__main__":
    main()
