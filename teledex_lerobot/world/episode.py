"""How an episode in the world is going, judged once per control tick, and the control-rate stepping every caller
shares.

Success is the task's predicate held for `task.success_ticks` consecutive ticks. On the way there the episode passes
stages (Task.stages): reached (the hand touches the object to move), grasped (it holds it between two of its
parts), lifted (the object is off the ground by LIFTED_M), placed (the goal's geometry holds, the hand may still be
on it). Each stage latches at the first tick it is met, so an evaluation can say how far a failed episode got.
"""

import numpy as np

from .perturbation import HandoverSpread
from .world import World

STAGES = ("reached", "grasped", "lifted", "placed")


class EpisodeOutcome:
    def __init__(self, world: World):
        self.world = world
        self.ticks = 0
        self.streak = 0
        self.succeeded = False
        self.success_tick: int | None = None
        self.stage_ticks: dict[str, int | None] = dict.fromkeys(STAGES)

    def update(self) -> bool:
        """Judge this tick (the caller holds the world's lock if another thread steps it); True once succeeded."""
        task = self.world.task
        for stage, met in task.stages(self.world).items():
            if met and self.stage_ticks[stage] is None:
                self.stage_ticks[stage] = self.ticks
        self.streak = self.streak + 1 if task.goal_reached(self.world) else 0
        if not self.succeeded and self.streak >= task.success_ticks:
            self.succeeded, self.success_tick = True, self.ticks
        self.ticks += 1
        return self.succeeded

    @property
    def stage(self) -> str:
        """The furthest stage reached: "success", one of STAGES, or "none"."""
        if self.succeeded:
            return "success"
        return next((stage for stage in reversed(STAGES) if self.stage_ticks[stage] is not None), "none")

    @property
    def progress(self) -> float:
        """0 (no stage) to 1 (success) in equal steps per stage: the reward the gym env reports."""
        return stage_progress(self.stage)

    def as_dict(self) -> dict:
        return {"success": self.succeeded, "stage": self.stage, "ticks": self.ticks,
                "success_tick": self.success_tick, "stage_ticks": dict(self.stage_ticks)}


def stage_progress(stage: str) -> float:
    """A stage's reward: none 0, reached 0.2, grasped 0.4, lifted 0.6, placed 0.8, success 1."""
    order = ("none", *STAGES, "success")
    return order.index(stage) / (len(order) - 1)


def control_tick(world: World, targets: dict[str, np.ndarray], fps: float) -> None:
    """Send targets per role and advance the physics by one control period."""
    for role, q in targets.items():
        world.set_targets(role, q)
    world.step(world.steps_for(1.0 / fps))


def run_expert_episode(world: World, expert, seed: int, fps: float = 25.0, on_tick=None,
                       handover: HandoverSpread | None = None) -> tuple[bool, float]:
    """Reset to `seed`, let the expert act until success (plus the task's hold) or the horizon; (success, seconds).
    handover: how the handover varies (TwoRigExpert.reset)."""
    world.reset(seed)
    expert.reset(world, handover=handover)
    outcome = EpisodeOutcome(world)
    for _ in range(int(world.task.episode_s * fps)):
        control_tick(world, expert.act(world), fps)
        if on_tick is not None:
            on_tick(world, expert)
        if outcome.update():
            break
    return outcome.succeeded, world.time_s
