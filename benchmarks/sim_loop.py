"""The whole loop with no hardware, judged by its end: collect scripted demonstrations, train a state-based policy on
this CPU with LeRobot's own lerobot-train, score it with lerobot-eval on layouts the demonstrations never saw.
Prints the commands it runs, the running tally, and a table: success, the stage each failed episode reached, wall
times.

    .venv/bin/python benchmarks/sim_loop.py [--tasks cube_assembly bottle_peg_in_hole]
        [--preset piper_linkerhand_o6_single] [--demos 200] [--collect-workers 1] [--perturbed-share 0.25]
        [--train-steps 7000] [--train-budget-min 22] [--eval-episodes 50] [--out outputs/sim_loop]
        [--relations] [--hand-pose] [--bf16] [--select-among 4 [--validation-episodes 20]]
        [--pixels [--policy act|diffusion] [--device cuda|cpu] [--image-size 320x240] [--pretrained-backbone]]
    the two-rig handover: --tasks handover --preset bimanual_piper_linkerhand_l10 (state-based; teledex_followers
    records both rigs in one world, lerobot-eval runs the preset's two rigs)

Each stage is a command run as a user would type it:
1. teledex-record with --robot.backend=mujoco and the scripted expert (--teleop.type=teledex_world_expert): the world
   runs in lockstep (one control period per recorded tick, as fast as the CPU allows); each episode ends half a
   second after success and only successes are kept (--keep=successes); a share of the episodes carry seeded
   recovery perturbations of the arm and hand targets with the expert's correction recorded (DART), and the
   handover's take lands a seeded millimetre or two off centre, its carry up to a centimetre off over the goal and
   its pass up to 0.8 s late in every episode (TASK_PERTURBATION); no camera:
   joints in observation.state, object poses in observation.environment_state. Layout seeds 0, 1, ... (one per
   attempt). --collect-workers N runs N recorders at once (up to one per core), recorder k on its share of the
   demonstrations from layout seed k * 1000 / N, into data_part<k> with its native layout beside it;
   lerobot-edit-dataset merges their LeRobot datasets into data (the merge's minutes count in the collection's;
   the merged copy holds LeRobot's files, each part keeps teledex's own sidecars). Two recorders took the bottle's
   first 204 attempts 2.2x as fast as one, the cube's 200 1.8x (and a 1.1-min merge). The default stays one: the
   cube's policy scored 42/50 on a two-recorder recording against 45/50 on one's (docs/world.md).
2. lerobot-train, ACT without its VAE (a small transformer, 4 M parameters), the environment state normalised like
   the joints (LeRobot 0.6.1 leaves ENV features raw by default: --policy.normalization_mapping names it), chunks
   of 20 actions of which 10 are executed before re-planning (the handover: a chunk every tick, the chunks' actions
   for each tick averaged, ACT's temporal ensembling: TASK_POLICY), AdamW with the learning rate decayed over
   --train-steps, one torch thread (on 2 shared cores a second thread makes each step several times slower) and one
   data-loading worker (the other core); stopped at --train-budget-min if the steps are not done (the newest
   checkpoint, saved every 1000 steps, is scored). --bf16 trains in bfloat16 autocast (LeRobot's --policy.use_amp):
   on this CPU (AVX512-BF16) a step takes 0.13 s instead of 0.17 s. lerobot-eval runs in float32 either way
   (LeRobot 0.6.1's evaluation under autocast fails converting the bfloat16 action to numpy: huggingface/lerobot
   issue 2956).
   --hand-pose trains on a copy of the recording acting in each hand's pose (teledex-convert to-hand-pose: each arm's
   hand pose beside its joints, the hands' measured poses in the state, only the columns the policy reads) and
   evaluates with --env.action_space=hand_pose; the copy's writing counts in the collection's time.
   --select-among K scores the newest K checkpoints on --validation-episodes layouts from seed 2000 (neither recorded
   nor scored) with lerobot-eval and keeps the best: one training's checkpoints differ by more than a change of the
   recording does. Its minutes count with collection and training ("all min").
3. lerobot-eval --env.type=teledex on --eval-episodes layouts from seed 1000 (never recorded), in runs of
   --eval-chunk episodes whose running tally is printed (a stopped benchmark keeps the chunks it scored). The env's
   reward is the furthest stage reached, so each episode's max_reward says where a failure stopped.

--pixels: the image-based loop, a GPU job (a ResNet-18 step at 320x240 takes 18-21 s on this CPU), by default in
outputs/sim_loop_pixels with each policy's training and scores in <preset>/<task>/<policy>:
    MUJOCO_GL=egl .venv/bin/python benchmarks/sim_loop.py --pixels --device cuda [--policy diffusion] \\
      --train-steps <steps> --train-budget-min <minutes>
(the defaults, 7000 steps within 22 minutes, are the state-based run's on this CPU).
1. teledex-record records the preset's cameras (their names, views and rate; the wrist camera rides on the hand),
   every one at --image-size (Diffusion takes images of one shape, the env renders its cameras at one size), and no
   object poses (--robot.world.observe_objects=false): the policy sees the joints and the pictures only.
2. lerobot-train --policy.device=<--device>: --policy act is the ACT above, with its ResNet-18 on each image;
   --policy diffusion is LeRobot's DiffusionPolicy with its own optimiser and schedule, a horizon of 32 actions of
   which 10 are executed (ACT's re-planning period), random crops of 90 % of each image in training (the Diffusion
   Policy paper's augmentation, 84 of 96 pixels). Both ResNets start from scratch (Diffusion's with GroupNorm for
   BatchNorm, as the paper's; LeRobot allows that only from scratch) unless --pretrained-backbone takes torchvision's
   ImageNet weights (a download). On cuda no thread limit, and 4 data-loading workers (LeRobot's default: the videos
   are decoded on the CPU).
3. lerobot-eval --env.obs_type=pixels_agent_pos --env.observe_objects=false with the same cameras and size.
--tiny, --batch-size, --episode-s and --keep=all make a smoke run of either loop (tests/e2e/test_sim_loop_pixels.py):
its figures mean nothing.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from teledex_lerobot.presets import load_preset
from teledex_lerobot.world.episode import STAGES, stage_progress
from teledex_lerobot.world.tasks import ONE_RIG_TASKS, TASKS

SAVE_EVERY_STEPS = 1000  # a stopped run loses at most this many steps
FPS = 25
EVAL_SEED = 1000  # evaluation layouts: seeds from here (recorded attempts use seeds 0, 1, ...)
VALIDATION_SEED = 2000  # the layouts that choose a checkpoint (--select-among): neither recorded nor scored
# Recovery perturbations of the perturbed episodes: a few mm at the hand, so that most still succeed.
PERTURBATION = {"arm_std_rad": 0.01, "hand_std_rad": 0.03, "correlation_time_s": 0.4}
# The handover's L10 pinches drop the half under 0.03 rad of finger noise (5 of 20 layouts; 20 of 20 at 0.01). Its
# take spreads +-2.5 mm: a policy's takes land 1-5 mm off where the expert's do, and with every recorded hold the same
# to 0.3 mm it set the half down where the usual hold would have put it (the expert: 20 of 20 layouts at +-2.5 mm;
# with the pick spread too, its takes 3.3 mm or more to one side failed 4 of 4). Spreading the left hand's pick as
# well (+-2 mm) taught the policy a pick that missed: 1 of 20, most never lifting the half. The carry ends up to
# +-10 mm off over the goal and the right hand comes up to 0.8 s late to the pass (the left holds on): a policy's
# carries ended 4-12 mm off and it lowered the half straight down, and its left let go on the clock (the expert 49/50
# with all three spreads and perturbed; the policy 17/50 without these two, 19/50 with both at 8000 steps, 34/50 at
# 6000 steps of the same training: docs/world.md).
TASK_PERTURBATION = {"handover": {"hand_std_rad": 0.01, "take_spread_m": 0.0025, "carry_spread_m": 0.01,
                                  "pass_delay_spread_s": 0.8}}
# The policies' --policy.* settings. ACT: LeRobot's without its VAE, small enough to train on one CPU core in minutes.
NORMALIZATION = '{"VISUAL": "MEAN_STD", "STATE": "MEAN_STD", "ENV": "MEAN_STD", "ACTION": "MEAN_STD"}'
ACT = {"type": "act", "device": "cpu", "push_to_hub": "false", "pretrained_backbone_weights": "null",
       "normalization_mapping": NORMALIZATION, "dim_model": 256, "dim_feedforward": 1024, "n_encoder_layers": 2,
       "n_decoder_layers": 1, "use_vae": "false", "chunk_size": 20, "n_action_steps": 10}
# The handover's ACT acts on every chunk's average (ACT's temporal ensembling, a new chunk every tick): the same
# checkpoint succeeded in 2 of 20 layouts executing 10 of each 20 actions, 6 of 20 executing all 20, 8 of 20
# ensembled (and 2 of 20 with the newest chunks weighted most, coefficient -0.1)
TASK_POLICY = {"handover": {"n_action_steps": 1, "temporal_ensemble_coeff": 0.01}}
# Diffusion (images): LeRobot's, 10 of 32 actions executed; a sample needs horizon - n_action_steps - n_obs_steps + 1
# frames after it (drop_n_last_frames, whose default is for another horizon); crop_shape is set per image size.
DIFFUSION = {"type": "diffusion", "device": "cpu", "push_to_hub": "false", "pretrained_backbone_weights": "null",
             "use_group_norm": "true", "n_obs_steps": 2, "horizon": 32, "n_action_steps": 10, "drop_n_last_frames": 21}
# --tiny: the smallest of each, for a smoke run.
TINY: dict[str, dict[str, object]] = {
    "act": {"dim_model": 64, "dim_feedforward": 128, "n_encoder_layers": 1},
    "diffusion": {"down_dims": "[32,64]", "diffusion_step_embed_dim": 32, "spatial_softmax_num_keypoints": 8,
                  "num_inference_steps": 5}}


def schedule_flags(steps: int) -> list[str]:
    """AdamW at 3e-4 decayed to 1e-5 over the run (cosine): the last checkpoint is the settled one. ACT's own preset
    (constant 1e-5) is made for 100k GPU steps; at a constant 3e-4 one checkpoint to the next swung 85 % -> 65 %."""
    return ["--use_policy_training_preset=false", "--optimizer.type=adamw", "--optimizer.lr=3e-4",
            "--optimizer.weight_decay=1e-4", "--optimizer.grad_clip_norm=10",
            "--scheduler.type=cosine_decay_with_warmup", "--scheduler.num_warmup_steps=200",
            f"--scheduler.num_decay_steps={steps}", "--scheduler.peak_lr=3e-4", "--scheduler.decay_lr=1e-5"]
STAGE_BY_REWARD = {round(stage_progress(stage), 3): stage for stage in ("none", *STAGES, "success")}
OFFLINE = {"HF_HUB_OFFLINE": "1"}
ENVIRONMENT = {**OFFLINE, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}  # on cpu: one torch thread (see 2.)


@dataclass(frozen=True)
class Loop:
    """How the loop records, trains and scores, beyond the task; the default is the state-based loop on this CPU."""

    pixels: bool = False  # the preset's cameras instead of the object poses
    policy: str = "act"  # or "diffusion"
    device: str = "cpu"  # or "cuda"
    image_size: tuple[int, int] = (320, 240)  # every camera's width, height (pixels)
    pretrained_backbone: bool = False  # torchvision's ImageNet ResNet-18 instead of one trained from scratch
    tiny: bool = False  # TINY policies
    batch_size: int = 64
    episode_s: float | None = None  # recorded and evaluated episodes; None: the task's own horizon
    keep: str = "successes"  # or "all" (teledex-record's --keep)
    relations: bool = False  # the task's relations observed beside the object poses (world.observe_relations)
    # The perturbed bottle episodes aim the first insertion this far off the opening (m; 3 mm around the bottle): the
    # bottle meets the rim and the expert backs off, re-centres and inserts again (teleop.perturbation.place_miss_m).
    place_miss_m: float = 0.0
    # Train on a copy acting in each hand's pose (teledex-convert to-hand-pose) and evaluate in that space.
    hand_pose: bool = False
    bf16: bool = False  # bfloat16 autocast in training (LeRobot's use_amp); evaluated in float32

    @property
    def training_data(self) -> str:
        """The dataset lerobot-train reads, under the task's folder."""
        return "data_hand_pose" if self.hand_pose else "data"

    def work(self, out: Path) -> Path:
        """Where the policy's training and scores go: a recording with cameras trains several policies."""
        return out / self.policy if self.pixels else out

    @property
    def environment(self) -> dict[str, str]:
        return ENVIRONMENT if self.device == "cpu" else OFFLINE

    def policy_flags(self, task: str) -> list[str]:
        settings: dict[str, object] = {**(ACT if self.policy == "act" else DIFFUSION), "device": self.device}
        if self.policy == "act":
            settings.update(TASK_POLICY.get(task, {}))
        if self.policy == "diffusion":
            width, height = self.image_size
            settings["crop_shape"] = f"[{height * 9 // 10},{width * 9 // 10}]"
        if self.pretrained_backbone:  # LeRobot's own defaults: ImageNet weights, BatchNorm kept
            for key in ("pretrained_backbone_weights", "use_group_norm"):
                settings.pop(key, None)
        if self.tiny:
            settings.update(TINY[self.policy])
        if self.bf16:
            settings["use_amp"] = "true"
        return [f"--policy.{key}={value}" for key, value in settings.items()]

    def record_flags(self, preset: str) -> list[str]:
        """The robot (teledex, or teledex_followers for a preset of several rigs) and its cameras: the preset's (name,
        view, rate) at image_size, and no object poses; none without pixels (the object poses, and the relations when
        asked)."""
        several = bool(load_preset(preset).followers)
        robot = [f"--robot.type={'teledex_followers' if several else 'teledex'}", f"--robot.preset={preset}"]
        if not self.pixels:
            relations = ["--robot.world.observe_relations=true"] if self.relations else []
            cameras = "--robot.with_cameras=false" if several else "--robot.preset_cameras=false"
            return [*robot, cameras, *relations]
        if several:
            raise SystemExit(f"--pixels records one rig's cameras; {preset} has several rigs (state-based only)")
        width, height = self.image_size
        cameras = {name: {"type": "teledex_world", **settings, "width": width, "height": height}
                   for name, settings in load_preset(preset).cameras.items()}
        return [*robot, f"--robot.cameras={json.dumps(cameras)}", "--robot.world.observe_objects=false"]

    def env_flags(self, preset: str) -> list[str]:
        """lerobot-eval's env as recorded: the same cameras and size, no object poses; the episodes' length."""
        flags = []
        if self.pixels:
            width, height = self.image_size
            flags += ["--env.obs_type=pixels_agent_pos", "--env.observe_objects=false",
                      f"--env.cameras=[{','.join(load_preset(preset).cameras)}]", f"--env.width={width}",
                      f"--env.height={height}"]
        if self.relations:
            flags.append("--env.observe_relations=true")
        if self.hand_pose:
            flags.append("--env.action_space=hand_pose")
        if self.episode_s is not None:
            flags.append(f"--env.episode_length={round(self.episode_s * FPS)}")
        return flags


STATE_LOOP = Loop()


def command(name: str) -> str:
    return str(Path(sys.executable).parent / name)


def start(args: list[str], log: Path, environment: dict[str, str]) -> subprocess.Popen:
    """Start a command, its output to `log`."""
    print("$ " + " ".join(args), flush=True)
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w") as out:
        return subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, env={**os.environ, **environment})


def run(args: list[str], log: Path, budget_s: float | None = None, environment: dict[str, str] = ENVIRONMENT) -> float:
    """Run a command (its output to `log`), stopping it once the budget is spent; wall seconds."""
    started = time.perf_counter()
    process = start(args, log, environment)
    try:
        process.wait(timeout=budget_s)
    except subprocess.TimeoutExpired:
        print(f"  budget of {(budget_s or 0) / 60:g} min spent: stopping", flush=True)
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


def run_together(commands: Sequence[tuple[list[str], Path]], environment: dict[str, str]) -> float:
    """Run commands at once (each (args, log)) until all are done, or stop the others once one fails; wall seconds."""
    started = time.perf_counter()
    processes = [(start(args, log, environment), log) for args, log in commands]
    while (codes := [process.poll() for process, _ in processes]) and None in codes and not any(codes):
        time.sleep(0.5)
    failed = [log for (process, log), code in zip(processes, codes) if code]
    if failed:
        for process, _ in processes:
            process.terminate()  # a recorder stopped mid-episode keeps the episodes it committed
            process.wait()
        raise SystemExit(f"{len(failed)} of {len(commands)} commands failed; see {', '.join(map(str, failed))}")
    return time.perf_counter() - started


def collect(task: str, preset: str, demos: int, perturbed_share: float, out: Path,
            extra: Sequence[str] = (), loop: Loop = STATE_LOOP, workers: int = 1) -> tuple[float, int]:
    """(wall seconds, attempts made); extra: more teledex-record flags. Several workers record their shares of the
    demonstrations at once, worker k on the layouts from seed k * EVAL_SEED / workers, into data_part<k> (with its
    native layout beside it), and lerobot-edit-dataset merges their datasets into data."""
    data = out / "data"
    parts = [data] if workers == 1 else [out / f"data_part{k}" for k in range(workers)]
    for path in {data, *parts}:
        for folder in (path, Path(f"{path}_native")):
            shutil.rmtree(folder, ignore_errors=True)
    for log in out.glob("record*.log"):  # attempts_made counts them all
        log.unlink()
    shares = [demos // workers + (k < demos % workers) for k in range(workers)]
    first_seeds = [k * EVAL_SEED // workers for k in range(workers)]
    if 2 * shares[0] > EVAL_SEED // workers:  # room for as many failed attempts as demonstrations
        raise SystemExit(f"--demos {demos} in {workers} worker(s): the layouts would run into another worker's or "
                         f"the evaluation's (seeds from {EVAL_SEED}); give fewer --demos or --collect-workers")
    misses = {"place_miss_m": loop.place_miss_m} if loop.place_miss_m else {}
    perturbation = [f"--teleop.perturbation.{key}={value}"
                    for key, value in {**PERTURBATION, **TASK_PERTURBATION.get(task, {}), **misses}.items()]
    repo_ids = [f"local/sim_{task}"] if workers == 1 else [f"local/sim_{task}_part{k}" for k in range(workers)]
    commands = [([command("teledex-record"), "--robot.backend=mujoco", *loop.record_flags(preset),
                  f"--robot.world.task={task}", f"--robot.world.seed={seed}",
                  "--teleop.type=teledex_world_expert", *perturbation,
                  f"--teleop.perturbation.episode_share={perturbed_share}", f"--keep={loop.keep}", "--settle_s=0.5",
                  f"--dataset.repo_id={repo_id}", f"--dataset.root={part}",
                  f"--dataset.single_task={TASKS[task].description}", f"--dataset.fps={FPS}",
                  f"--dataset.num_episodes={share}",
                  f"--dataset.episode_time_s={loop.episode_s or TASKS[task].episode_s}",
                  "--dataset.reset_time_s=0", "--dataset.push_to_hub=false", *extra],
                 out / ("record.log" if workers == 1 else f"record_part{k}.log"))
                for k, (seed, share, repo_id, part) in enumerate(zip(first_seeds, shares, repo_ids, parts))]
    wall_s = run_together(commands, loop.environment)
    if workers > 1:
        wall_s += run([command("lerobot-edit-dataset"), f"--new_repo_id=local/sim_{task}", f"--new_root={data}",
                       "--operation.type=merge", f"--operation.repo_ids={json.dumps(repo_ids)}",
                       f"--operation.roots={json.dumps([str(part) for part in parts])}"], out / "merge.log",
                      environment=loop.environment)
    return wall_s, attempts_made(out)


def attempts_made(out: Path) -> int:
    """Episodes teledex-record started (failed attempts included), from its logs (one per worker)."""
    return sum(1 for log in out.glob("record*.log") for line in log.read_text().splitlines()
               if line.startswith("Recording episode"))


def hand_pose_copy(task: str, preset: str, out: Path) -> float:
    """The recording's training copy acting in each hand's pose; wall seconds."""
    target = out / Loop(hand_pose=True).training_data
    shutil.rmtree(target, ignore_errors=True)
    return run([command("teledex-convert"), "to-hand-pose", str(out / "data"), str(target),
                f"--repo-id=local/sim_{task}", f"--preset={preset}"], out / "hand_pose.log")


def train(task: str, steps: int, budget_s: float, out: Path, loop: Loop = STATE_LOOP) -> tuple[float, int]:
    """(wall seconds, the newest checkpoint's step). Diffusion keeps LeRobot's own optimiser and schedule."""
    work = loop.work(out)
    train_dir = work / "train"
    shutil.rmtree(train_dir, ignore_errors=True)
    schedule = schedule_flags(steps) if loop.policy == "act" else []
    workers = 1 if loop.device == "cpu" else 4
    wall_s = run([command("lerobot-train"), f"--dataset.repo_id=local/sim_{task}",
                  f"--dataset.root={out / loop.training_data}",
                  *loop.policy_flags(task), *schedule, f"--steps={steps}", f"--batch_size={loop.batch_size}",
                  "--log_freq=200", f"--save_freq={SAVE_EVERY_STEPS}", f"--num_workers={workers}",
                  "--wandb.enable=false", f"--output_dir={train_dir}"], work / "train.log", budget_s,
                 loop.environment)
    return wall_s, checkpoints(work)[-1]


def checkpoints(work: Path) -> list[int]:
    """The steps of the checkpoints lerobot-train saved under work/train, oldest first."""
    steps = sorted(int(path.name) for path in (work / "train" / "checkpoints").glob("[0-9]*"))
    if not steps:
        raise SystemExit(f"No checkpoint was saved within the budget; see {work / 'train.log'}")
    return steps


def evaluate(task: str, preset: str, episodes: int, chunk: int, out: Path, step: int, loop: Loop = STATE_LOOP,
             first_seed: int = EVAL_SEED, name: str = "eval") -> tuple[Counter, float]:
    """lerobot-eval in chunks of `chunk` episodes (seeds first_seed + i, none seen in training) under work/name, each
    its own run with its own eval_info.json, so a stopped benchmark keeps what it scored; (episodes per final stage,
    wall s)."""
    work = loop.work(out)
    eval_dir = work / name
    shutil.rmtree(eval_dir, ignore_errors=True)
    checkpoint = work / "train" / "checkpoints" / f"{step:06d}" / "pretrained_model"
    stages: Counter = Counter()
    wall_s = 0.0
    for first in range(first_seed, first_seed + episodes, chunk):
        n = min(chunk, first_seed + episodes - first)
        chunk_dir = eval_dir / f"seeds_{first}"
        wall_s += run([command("lerobot-eval"), "--env.type=teledex", f"--env.task={task}", f"--env.preset={preset}",
                       *loop.env_flags(preset), f"--policy.path={checkpoint}", f"--policy.device={loop.device}",
                       "--policy.use_amp=false",  # autocast: numpy refuses the bfloat16 action (lerobot#2956)
                       f"--eval.n_episodes={n}", "--eval.batch_size=1", f"--seed={first}",
                       f"--output_dir={chunk_dir}"], work / f"{name}_{first}.log", environment=loop.environment)
        metrics = json.loads((chunk_dir / "eval_info.json").read_text())["per_task"][0]["metrics"]
        stages.update(STAGE_BY_REWARD[round(reward, 3)] for reward in metrics["max_rewards"])
        done = sum(stages.values())
        print(f"  {task} ({name}, step {step}): {stages['success']}/{done} succeeded so far ({wall_s / 60:.1f} min); "
              f"furthest stages: {dict(stages)}", flush=True)
    return stages, wall_s


def select_checkpoint(task: str, preset: str, among: int, episodes: int, chunk: int, out: Path,
                      loop: Loop = STATE_LOOP) -> tuple[int, dict[int, int], float]:
    """The newest `among` checkpoints scored on `episodes` validation layouts (from VALIDATION_SEED); (the best, the
    newer of a tie; each one's successes; wall s). One training's checkpoints differ more than a change of the
    recording does: the handover's 5000-8000 succeeded in 2, 18, 6 and 6 of 20 such layouts, and scored 34/50 (6000)
    and 19/50 (8000) on the evaluation's."""
    successes, wall_s = {}, 0.0
    for step in checkpoints(loop.work(out))[-among:]:
        stages, seconds = evaluate(task, preset, episodes, chunk, out, step, loop, VALIDATION_SEED,
                                   f"validate_{step:06d}")
        successes[step], wall_s = stages["success"], wall_s + seconds
    return max(successes, key=lambda step: (successes[step], step)), successes, wall_s


def image_size(text: str) -> tuple[int, int]:
    """WxH, e.g. 320x240."""
    try:
        width, height = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: give the image size as WxH, e.g. 320x240") from None
    return width, height


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", nargs="+", default=["cube_assembly", "bottle_peg_in_hole"], choices=sorted(TASKS),
                        help="a two-rig task (handover) with a preset of two rigs, e.g. bimanual_piper_linkerhand_l10")
    parser.add_argument("--preset", default="piper_linkerhand_o6_single")
    parser.add_argument("--demos", type=int, default=200, help="successful demonstrations kept")
    parser.add_argument("--collect-workers", type=int, default=1, metavar="N",
                        help="teledex-record processes at once (up to one per core), merged by lerobot-edit-dataset")
    parser.add_argument("--perturbed-share", type=float, default=0.25, help="share of episodes with perturbations")
    parser.add_argument("--train-steps", type=int, default=7000, help="the learning rate decays over these")
    parser.add_argument("--train-budget-min", type=float, default=22.0)
    parser.add_argument("--eval-episodes", type=int, default=50)
    parser.add_argument("--eval-chunk", type=int, default=10, help="episodes per lerobot-eval run")
    parser.add_argument("--out", type=Path, help="default outputs/sim_loop, with --pixels outputs/sim_loop_pixels")
    parser.add_argument("--skip-collect", action="store_true", help="reuse the recorded demonstrations")
    parser.add_argument("--skip-train", action="store_true", help="reuse the training's checkpoints")
    parser.add_argument("--select-among", type=int, default=1, metavar="K",
                        help="score the newest K checkpoints on --validation-episodes layouts (seeds from "
                             f"{VALIDATION_SEED}, neither recorded nor scored) and evaluate the best; 1: the newest")
    parser.add_argument("--validation-episodes", type=int, default=20, help="layouts per checkpoint")
    parser.add_argument("--pixels", action="store_true", help="the preset's cameras instead of the object poses")
    parser.add_argument("--policy", choices=["act", "diffusion"], default="act")
    parser.add_argument("--device", choices=["cpu", "cuda"], help="default cuda with --pixels, else cpu")
    parser.add_argument("--image-size", type=image_size, default=(320, 240), metavar="WxH",
                        help="every camera's (--pixels)")
    parser.add_argument("--pretrained-backbone", action="store_true",
                        help="start from torchvision's ImageNet ResNet-18 (a download), not from scratch")
    parser.add_argument("--tiny", action="store_true", help="the smallest policies (a smoke run)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--episode-s", type=float, help="recorded and evaluated episodes (default: the task's)")
    parser.add_argument("--keep", choices=["successes", "all"], default="successes",
                        help="the recorded episodes kept (all: a smoke run whose episodes are too short to succeed)")
    parser.add_argument("--relations", action="store_true",
                        help="observe the task's relations beside the object poses (the bottle's bottom from the "
                             "opening; the handover's half in each hand and from its assembled place)")
    parser.add_argument("--hand-pose", action="store_true",
                        help="train on a copy whose arm actions are the hand's pose beside the joints "
                             "(teledex-convert to-hand-pose) and evaluate with --env.action_space=hand_pose")
    parser.add_argument("--place-miss-mm", type=float, default=0.0,
                        help="the perturbed bottle episodes' first insertion aims this far off (shows the recovery)")
    parser.add_argument("--bf16", action="store_true",
                        help="train in bfloat16 autocast (LeRobot's --policy.use_amp); evaluate in float32")
    args = parser.parse_args(argv)
    several = bool(load_preset(args.preset).followers)
    mismatched = [task for task in args.tasks if (task in ONE_RIG_TASKS) == several]
    if mismatched:
        parser.error(f"--tasks {' '.join(mismatched)}: {'one-rig' if several else 'two-rig'} task(s), and preset "
                     f"{args.preset} has {'several rigs' if several else 'one'}: give a matching --preset (the "
                     "handover's: bimanual_piper_linkerhand_l10)")
    if args.collect_workers < 1:
        parser.error(f"--collect-workers {args.collect_workers}: give 1 (one recorder) or more")
    if args.relations and args.pixels:
        parser.error("--relations adds to the object poses, which --pixels does not observe: give one of them")
    loop = Loop(pixels=args.pixels, policy=args.policy, device=args.device or ("cuda" if args.pixels else "cpu"),
                image_size=args.image_size, pretrained_backbone=args.pretrained_backbone, tiny=args.tiny,
                batch_size=args.batch_size, episode_s=args.episode_s, keep=args.keep,
                relations=args.relations, place_miss_m=args.place_miss_mm / 1000, hand_pose=args.hand_pose,
                bf16=args.bf16)
    root = args.out or Path("outputs/sim_loop_pixels" if args.pixels else "outputs/sim_loop")
    rows = []
    for task in args.tasks:
        out = root / args.preset / task
        out.mkdir(parents=True, exist_ok=True)
        if args.skip_collect:
            collect_s, attempts = 0.0, attempts_made(out)
        else:
            collect_s, attempts = collect(task, args.preset, args.demos, args.perturbed_share, out, loop=loop,
                                          workers=args.collect_workers)
        if loop.hand_pose and not args.skip_train:
            collect_s += hand_pose_copy(task, args.preset, out)
        if args.skip_train:
            train_s, step = 0.0, checkpoints(loop.work(out))[-1]
        else:
            train_s, step = train(task, args.train_steps, 60 * args.train_budget_min, out, loop)
        select_s, validation = 0.0, dict[int, int]()
        if args.select_among > 1:
            step, validation, select_s = select_checkpoint(task, args.preset, args.select_among,
                                                           args.validation_episodes, args.eval_chunk, out, loop)
        stages, eval_s = evaluate(task, args.preset, args.eval_episodes, args.eval_chunk, out, step, loop)
        rows.append((task, attempts, step, stages, collect_s, train_s, select_s, eval_s, validation))
    policy = "ACT without VAE" if args.policy == "act" else "Diffusion"
    inputs = f", the cameras {list(load_preset(args.preset).cameras)} at {args.image_size[0]}x{args.image_size[1]}" \
        if args.pixels else ""
    device = (", one torch thread" if loop.device == "cpu" else f" on {loop.device}") + \
        (", bfloat16 autocast in training" if loop.bf16 else "")
    print(f"\npreset {args.preset}, {args.demos} demonstrations per task ({100 * args.perturbed_share:g} % perturbed), "
          f"{policy}{inputs}{device}\n")
    print(f"{'task':20s} {'attempts':>8s} {'steps':>6s} {'success':>8s} {'collect min':>11s} {'train min':>9s} "
          f"{'select min':>10s} {'all min':>7s} {'eval min':>8s}  failed episodes by furthest stage")
    for task, attempts, step, stages, collect_s, train_s, select_s, eval_s, validation in rows:
        evaluated = sum(stages.values())
        failed = {stage: n for stage, n in stages.items() if stage != "success"}
        print(f"{task:20s} {attempts:8d} {step:6d} {stages['success']:3d}/{evaluated:<4d} {collect_s / 60:11.1f} "
              f"{train_s / 60:9.1f} {select_s / 60:10.1f} {(collect_s + train_s + select_s) / 60:7.1f} "
              f"{eval_s / 60:8.1f}  {failed or '-'}")
        if validation:
            print(f"{'':20s} checkpoints' successes on {args.validation_episodes} validation layouts (seeds from "
                  f"{VALIDATION_SEED}): {validation}")


if __name__ == "__main__":
    main()
