"""Where the teleoperator learns the robot's measured joint positions.

A teleoperator must start from where the robot is, but LeRobot's record and teleoperate loops never hand the
robot's observation to the teleoperator (they call send_feedback for one robot type only). TeleDex robots therefore
publish their measured positions here on every observation, keyed as their actions are ("arm_joint1.pos"), and
TeleDex teleoperators read them. Robot and teleoperator share one process in every LeRobot loop; a teleoperator
only takes values published after it connected, so a robot of an earlier session in the same process cannot seed it.
"""

import threading
from collections.abc import Iterable, Mapping

import numpy as np

from ..clock import now_ns

_lock = threading.Lock()
_positions: dict[str, tuple[float, int]] = {}  # action key -> (value, when it was published, clock.now_ns)


def publish(positions: Mapping[str, float]) -> None:
    published_ns = now_ns()
    with _lock:
        for key, value in positions.items():
            _positions[key] = (float(value), published_ns)


def read(keys: Iterable[str], since_ns: int) -> np.ndarray | None:
    """The values of `keys` in order, if every one was published at or after `since_ns` (clock.now_ns) and is
    finite; else None."""
    with _lock:
        entries = [_positions.get(key) for key in keys]
    if any(entry is None or entry[1] < since_ns for entry in entries):
        return None
    values = np.array([entry[0] for entry in entries])
    return values if np.all(np.isfinite(values)) else None
