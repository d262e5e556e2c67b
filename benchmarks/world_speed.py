"""Speed of the MuJoCo world on this machine, and how often the scripted expert solves each task.

    .venv/bin/python benchmarks/world_speed.py [--preset NAME ...] [--seeds 50] [--keypoint-seeds 10]

Prints, per preset, physics steps/s (and x real time) while the expert works and render fps of one 320x240 camera
(EGL, no shadows); then one table of the expert's success per preset, task and route (joints; operator keypoints
through retargeting and the control chain) over seeds 0..N-1, with the seeds that failed and wall times.
"""

import argparse
import time

from teledex_lerobot.presets import load_preset
from teledex_lerobot.rig import Rig
from teledex_lerobot.world.camera import WorldRenderer
from teledex_lerobot.world.episode import run_expert_episode
from teledex_lerobot.world.expert import ScriptedExpert
from teledex_lerobot.world.operator_expert import OperatorExpert
from teledex_lerobot.world.tasks import ONE_RIG_TASKS
from teledex_lerobot.world.world import World, WorldConfig


def physics_speed(world: World, seconds: float = 5.0) -> tuple[float, float]:
    expert = ScriptedExpert(world.rig, world.task.name)
    world.reset(0)
    expert.reset(world)
    steps, physics_s = 0, 0.0
    per_tick = world.steps_for(1 / 25)
    while world.time_s < seconds:
        targets = expert.act(world)
        for role, q in targets.items():
            world.set_targets(role, q)
        started = time.perf_counter()
        world.step(per_tick)
        physics_s += time.perf_counter() - started
        steps += per_tick
    rate = steps / physics_s
    return rate, rate * world.model.opt.timestep


def render_fps(world: World, frames: int = 100) -> float:
    renderer = WorldRenderer(world, "top", 320, 240)
    renderer.render()
    started = time.perf_counter()
    for _ in range(frames):
        world.step(5)
        renderer.render()
    fps = frames / (time.perf_counter() - started)
    renderer.close()
    return fps


def expert_success(rig: Rig, task: str, seeds: int, route: str) -> tuple[list[int], float]:
    """The seeds (of 0..seeds-1) the expert failed, and the wall time."""
    world = World(rig, WorldConfig(task=task))
    expert = ScriptedExpert(rig, task)
    if route == "keypoints":
        expert = OperatorExpert(rig, expert)
    started = time.perf_counter()
    failed = [seed for seed in range(seeds) if not run_expert_episode(world, expert, seed)[0]]
    return failed, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", nargs="+", default=["piper_linkerhand_o6_single"])
    parser.add_argument("--tasks", nargs="+", default=list(ONE_RIG_TASKS), choices=ONE_RIG_TASKS)
    parser.add_argument("--seeds", type=int, default=50)
    parser.add_argument("--keypoint-seeds", type=int, default=10)
    parser.add_argument("--no-speed", action="store_true", help="only the expert's success")
    args = parser.parse_args()
    rigs = {preset: Rig.from_preset(load_preset(preset)) for preset in args.preset}
    if not args.no_speed:
        print(f"{'preset':32s} {'task':20s} {'physics steps/s':>16s} {'x real time':>12s} {'render fps 320x240':>19s}")
        for preset, rig in rigs.items():
            for task in args.tasks:
                world = World(rig, WorldConfig(task=task))
                rate, realtime = physics_speed(world)
                print(f"{preset:32s} {task:20s} {rate:16.0f} {realtime:12.1f} {render_fps(world):19.1f}", flush=True)
    print(f"\n{'preset':32s} {'task':20s} {'route':10s} {'success':>10s} {'rate':>6s} {'wall s':>8s}  failed seeds")
    for preset, rig in rigs.items():
        for task in args.tasks:
            for route, seeds in (("joints", args.seeds), ("keypoints", args.keypoint_seeds)):
                if seeds <= 0:
                    continue
                failed, wall_s = expert_success(rig, task, seeds, route)
                successes = seeds - len(failed)
                print(f"{preset:32s} {task:20s} {route:10s} {successes:4d}/{seeds:<5d} {100 * successes / seeds:5.0f}% "
                      f"{wall_s:8.1f}  {' '.join(map(str, failed)) or '-'}", flush=True)


if __name__ == "__main__":
    main()
