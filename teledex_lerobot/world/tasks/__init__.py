"""The report's two tasks, by name."""

from ...errors import ConfigError
from .base import ObjectPose, Task
from .bottle import BottlePegInHole
from .cube import CubeAssembly

TASKS: dict[str, type[Task]] = {task.name: task for task in (BottlePegInHole, CubeAssembly)}


def make_task(name: str) -> Task:
    if name not in TASKS:
        raise ConfigError(f"Unknown world task {name!r}; choose one of {sorted(TASKS)} (e.g. --robot.world.task="
                          f"{next(iter(TASKS))}).")
    return TASKS[name]()


__all__ = ["TASKS", "ObjectPose", "Task", "make_task"]
