"""The whole loop with no hardware, judged by its end: collect scripted demonstrations, train a state-based policy on
this CPU with LeRobot's own lerobot-train, score it with lerobot-eval on layouts the demonstrations never saw.
Prints the commands it runs, the running tally, and a table: success, the stage each failed episode reached, wall
times.

    .venv/bin/python benchmarks/sim_loop.py [--tasks cube_assembly bottle_peg_in_hole]
        [--preset piper_linkerhand_o6_single] [--demos 200] [--perturbed-share 0.25] [--train-steps 7000]
        [--train-budget-min 22] [--eval-episodes 50] [--out outputs/sim_loop]

Each stage is a command run as a user would type it:
1. teledex-record with --robot.backend=mujoco and the scripted expert (--teleop.type=teledex_world_expert): the world
   runs in lockstep (one control period per recorded tick, as fast as the CPU allows); each episode ends half a
   second after success and only successes are kept (--keep=successes); a share of the episodes carry seeded
   recovery perturbations of the arm and hand targets with the expert's correction recorded (DART); no camera:
   joints in observation.state, object poses in observation.environment_state. Layout seeds 0, 1, ... (one per
   attempt).
2. lerobot-train, ACT without its VAE (a small transformer, 4 M parameters), the environment state normalised like
   the joints (LeRobot 0.6.1 leaves ENV features raw by default: --policy.normalization_mapping names it), chunks
   of 20 actions of which 10 are executed before re-planning, AdamW with the learning rate decayed over
   --train-steps, one torch thread (on 2 shared cores a second thread makes each step several times slower) and one
   data-loading worker (the other core); stopped at --train-budget-min if the steps are not done (the newest
   checkpoint, saved every 1000 steps, is scored).
3. lerobot-eval --env.type=teledex on --eval-episodes layouts from seed 1000 (never recorded), in runs of
   --eval-chunk episodes whose running tally is printed (a stopped benchmark keeps the chunks it scored). The env's
   reward is the furthest stage reached, so each episode's max_reward says where a failure stopped.

The image-based policy is a GPU job here (a ResNet-18 step at 320x240 takes 18-21 s on this CPU). Record with the
world's camera (drop --robot.preset_cameras=false), then on a machine with a GPU:
    lerobot-train --dataset.repo_id=local/sim_cube --dataset.root=outputs/sim_loop/cube_assembly/data \\
      --policy.type=act --policy.device=cuda --policy.n_action_steps=10 --steps=100000 --batch_size=8 \\
      --output_dir=outputs/train/cube_img
    lerobot-eval --env.type=teledex --env.task=cube_assembly --env.obs_type=pixels_agent_pos \\
      --env.observe_objects=false --policy.path=outputs/train/cube_img/checkpoints/last/pretrained_model \\
      --eval.n_episodes=50
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from teledex_lerobot.world.episode import STAGES, stage_progress
from teledex_lerobot.world.tasks import TASKS

SAVE_EVERY_STEPS = 1000  # a stopped run loses at most this many steps
EVAL_SEED = 1000  # evaluation layouts: seeds from here (recorded attempts use seeds 0, 1, ...)
# Recovery perturbations of the perturbed episodes: a few mm at the hand, so that most still succeed.
PERTURBATION = {"arm_std_rad": 0.01, "hand_std_rad": 0.03, "correlation_time_s": 0.4}
# The policy: LeRobot's ACT without its VAE, small enough to train on one CPU core in minutes.
NORMALIZATION = '{"VISUAL": "MEAN_STD", "STATE": "MEAN_STD", "ENV": "MEAN_STD", "ACTION": "MEAN_STD"}'
ACT_FLAGS = ["--policy.type=act", "--policy.device=cpu", "--policy.push_to_hub=false",
             "--policy.pretrained_backbone_weights=null", f"--policy.normalization_mapping={NORMALIZATION}",
             "--policy.dim_model=256", "--policy.dim_feedforward=1024", "--policy.n_encoder_layers=2",
             "--policy.n_decoder_layers=1", "--policy.use_vae=false", "--policy.chunk_size=20",
             "--policy.n_action_steps=10"]


def schedule_flags(steps: int) -> list[str]:
    """AdamW at 3e-4 decayed to 1e-5 over the run (cosine): the last checkpoint is the settled one. ACT's own preset
    (constant 1e-5) is made for 100k GPU steps; at a constant 3e-4 one checkpoint to the next swung 85 % -> 65 %."""
    return ["--use_policy_training_preset=false", "--optimizer.type=adamw", "--optimizer.lr=3e-4",
            "--optimizer.weight_decay=1e-4", "--optimizer.grad_clip_norm=10",
            "--scheduler.type=cosine_decay_with_warmup", "--scheduler.num_warmup_steps=200",
            f"--scheduler.num_decay_steps={steps}", "--scheduler.peak_lr=3e-4", "--scheduler.decay_lr=1e-5"]
STAGE_BY_REWARD = {round(stage_progress(stage), 3): stage for stage in ("none", *STAGES, "success")}
ENVIRONMENT = {"HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def command(name: str) -> str:
    return str(Path(sys.executable).parent / name)


def run(args: list[str], log: Path, budget_s: float | None = None) -> float:
    """Run a command (its output to `log`), stopping it once the budget is spent; wall seconds."""
    print("$ " + " ".join(args), flush=True)
    started = time.perf_counter()
    with log.open("w") as out:
        process = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, env={**os.environ, **ENVIRONMENT})
        try:
            process.wait(timeout=budget_s)
        except subprocess.TimeoutExpired:
            print(f"  budget of {budget_s / 60:g} min spent: stopping", flush=True)
            process.terminate()  # lerobot-train carries on through SIGINT
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
    wall_s = time.perf_counter() - started
    if process.returncode != 0 and not (budget_s and wall_s >= budget_s):
        raise SystemExit(f"{args[0]} failed ({process.returncode}); see {log}")
    return wall_s


def collect(task: str, preset: str, demos: int, perturbed_share: float, out: Path) -> tuple[float, int]:
    """(wall seconds, attempts made)."""
    data = out / "data"
    for path in (data, Path(f"{data}_native")):
        shutil.rmtree(path, ignore_errors=True)
    perturbation = [f"--teleop.perturbation.{key}={value}" for key, value in PERTURBATION.items()]
    wall_s = run([command("teledex-record"), "--robot.type=teledex", f"--robot.preset={preset}",
                  "--robot.backend=mujoco", "--robot.preset_cameras=false", f"--robot.world.task={task}",
                  "--teleop.type=teledex_world_expert", *perturbation,
                  f"--teleop.perturbation.episode_share={perturbed_share}", "--keep=successes", "--settle_s=0.5",
                  f"--dataset.repo_id=local/sim_{task}", f"--dataset.root={data}",
                  f"--dataset.single_task={TASKS[task].description}", "--dataset.fps=25",
                  f"--dataset.num_episodes={demos}", f"--dataset.episode_time_s={TASKS[task].episode_s}",
                  "--dataset.reset_time_s=0", "--dataset.push_to_hub=false"], out / "record.log")
    return wall_s, attempts_made(out)


def attempts_made(out: Path) -> int:
    """Episodes teledex-record started (failed attempts included), from its log."""
    return sum(1 for line in (out / "record.log").read_text().splitlines() if line.startswith("Recording episode"))


def train(task: str, steps: int, budget_s: float, out: Path) -> tuple[float, int]:
    train_dir = out / "train"
    shutil.rmtree(train_dir, ignore_errors=True)
    wall_s = run([command("lerobot-train"), f"--dataset.repo_id=local/sim_{task}", f"--dataset.root={out / 'data'}",
                  *ACT_FLAGS, *schedule_flags(steps), f"--steps={steps}", "--batch_size=64", "--log_freq=200",
                  f"--save_freq={SAVE_EVERY_STEPS}", "--num_workers=1", "--wandb.enable=false",
                  f"--output_dir={train_dir}"], out / "train.log", budget_s)
    checkpoints = sorted((train_dir / "checkpoints").glob("[0-9]*"))
    if not checkpoints:
        raise SystemExit(f"No checkpoint was saved within the budget; see {out / 'train.log'}")
    return wall_s, int(checkpoints[-1].name)


def evaluate(task: str, preset: str, episodes: int, chunk: int, out: Path, step: int) -> tuple[Counter, float]:
    """lerobot-eval in chunks of `chunk` episodes (seeds EVAL_SEED + i, none seen in training), each its own run with
    its own eval_info.json, so a stopped benchmark keeps what it scored; (episodes per final stage, wall s)."""
    eval_dir = out / "eval"
    shutil.rmtree(eval_dir, ignore_errors=True)
    checkpoint = out / "train" / "checkpoints" / f"{step:06d}" / "pretrained_model"
    stages: Counter = Counter()
    wall_s = 0.0
    for first in range(0, episodes, chunk):
        n = min(chunk, episodes - first)
        chunk_dir = eval_dir / f"seeds_{EVAL_SEED + first}"
        wall_s += run([command("lerobot-eval"), "--env.type=teledex", f"--env.task={task}", f"--env.preset={preset}",
                       f"--policy.path={checkpoint}", "--policy.device=cpu", f"--eval.n_episodes={n}",
                       "--eval.batch_size=1", f"--seed={EVAL_SEED + first}", f"--output_dir={chunk_dir}"],
                      out / f"eval_{EVAL_SEED + first}.log")
        metrics = json.loads((chunk_dir / "eval_info.json").read_text())["per_task"][0]["metrics"]
        stages.update(STAGE_BY_REWARD[round(reward, 3)] for reward in metrics["max_rewards"])
        done = sum(stages.values())
        print(f"  {task}: {stages['success']}/{done} succeeded so far ({wall_s / 60:.1f} min); furthest stages: "
              f"{dict(stages)}", flush=True)
    return stages, wall_s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", nargs="+", default=["cube_assembly", "bottle_peg_in_hole"], choices=sorted(TASKS))
    parser.add_argument("--preset", default="piper_linkerhand_o6_single")
    parser.add_argument("--demos", type=int, default=200, help="successful demonstrations kept")
    parser.add_argument("--perturbed-share", type=float, default=0.25, help="share of episodes with perturbations")
    parser.add_argument("--train-steps", type=int, default=7000, help="the learning rate decays over these")
    parser.add_argument("--train-budget-min", type=float, default=22.0)
    parser.add_argument("--eval-episodes", type=int, default=50)
    parser.add_argument("--eval-chunk", type=int, default=10, help="episodes per lerobot-eval run")
    parser.add_argument("--out", type=Path, default=Path("outputs/sim_loop"))
    parser.add_argument("--skip-collect", action="store_true", help="reuse the recorded demonstrations")
    parser.add_argument("--skip-train", action="store_true", help="reuse the newest checkpoint")
    args = parser.parse_args()
    rows = []
    for task in args.tasks:
        out = args.out / args.preset / task
        out.mkdir(parents=True, exist_ok=True)
        if args.skip_collect:
            collect_s, attempts = 0.0, attempts_made(out)
        else:
            collect_s, attempts = collect(task, args.preset, args.demos, args.perturbed_share, out)
        if args.skip_train:
            train_s, step = 0.0, int(sorted((out / "train" / "checkpoints").glob("[0-9]*"))[-1].name)
        else:
            train_s, step = train(task, args.train_steps, 60 * args.train_budget_min, out)
        stages, eval_s = evaluate(task, args.preset, args.eval_episodes, args.eval_chunk, out, step)
        rows.append((task, attempts, step, stages, collect_s, train_s, eval_s))
    print(f"\npreset {args.preset}, {args.demos} demonstrations per task ({100 * args.perturbed_share:g} % perturbed), "
          "ACT without VAE, one torch thread\n")
    print(f"{'task':20s} {'attempts':>8s} {'steps':>6s} {'success':>8s} {'collect min':>11s} {'train min':>9s} "
          f"{'both min':>8s} {'eval min':>8s}  failed episodes by furthest stage")
    for task, attempts, step, stages, collect_s, train_s, eval_s in rows:
        evaluated = sum(stages.values())
        failed = {stage: n for stage, n in stages.items() if stage != "success"}
        print(f"{task:20s} {attempts:8d} {step:6d} {stages['success']:3d}/{evaluated:<4d} {collect_s / 60:11.1f} "
              f"{train_s / 60:9.1f} {(collect_s + train_s) / 60:8.1f} {eval_s / 60:8.1f}  {failed or '-'}")


if __name__ == "__main__":
    main()
