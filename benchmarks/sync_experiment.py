"""What synchronised frames are worth to a policy, measured: one task, the same scripted demonstrations and the same
training, three ways, each scored by lerobot-eval on the same layouts no demonstration saw.

    .venv/bin/python benchmarks/sync_experiment.py [--task cube_assembly] [--demos 200] [--train-steps 7000]
        [--train-budget-min 22] [--eval-episodes 50] [--out outputs/sync_experiment] [--plot docs/sync_experiment.png]

  synchronised  the world's own timing: lockstep, every frame synchronised by construction (sim_loop.py's recording)
  station       a station's timing (--robot.world.timing.*, STATION below): joint measurements read 20 +- 8 ms
                after their capture, the operator's input stalling 6 times a minute for 400 ms (the robot holds
                the last action, its sample ever older); every frame trained on, as lerobot-train does
  validated     the station's recording with every sync-invalid frame dropped (teledex-convert only-synced
                --split-at-invalid, runs shorter than the policy's action chunk dropped): the sync marks used

Recording, training and evaluation are sim_loop.py's (state-based ACT, one torch thread); the evaluation world has
no station timing, the same for all three. The sync figures are teledex-sync-report's (frames, valid %, mean sync
error over valid frames). Prints a table; --plot draws success and valid share per arm.
"""

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import sim_loop  # noqa: E402  (the loop's own stages)

STATION = {"joint_latency_ms": 20, "joint_jitter_ms": 8, "input_stalls_per_min": 6, "input_stall_ms": 400, "seed": 0}
# Frames: ACT's action chunk; a shorter run of valid frames has no training sample that spans no gap.
MIN_RUN = sim_loop.ACT["chunk_size"]
ARMS = ("synchronised", "station", "validated")


def sync_figures(root: Path, out: Path) -> dict:
    """teledex-sync-report's overall figures of a dataset."""
    report = out / "sync_report.json"
    subprocess.run([sim_loop.command("teledex-sync-report"), str(root), "--json", str(report),
                    "--plot", str(out / "sync_report.png")], check=True, stdout=subprocess.DEVNULL)
    overall = json.loads(report.read_text())["overall"]
    return {"frames": overall["frames"], "valid": overall["sync_success_rate"],
            "error_ms": overall["mean_sync_error_ms"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", default="cube_assembly", choices=sim_loop.ONE_RIG_TASKS)
    parser.add_argument("--preset", default="piper_linkerhand_o6_single")
    parser.add_argument("--demos", type=int, default=200)
    parser.add_argument("--perturbed-share", type=float, default=0.25)
    parser.add_argument("--train-steps", type=int, default=7000)
    parser.add_argument("--train-budget-min", type=float, default=22.0)
    parser.add_argument("--eval-episodes", type=int, default=50)
    parser.add_argument("--eval-chunk", type=int, default=10)
    parser.add_argument("--arms", nargs="+", default=list(ARMS), choices=ARMS)
    parser.add_argument("--out", type=Path, default=Path("outputs/sync_experiment"))
    parser.add_argument("--plot", type=Path, help="a bar chart of success and valid share per arm")
    args = parser.parse_args()
    timing = [f"--robot.world.timing.{key}={value}" for key, value in STATION.items()]
    rows = {}
    for arm in args.arms:
        out = args.out / args.task / arm
        out.mkdir(parents=True, exist_ok=True)
        print(f"\n== {arm}", flush=True)
        if arm == "validated":
            station = args.out / args.task / "station" / "data"
            if not station.exists():
                raise SystemExit(f"The validated arm filters the station arm's recording ({station}): run --arms "
                                 "station validated")
            shutil.rmtree(out / "data", ignore_errors=True)  # a run before this one's
            sim_loop.run([sim_loop.command("teledex-convert"), "only-synced", str(station), str(out / "data"),
                          f"--repo-id=local/sim_{args.task}_validated", "--split-at-invalid",
                          f"--min-run={MIN_RUN}"], out / "convert.log")
            collect_s = 0.0
        else:
            collect_s, _ = sim_loop.collect(args.task, args.preset, args.demos, args.perturbed_share, out,
                                            timing if arm == "station" else [])
        figures = sync_figures(out / "data", out)
        train_s, step = sim_loop.train(args.task, args.train_steps, 60 * args.train_budget_min, out)
        stages, eval_s = sim_loop.evaluate(args.task, args.preset, args.eval_episodes, args.eval_chunk, out, step)
        rows[arm] = {**figures, "success": stages["success"], "evaluated": sum(stages.values()), "steps": step,
                     "collect_min": collect_s / 60, "train_min": train_s / 60}
        (out / "result.json").write_text(json.dumps(rows[arm], indent=2))
    print(f"\n{args.task}, preset {args.preset}, {args.demos} demonstrations; station timing: {STATION}\n")
    print(f"{'arm':14s} {'frames':>7s} {'valid %':>8s} {'mean err ms':>11s} {'steps':>6s} {'success':>8s} "
          f"{'collect min':>11s} {'train min':>9s}")
    for arm, row in rows.items():
        print(f"{arm:14s} {row['frames']:7d} {100 * row['valid']:8.1f} {row['error_ms']:11.1f} {row['steps']:6d} "
              f"{row['success']:3d}/{row['evaluated']:<4d} {row['collect_min']:11.1f} {row['train_min']:9.1f}")
    if args.plot:
        plot(rows, args.task, args.plot)


def plot(rows: dict, task: str, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    arms = list(rows)
    figure, axis = plt.subplots(figsize=(6, 3.4))
    success = [100 * rows[a]["success"] / rows[a]["evaluated"] for a in arms]
    valid = [100 * rows[a]["valid"] for a in arms]
    x = range(len(arms))
    axis.bar([i - 0.2 for i in x], success, 0.4, label="success on unseen layouts %", color="#3a7")
    axis.bar([i + 0.2 for i in x], valid, 0.4, label="frames sync-valid %", color="#89b")
    for i, (s, v) in enumerate(zip(success, valid, strict=True)):
        axis.text(i - 0.2, s + 1, f"{s:.0f}", ha="center", fontsize=8)
        axis.text(i + 0.2, v + 1, f"{v:.1f}", ha="center", fontsize=8)
    axis.set_xticks(list(x), arms)
    axis.set_ylim(0, 110)
    axis.set_title(f"{task}: the same demonstrations, three ways")
    axis.legend(loc="lower right", fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    print(f"plot: {path}")


if __name__ == "__main__":
    main()
