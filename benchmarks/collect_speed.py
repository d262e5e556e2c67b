"""How fast teledex-record collects scripted demonstrations in the lockstep world, without a camera and with one
320x240 camera (rendered with EGL on the CPU and encoded by LeRobot's AV1 encoder), against the same in real time.

    .venv/bin/python benchmarks/collect_speed.py [--episodes 20] [--task cube_assembly] [--out outputs/collect_speed]

Each row is one teledex-record run as a user types it; the clock starts at its first "Recording episode" line (after
start-up: imports, world build, connection) and stops at its last "Saved episode" line. A table of episodes per
minute, frames per second and the share of frames the recorder stored of those the episodes lasted.
"""

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from teledex_lerobot.world.tasks import ONE_RIG_TASKS, TASKS

ENVIRONMENT = {"HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
CONFIGS = {  # name -> (world clock, camera flags)
    "lockstep, no camera": ("lockstep", ["--robot.preset_cameras=false"]),
    "lockstep, 1 camera 320x240": ("lockstep", []),
    "real time, no camera": ("real_time", ["--robot.preset_cameras=false"]),
}


def record(task: str, episodes: int, clock: str, camera_flags: list[str], root: Path) -> tuple[float, int, int]:
    """(seconds from the first episode's start to the last save, frames stored, frames the episodes lasted)."""
    for path in (root, Path(f"{root}_native")):
        shutil.rmtree(path, ignore_errors=True)
    args = [str(Path(sys.executable).parent / "teledex-record"), "--robot.type=teledex", "--robot.backend=mujoco",
            f"--robot.world.task={task}", f"--robot.world.clock={clock}", *camera_flags,
            "--teleop.type=teledex_world_expert", "--dataset.repo_id=local/speed", f"--dataset.root={root}",
            "--dataset.single_task=speed", "--dataset.fps=25", f"--dataset.num_episodes={episodes}",
            f"--dataset.episode_time_s={TASKS[task].episode_s}", "--dataset.reset_time_s=0",
            "--dataset.push_to_hub=false"]
    print("$ " + " ".join(args), flush=True)
    process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               env={**os.environ, **ENVIRONMENT})
    started = finished = None
    stored = expected = 0
    for line in process.stdout:
        if line.startswith("Recording episode") and started is None:
            started = time.perf_counter()
        if line.startswith("Saved episode"):
            finished = time.perf_counter()
            counts = line.split(": ", 1)[1].split(" frames", 1)[0]  # "252/252"
            stored += int(counts.split("/")[0])
            expected += int(counts.split("/")[1])
    if process.wait() != 0 or started is None or finished is None:
        raise SystemExit(f"teledex-record failed ({process.returncode})")
    return finished - started, stored, expected


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--episodes", type=int, default=20)
    parser.add_argument("--task", default="cube_assembly", choices=ONE_RIG_TASKS)
    parser.add_argument("--out", type=Path, default=Path("outputs/collect_speed"))
    args = parser.parse_args()
    rows = []
    for name, (clock, camera_flags) in CONFIGS.items():
        seconds, stored, expected = record(args.task, args.episodes, clock, camera_flags,
                                           args.out / clock / str(len(camera_flags)))
        rows.append((name, seconds, stored, expected))
    load = os.getloadavg()[0]
    print(f"\n{args.task}, {args.episodes} scripted episodes per row, load average {load:.1f} at the end\n")
    print(f"{'configuration':28s} {'wall s':>7s} {'episodes/min':>12s} {'frames/s':>9s} {'stored':>13s}")
    for name, seconds, stored, expected in rows:
        print(f"{name:28s} {seconds:7.1f} {60 * args.episodes / seconds:12.1f} {stored / seconds:9.1f} "
              f"{stored:6d}/{expected:<6d}")


if __name__ == "__main__":
    main()
