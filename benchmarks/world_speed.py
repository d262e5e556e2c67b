"""Speed of the MuJoCo world on this machine, and how often the scripted expert solves each task.

    .venv/bin/python benchmarks/world_speed.py [--seeds 50] [--keypoint-seeds 10]

Prints physics steps/s (and x real time) while the expert works, render fps of one 320x240 camera (EGL, no
shadows), and the expert's success rate per task and route (joints; operator keypoints through retargeting and
the control chain), with wall times.
"""

import argparse
import time

from teledex_lerobot.presets import load_preset
from teledex_lerobot.rig import Rig
from teledex_lerobot.world.camera import WorldRenderer
from teledex_lerobot.world.episode import run_expert_episode
from teledex_lerobot.world.expert import ScriptedExpert
from teledex_lerobot.world.operator_expert import OperatorExpert
from teledex_lerobot.world.tasks import TASKS
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


def expert_success(rig: Rig, task: str, seeds: int, route: str) -> tuple[int, float]:
    world = World(rig, WorldConfig(task=task))
    expert = ScriptedExpert(rig, task)
    if route == "keypoints":
        expert = OperatorExpert(rig, expert)
    started = time.perf_counter()
    successes = sum(run_expert_episode(world, expert, seed)[0] for seed in range(seeds))
    return successes, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", default="piper_linkerhand_o6_single")
    parser.add_argument("--seeds", type=int, default=50)
    parser.add_argument("--keypoint-seeds", type=int, default=10)
    args = parser.parse_args()
    rig = Rig.from_preset(load_preset(args.preset))
    print(f"{'task':20s} {'physics steps/s':>16s} {'x real time':>12s} {'render fps 320x240':>19s}")
    for task in TASKS:
        world = World(rig, WorldConfig(task=task))
        rate, realtime = physics_speed(world)
        print(f"{task:20s} {rate:16.0f} {realtime:12.1f} {render_fps(world):19.1f}", flush=True)
    print(f"\n{'task':20s} {'route':10s} {'success':>10s} {'rate':>6s} {'wall s':>8s}")
    for task in TASKS:
        for route, seeds in (("joints", args.seeds), ("keypoints", args.keypoint_seeds)):
            if seeds <= 0:
                continue
            successes, wall_s = expert_success(rig, task, seeds, route)
            print(f"{task:20s} {route:10s} {successes:4d}/{seeds:<5d} {100 * successes / seeds:5.0f}% {wall_s:8.1f}",
                  flush=True)


if __name__ == "__main__":
    main()
