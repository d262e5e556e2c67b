"""What a teleoperator learns from the robot in its process: the rig it drives, and where the robot is.

LeRobot's loops build the robot, then the teleoperator, and never hand the robot's observation to the teleoperator
(they call send_feedback for one robot type only). So a TeleDex robot
- announces, when built, the rig it is made of (per follower, for several rigs). A teleoperator given no rig of its
  own drives that one: the rig is given once, to the robot, and their keys cannot disagree;
- publishes its measured joint positions on every observation, keyed as its actions are ("arm_joint1.pos"). The
  teleoperator starts from there and never commands a pose nobody asked for. It only takes values published after it
  connected, so a robot of an earlier session in the same process cannot seed it.
- publishes what the operator should see (`publish_view`): its camera frames, and in the simulated world where the
  task's objects are. A headset page shows them (the camera streamed, the robot and objects drawn).
Only a robot that is still alive counts as announced (a weak reference), so tests building many robots in one
process never see a stale rig.
"""

import threading
import weakref
from collections.abc import Iterable, Mapping
from typing import NamedTuple

import numpy as np

from ..clock import now_ns
from ..presets import HandMount, PartSpec


class DrawnObject(NamedTuple):
    """A task object as a box: its pose in the arm's base frame and the box's half extents and centre in it."""

    pose: np.ndarray  # 4x4
    half_extents_m: tuple[float, float, float]
    centre_m: tuple[float, float, float]


class RobotView(NamedTuple):
    """One observation's view for the operator. Nobody changes it (or its images) after publishing."""

    images: Mapping[str, np.ndarray]  # camera name -> HxWx3 uint8 RGB
    objects: Mapping[str, DrawnObject]  # the world's task objects; none on hardware
    published_ns: int  # clock.now_ns when the observation was handed over


class RigParts(NamedTuple):
    """What Rig.from_parts builds a rig from; `source` names it in messages (a preset, or the robot's models)."""

    arm: PartSpec | None
    hand: PartSpec | None
    hand_mount: HandMount
    source: str


_lock = threading.Lock()
_announced: tuple[weakref.ref, dict[str, RigParts]] | None = None  # (robot, key prefix -> its rig)
_positions: dict[str, tuple[float, int]] = {}  # action key -> (value, when it was published on clock.now_ns)
_view: RobotView | None = None


def announce_rigs(robot, rigs: Mapping[str, RigParts]) -> None:
    """The robot `robot` is made of these rigs, by the prefix of their keys ("" for a single rig)."""
    global _announced
    with _lock:
        _announced = (weakref.ref(robot), dict(rigs))


def announced_rigs() -> dict[str, RigParts] | None:
    """The rigs of the latest robot built in this process that is still alive, else None."""
    with _lock:
        if _announced is None or _announced[0]() is None:
            return None
        return dict(_announced[1])


def publish_measured(positions: Mapping[str, float]) -> None:
    published_ns = now_ns()
    with _lock:
        for key, value in positions.items():
            _positions[key] = (float(value), published_ns)


def read_measured(keys: Iterable[str], since_ns: int) -> np.ndarray | None:
    """The values of `keys` in order, if every one was published at or after `since_ns` (clock.now_ns) and is
    finite; else None."""
    with _lock:
        entries = [_positions.get(key) for key in keys]
    if any(entry is None or entry[1] < since_ns for entry in entries):
        return None
    values = np.array([entry[0] for entry in entries])
    return values if np.all(np.isfinite(values)) else None


def keys_published_since(since_ns: int) -> set[str]:
    with _lock:
        return {key for key, (_, published_ns) in _positions.items() if published_ns >= since_ns}


def publish_view(images: Mapping[str, np.ndarray], objects: Mapping[str, DrawnObject]) -> None:
    global _view
    view = RobotView(images, objects, now_ns())
    with _lock:
        _view = view


def latest_view(since_ns: int) -> RobotView | None:
    """The newest view published at or after `since_ns` (clock.now_ns), else None."""
    with _lock:
        view = _view
    return view if view is not None and view.published_ns >= since_ns else None
