"""Control-rate stepping of a world, and the success rule every caller shares (held for the task's ticks)."""

import numpy as np

from .world import World


class SuccessTracker:
    """Success once the task's predicate has held for `task.success_ticks` consecutive control ticks."""

    def __init__(self, world: World):
        self.world = world
        self.streak = 0
        self.succeeded = False

    def update(self) -> bool:
        self.streak = self.streak + 1 if self.world.task.goal_reached(self.world) else 0
        self.succeeded = self.succeeded or self.streak >= self.world.task.success_ticks
        return self.succeeded


def control_tick(world: World, targets: dict[str, np.ndarray], fps: float) -> None:
    """Send targets per role and advance the physics by one control period."""
    for role, q in targets.items():
        world.set_targets(role, q)
    world.step(world.steps_for(1.0 / fps))


def run_expert_episode(world: World, expert, seed: int, fps: float = 25.0, on_tick=None) -> tuple[bool, float]:
    """Reset to `seed`, let the expert act until success (plus the task's hold) or the horizon; (success, seconds)."""
    world.reset(seed)
    expert.reset(world)
    tracker = SuccessTracker(world)
    for _ in range(int(world.task.episode_s * fps)):
        control_tick(world, expert.act(world), fps)
        if on_tick is not None:
            on_tick(world, expert)
        if tracker.update():
            break
    return tracker.succeeded, world.time_s
