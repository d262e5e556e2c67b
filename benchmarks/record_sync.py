"""teledex-record on the simulated rig (Piper + LinkerHand O6 + one 320x240 simulated camera): frames stored against
frames expected, dropped ticks and the sync figures, at 25 Hz and 50 Hz; optionally under CPU load (busy processes
on every core). Every figure comes from sync.metrics, the definition the recorder and teledex-sync-report use; the
recorder's own "Saved episode" lines are read back and must agree. "min Hz": the slowest episode's achieved rate
(frames stored per second of its span).

Run: .venv/bin/python benchmarks/record_sync.py [--episodes 2 --seconds 20 --load 2]
"""

import argparse
import multiprocessing
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from teledex_lerobot.storage.sync_readers import sync_from_lerobot, sync_from_native
from teledex_lerobot.sync.report import report

BIN = Path(sys.executable).parent
SAVED = re.compile(r"Saved episode (\d+) \([0-9a-f-]+\): (\d+)/(\d+) frames at ([\d.]+|None) Hz "
                   r"\((\d+) dropped ticks\)")


def record(root: Path, fps: int, episodes: int, seconds: float) -> str:
    camera = f"{{top: {{type: teledex_render, view: oblique, width: 320, height: 240, fps: {fps}}}}}"
    done = subprocess.run(
        [str(BIN / "teledex-record"), "--robot.type=teledex", "--robot.id=bench", f"--robot.cameras={camera}",
         "--teleop.type=teledex_replay", "--teleop.id=bench", "--dataset.repo_id=local/bench",
         f"--dataset.root={root}", "--dataset.single_task=bench", f"--dataset.fps={fps}",
         f"--dataset.num_episodes={episodes}", f"--dataset.episode_time_s={seconds}", "--dataset.reset_time_s=0.5",
         "--dataset.push_to_hub=false"],
        check=True, env={**os.environ, "HF_HUB_OFFLINE": "1"}, stdin=subprocess.DEVNULL, capture_output=True,
        text=True)
    return done.stdout


def _busy(stop) -> None:
    while not stop.is_set():
        sum(i * i for i in range(10_000))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--episodes", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--rates", default="25,50")
    parser.add_argument("--load", type=int, default=0, help="busy processes running during the recording")
    args = parser.parse_args()
    stop = multiprocessing.Event()
    load = [multiprocessing.Process(target=_busy, args=(stop,), daemon=True) for _ in range(args.load)]
    for process in load:
        process.start()
    print(f"{'rate':>6} {'stored':>7} {'expected':>9} {'stored %':>9} {'dropped':>8} {'gaps':>5} {'min Hz':>7} "
          f"{'sync ok %':>10} {'mean err ms':>12} {'p50 ms':>7} {'p99 ms':>7}   (busy processes: {args.load})")
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for fps in (int(r) for r in args.rates.split(",")):
                root = Path(tmp) / f"ds{fps}"
                output = record(root, fps, args.episodes, args.seconds)
                native = report(sync_from_native(Path(f"{root}_native")))
                lerobot = report(sync_from_lerobot(root))
                for key in ("timing", "valid_frames", "frames"):  # max_diff is float32 in LeRobot, ns in native
                    assert native["overall"][key] == lerobot["overall"][key], f"the formats disagree on {key}"
                printed = {int(m[1]): (int(m[2]), int(m[3]), m[4], int(m[5])) for m in SAVED.finditer(output)}
                assert len(printed) == len(native["episodes"]), f"{len(printed)} 'Saved episode' lines:\n{output}"
                for index, episode in native["episodes"].items():
                    t = episode["timing"]
                    data = (t["frames_stored"], t["frames_expected"], str(t["achieved_hz"]), t["dropped_ticks"])
                    assert printed[int(index)] == data, \
                        f"the recorder printed {printed[int(index)]} for episode {index}, the data says {t}"
                o, t = native["overall"], native["overall"]["timing"]
                slowest_hz = min(e["timing"]["achieved_hz"] for e in native["episodes"].values())
                print(f"{fps:>4}Hz {t['frames_stored']:>7} {t['frames_expected']:>9} "
                      f"{100 * t['frames_stored'] / t['frames_expected']:>9.2f} {t['dropped_ticks']:>8} {t['gaps']:>5} "
                      f"{slowest_hz:>7.2f} {100 * o['sync_success_rate']:>10.2f} {o['mean_sync_error_ms']:>12.2f} "
                      f"{o['max_diff_p50_ms']:>7.2f} {o['max_diff_p99_ms']:>7.2f}")
    finally:
        stop.set()
        for process in load:
            process.join()
    print("stored/expected, dropped ticks and gaps agree between the recorder's lines, the LeRobot columns and the "
          "native telemetry (asserted)")


if __name__ == "__main__":
    main()
