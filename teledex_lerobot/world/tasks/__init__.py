"""The world's tasks, by name: the report's two, and two for a pair of rigs."""

from ...errors import ConfigError
from .base import ObjectPose, Task
from .bimanual_lift import BimanualLift
from .bottle import BottlePegInHole
from .cube import CubeAssembly
from .handover import Handover

TASKS: dict[str, type[Task]] = {task.name: task for task in (BottlePegInHole, CubeAssembly, Handover, BimanualLift)}
# The tasks a world of one rig runs (the others name the rigs they need: Task.rigs)
ONE_RIG_TASKS = tuple(sorted(name for name, task in TASKS.items() if not task.rigs))


def make_task(name: str) -> Task:
    if name not in TASKS:
        raise ConfigError(f"Unknown world task {name!r}; choose one of {sorted(TASKS)} (e.g. --robot.world.task="
                          f"{next(iter(TASKS))}).")
    return TASKS[name]()


__all__ = ["ONE_RIG_TASKS", "TASKS", "ObjectPose", "Task", "make_task"]
