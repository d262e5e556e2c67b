"""The two-rig world's tasks, measured: the scripted expert on N layouts (as planned, and with the recording's
recovery perturbations on every episode), for the handover where the bottom half lies for the left arm, and a
lockstep collection with teledex-record and the preset's three cameras (the top view and each hand's wrist camera)
with its sync figures.

    .venv/bin/python benchmarks/bimanual.py [--task handover|bimanual_lift] [--layouts 50] [--record 5]
        [--out outputs/bimanual]

Expert rows: success out of N layouts, the furthest stage of the failures, seconds to success (median). Reach row
(handover): layouts whose bottom half the left arm's pinch reaches (the task wants none). Collection row: episodes per
minute of wall time and frames per second from the first episode's start to the last save, then teledex-sync-report's
frames valid, mean sync error and dropped ticks.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np
from sim_loop import TASK_PERTURBATION

from teledex_lerobot.presets import load_preset
from teledex_lerobot.rig import Rig
from teledex_lerobot.world.bimanual_expert import HandoverExpert, LiftExpert, TwoRigExpert
from teledex_lerobot.world.episode import EpisodeOutcome, control_tick
from teledex_lerobot.world.expert import UnreachableGrasp
from teledex_lerobot.world.perturbation import PerturbationConfig, TargetPerturbation
from teledex_lerobot.world.world import World, WorldConfig, placed_rigs

PRESET = "bimanual_piper_linkerhand_l10"
FPS = 25
# The recording's recovery perturbations (every episode here); the L10's pinch drops the half under the one-rig
# loop's 0.03 rad of finger noise (5/20 layouts), so the hands get 0.01.
PERTURBATION = PerturbationConfig(arm_std_rad=0.01, hand_std_rad=0.01, correlation_time_s=0.4, episode_share=1.0)
ENVIRONMENT = {"HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def run_layouts(world: World, expert: TwoRigExpert, layouts: int, perturbation: TargetPerturbation | None) -> dict:
    lower = {key: part.lower for key, part in world.parts.items()}
    upper = {key: part.upper for key, part in world.parts.items()}
    successes, failures, seconds = 0, Counter(), []
    for seed in range(layouts):
        world.reset(seed)
        if perturbation is not None:
            perturbation.reset(seed)
        expert.reset(world, handover=None if perturbation is None else perturbation.handover)
        outcome = EpisodeOutcome(world)
        for _ in range(int(world.task.episode_s * FPS)):
            targets = expert.act(world)
            if perturbation is not None:
                targets = perturbation.apply(targets, 1 / FPS, expert.precise_parts, lower, upper)
            control_tick(world, targets, FPS)
            if outcome.update():
                break
        successes += outcome.succeeded
        if outcome.succeeded:
            seconds.append(outcome.success_tick / FPS)
        else:
            failures[outcome.stage] += 1
        print(f"  layout {seed}: {outcome.stage}", flush=True)
    return {"successes": successes, "failures": dict(failures), "median_s": float(np.median(seconds or [np.nan]))}


def left_reaches_bottom(world: World, expert: HandoverExpert, layouts: int) -> int:
    left = expert.experts["left"]
    reached = 0
    for seed in range(layouts):
        world.reset(seed)
        left.begin(world)
        bottom = world.object_pose("cube_bottom")
        try:
            left._grasp_frame(bottom.position_m, bottom.yaw_rad)
            reached += 1
        except UnreachableGrasp:
            pass
    return reached


def collect(task: str, episodes: int, out: Path) -> dict:
    """A teledex-record run as a user types it, with the preset's cameras."""
    root = out / "data"
    for path in (root, Path(f"{root}_native")):
        shutil.rmtree(path, ignore_errors=True)
    bin_dir = Path(sys.executable).parent
    args = [str(bin_dir / "teledex-record"), "--robot.type=teledex_followers", f"--robot.preset={PRESET}",
            "--robot.backend=mujoco", f"--robot.world.task={task}", "--teleop.type=teledex_world_expert",
            f"--teleop.perturbation.arm_std_rad={PERTURBATION.arm_std_rad}",
            f"--teleop.perturbation.hand_std_rad={PERTURBATION.hand_std_rad}",
            "--teleop.perturbation.episode_share=0.25",
            f"--dataset.repo_id=local/{task}", f"--dataset.root={root}", f"--dataset.single_task={task}",
            f"--dataset.fps={FPS}", f"--dataset.num_episodes={episodes}", "--dataset.episode_time_s=30",
            "--dataset.reset_time_s=0", "--dataset.push_to_hub=false"]
    print("$ " + " ".join(args), flush=True)
    process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               env={**os.environ, **ENVIRONMENT})
    started = finished = None
    frames = 0
    assert process.stdout is not None
    for line in process.stdout:
        if line.startswith("Recording episode") and started is None:
            started = time.perf_counter()
        if line.startswith("Saved episode"):
            print("  " + line.strip(), flush=True)
            finished = time.perf_counter()
            frames += int(line.split(": ", 1)[1].split("/", 1)[0])
    if process.wait() != 0 or started is None or finished is None:
        raise SystemExit(f"teledex-record failed ({process.returncode})")
    report = out / "sync_report.json"
    subprocess.run([str(bin_dir / "teledex-sync-report"), str(root), "--json", str(report)], check=True,
                   stdout=subprocess.DEVNULL)
    overall = json.loads(report.read_text())["overall"]
    wall_s = finished - started
    return {"episodes_per_min": episodes / wall_s * 60, "fps": frames / wall_s, "frames": overall["frames"],
            "valid": overall["sync_success_rate"], "error_ms": overall["mean_sync_error_ms"],
            "dropped": overall["timing"]["dropped_ticks"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", choices=["handover", "bimanual_lift"], default="handover")
    parser.add_argument("--layouts", type=int, default=50)
    parser.add_argument("--record", type=int, default=5, help="episodes collected with teledex-record (0: none)")
    parser.add_argument("--out", type=Path, default=Path("outputs/bimanual"))
    args = parser.parse_args()
    preset = load_preset(PRESET)
    rigs = {name: Rig.from_preset(load_preset(follower)) for name, follower in preset.followers.items()}
    world = World(placed_rigs(rigs, preset.placements), WorldConfig(task=args.task))
    expert = HandoverExpert(rigs) if args.task == "handover" else LiftExpert(rigs)
    print("== the expert as planned", flush=True)
    planned = run_layouts(world, expert, args.layouts, None)
    print("== the expert under perturbation", flush=True)
    perturbed = run_layouts(world, expert, args.layouts, TargetPerturbation(PERTURBATION))
    rows = [("expert, as planned", planned), ("expert, perturbed (arm 0.01, hand 0.01 rad)", perturbed)]
    spreads = {key: value for key, value in TASK_PERTURBATION.get(args.task, {}).items() if "spread" in key}
    if spreads:
        print(f"== the expert perturbed and spread as sim_loop.py records: {spreads}", flush=True)
        rows.append((f"expert, perturbed and spread ({', '.join(f'{k} {v:g}' for k, v in spreads.items())})",
                     run_layouts(world, expert, args.layouts, TargetPerturbation(replace(PERTURBATION, **spreads)))))
    print(f"\n| {args.task} on {args.layouts} layouts | success | failures (furthest stage) | median s to success |")
    print("|---|---|---|---|")
    for name, row in rows:
        print(f"| {name} | {row['successes']}/{args.layouts} | {row['failures'] or '-'} | {row['median_s']:.1f} |")
    if isinstance(expert, HandoverExpert):
        reach = left_reaches_bottom(world, expert, args.layouts)
        print(f"\nthe left arm's pinch reaches the bottom half in {reach}/{args.layouts} layouts")
    if args.record:
        out = args.out / args.task
        out.mkdir(parents=True, exist_ok=True)
        figures = collect(args.task, args.record, out)
        print("\n| lockstep collection, 3 cameras | episodes/min | frames/s | frames | sync valid | mean error ms "
              "| dropped ticks |\n|---|---|---|---|---|---|---|")
        print(f"| {args.record} episodes | {figures['episodes_per_min']:.2f} | {figures['fps']:.1f} | "
              f"{figures['frames']} | {100 * figures['valid']:.2f} % | {figures['error_ms']:.1f} | "
              f"{figures['dropped']} |")


if __name__ == "__main__":
    main()
