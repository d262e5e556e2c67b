"""The whole loop with no hardware: collect scripted demonstrations with teledex-record, train a state-based ACT on
the CPU with lerobot-train, score it in the same world with lerobot-eval. Prints success rates and wall times.

    .venv/bin/python benchmarks/sim_loop.py [--tasks cube_assembly bottle_peg_in_hole] [--demos 100]
        [--train-steps 4000] [--train-budget-min 30] [--eval-episodes 50] [--out outputs/sim_loop]

Each stage is the project's or LeRobot's own command, run as a subprocess exactly as a user would type it (the
commands are printed):
1. teledex-record --robot.backend=mujoco --teleop.type=teledex_world_expert: one scripted episode per recorded
   episode (the recorder calls the robot's reset_episode(index) before each: layout seed = episode index), joints in
   observation.state and the objects' poses in observation.environment_state, no camera (state-based training);
2. lerobot-train --policy.type=act on those two inputs, one torch thread per process (on a shared 2-core machine a
   second thread makes each step several times slower) and one data-loading worker, stopped at --train-budget-min
   if the steps are not done by then (the newest checkpoint, saved every 250 steps, is used);
3. lerobot-eval --env.type=teledex on --eval-episodes layouts the demonstrations never saw (seeds from 1000), in runs
   of --eval-chunk episodes whose running tally is printed (a stopped benchmark keeps the chunks it scored).

The image-based run is a GPU job (18-21 s per ACT step at 320x240 on this CPU): record with the camera (drop
--robot.preset_cameras=false), then
    lerobot-train --dataset.repo_id=local/sim_cube --dataset.root=outputs/sim_loop/cube_assembly/data \\
      --policy.type=act --policy.device=cuda --steps=100000 --batch_size=8 --output_dir=outputs/train/cube_img
    lerobot-eval --env.type=teledex --env.task=cube_assembly --env.obs_type=pixels_agent_pos \\
      --policy.path=outputs/train/cube_img/checkpoints/last/pretrained_model --eval.n_episodes=50
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

# Seconds each recorded episode lasts: the expert's plan (about 11 s of world time for the cube, 12.4 s for the
# bottle), with room for a loaded machine whose physics falls behind the wall clock (the expert then holds still).
EPISODE_S = {"cube_assembly": 16.0, "bottle_peg_in_hole": 17.0}
SAVE_EVERY_STEPS = 250  # a stopped run loses at most this many steps
EVAL_SEED = 1000  # evaluation layouts: seeds from here (recorded episodes use seeds 0, 1, ...)
# The small ACT that trains on this CPU (4.3 M parameters); temporal ensembling re-plans every tick.
ACT_FLAGS = ["--policy.type=act", "--policy.device=cpu", "--policy.push_to_hub=false", "--policy.dim_model=256",
             "--policy.dim_feedforward=1024", "--policy.n_encoder_layers=2", "--policy.n_decoder_layers=1",
             "--policy.n_vae_encoder_layers=2", "--policy.chunk_size=20", "--policy.n_action_steps=1",
             "--policy.temporal_ensemble_coeff=0.01", "--policy.optimizer_lr=1e-4",
             "--policy.pretrained_backbone_weights=null"]


def command(name: str) -> str:
    return str(Path(sys.executable).parent / name)


def run(args: list[str], log: Path, budget_s: float | None = None) -> float:
    """Run a command (its output to `log`), stopping it once the budget is spent; wall seconds."""
    print("$ " + " ".join(args), flush=True)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    started = time.perf_counter()
    with log.open("w") as out:
        process = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, env=env)
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


def collect(task: str, demos: int, out: Path) -> float:
    data = out / "data"
    for path in (data, Path(f"{data}_native")):
        shutil.rmtree(path, ignore_errors=True)
    return run([command("teledex-record"), "--robot.type=teledex", "--robot.backend=mujoco",
                "--robot.preset_cameras=false", f"--robot.world.task={task}", "--teleop.type=teledex_world_expert",
                f"--dataset.repo_id=local/sim_{task}", f"--dataset.root={data}",
                f"--dataset.single_task={task.replace('_', ' ')}", "--dataset.fps=25",
                f"--dataset.num_episodes={demos}", f"--dataset.episode_time_s={EPISODE_S[task]}",
                "--dataset.reset_time_s=0", "--dataset.push_to_hub=false"], out / "record.log")


def train(task: str, steps: int, budget_s: float, out: Path) -> tuple[float, int]:
    train_dir = out / "train"
    shutil.rmtree(train_dir, ignore_errors=True)
    wall_s = run([command("lerobot-train"), f"--dataset.repo_id=local/sim_{task}", f"--dataset.root={out / 'data'}",
                  *ACT_FLAGS, f"--steps={steps}", "--batch_size=32", "--log_freq=100",
                  f"--save_freq={SAVE_EVERY_STEPS}", "--num_workers=1", "--wandb.enable=false",
                  f"--output_dir={train_dir}"], out / "train.log", budget_s)
    checkpoints = sorted((train_dir / "checkpoints").glob("[0-9]*"))
    if not checkpoints:
        raise SystemExit(f"No checkpoint was saved within the budget; see {out / 'train.log'}")
    return wall_s, int(checkpoints[-1].name)


def evaluate(task: str, episodes: int, chunk: int, out: Path, step: int) -> tuple[float, int, float]:
    """lerobot-eval in chunks of `chunk` episodes (seeds EVAL_SEED + i, none seen in training), each its own run with
    its own eval_info.json, so a stopped benchmark keeps what it scored; (success %, episodes, wall s)."""
    eval_dir = out / "eval"
    shutil.rmtree(eval_dir, ignore_errors=True)
    checkpoint = out / "train" / "checkpoints" / f"{step:06d}" / "pretrained_model"
    successes, done, wall_s = 0.0, 0, 0.0
    for first in range(0, episodes, chunk):
        n = min(chunk, episodes - first)
        chunk_dir = eval_dir / f"seeds_{EVAL_SEED + first}"
        wall_s += run([command("lerobot-eval"), "--env.type=teledex", f"--env.task={task}",
                       f"--policy.path={checkpoint}", "--policy.device=cpu", f"--eval.n_episodes={n}",
                       "--eval.batch_size=1", f"--seed={EVAL_SEED + first}", f"--output_dir={chunk_dir}"],
                      out / f"eval_{EVAL_SEED + first}.log")
        info = json.loads((chunk_dir / "eval_info.json").read_text())
        successes += float(info["overall"]["pc_success"]) * n / 100
        done += n
        print(f"  {task}: {successes:.0f}/{done} episodes succeeded so far ({wall_s / 60:.1f} min)", flush=True)
    return 100 * successes / done, done, wall_s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", nargs="+", default=["cube_assembly", "bottle_peg_in_hole"])
    parser.add_argument("--demos", type=int, default=100)
    parser.add_argument("--train-steps", type=int, default=8000, help="as many as the budget allows")
    parser.add_argument("--train-budget-min", type=float, default=30.0)
    parser.add_argument("--eval-episodes", type=int, default=50)
    parser.add_argument("--eval-chunk", type=int, default=10, help="episodes per lerobot-eval run")
    parser.add_argument("--out", type=Path, default=Path("outputs/sim_loop"))
    parser.add_argument("--skip-collect", action="store_true", help="reuse the recorded demonstrations")
    parser.add_argument("--skip-train", action="store_true", help="reuse the newest checkpoint")
    args = parser.parse_args()
    rows = []
    for task in args.tasks:
        out = args.out / task
        out.mkdir(parents=True, exist_ok=True)
        collect_s = 0.0 if args.skip_collect else collect(task, args.demos, out)
        if args.skip_train:
            train_s, step = 0.0, int(sorted((out / "train" / "checkpoints").glob("[0-9]*"))[-1].name)
        else:
            train_s, step = train(task, args.train_steps, 60 * args.train_budget_min, out)
        success, evaluated, eval_s = evaluate(task, args.eval_episodes, args.eval_chunk, out, step)
        rows.append((task, success, step, collect_s, train_s, eval_s, evaluated))
        print(f"{task}: {success:.0f}% success after {step} steps", flush=True)
    print(f"\n{'task':20s} {'demos':>6s} {'ACT steps':>9s} {'success':>8s} {'collect min':>11s} {'train min':>9s} "
          f"{'eval min':>8s} {'eval episodes':>13s}")
    for task, success, step, collect_s, train_s, eval_s, evaluated in rows:
        print(f"{task:20s} {args.demos:6d} {step:9d} {success:7.0f}% {collect_s / 60:11.1f} {train_s / 60:9.1f} "
              f"{eval_s / 60:8.1f} {evaluated:13d}")


if __name__ == "__main__":
    main()
