"""A station: one robot and what it shares, in its process, with the teleoperators that drive it and the recorder.

Why it exists: LeRobot's commands (lerobot-record, lerobot-teleoperate) build the robot and the teleoperator apart,
each from its own config, and never hand one to the other (they call send_feedback for one robot type only). Yet a
TeleDex teleoperator needs from the robot
- the rig it is made of (per follower, for several rigs): a teleoperator given no rig of its own drives that one, so
  the rig is given once, to the robot, and their keys cannot disagree;
- its measured joint positions, keyed as its actions are ("arm_joint1.pos"): the teleoperator starts (and re-anchors
  at each episode) from there and never commands a pose nobody asked for;
- what the operator should see (its camera frames, the simulated world's objects) and the world itself (the scripted
  expert reads it);
- its live view (Rerun), which the teleoperator and the recorder feed too.
So both configs name the station they meet at (--robot.station, --teleop.station; "" = the process's default), and
the robot's station is found under that name.

Ownership:
- the robot opens its station when it is built (`open_station`; a teledex_followers robot opens one for all its
  followers, which publish into it) and announces its rigs there; it holds the station, the registry only a weak
  reference, so a station goes with its robot;
- the robot, at connect, starts the live view (--robot.live_view.enabled) and puts its world there, and takes both
  away at disconnect; it publishes its measured pose and view on every observation;
- a teleoperator takes its station at connect (`join_station`): the robot's, or, with no robot under that name, a
  station of its own, which holds what send_feedback gives it and no world; the recorder feeds the live view of the
  robot it built.
Two robots in one process share nothing unless built under one name; then the latest built that is still alive is
the one a teleoperator finds (tests build many robots in one process and never see a stale one).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from .clock import now_ns
from .errors import ConfigError
from .geometry.camera import CameraInfo
from .presets import HandMount, PartSpec

if TYPE_CHECKING:  # the world imports MuJoCo and the view Rerun: a teleoperator without either loads neither
    from .viewer.config import LiveViewConfig
    from .viewer.live_view import LiveView
    from .world.devices import WorldRunner

DEFAULT_STATION = ""


class DrawnObject(NamedTuple):
    """A task object as a box: its pose in the arm's base frame and the box's half extents and centre in it."""

    pose: np.ndarray  # 4x4
    half_extents_m: tuple[float, float, float]
    centre_m: tuple[float, float, float]


class RobotView(NamedTuple):
    """One observation's view for the operator (of every rig: a teledex_followers robot's followers publish theirs
    apart). Nobody changes it (or its images) after publishing."""

    images: Mapping[str, np.ndarray]  # camera name (a follower's prefixed, as the robot's) -> HxWx3 uint8 RGB
    objects: Mapping[str, DrawnObject]  # the world's task objects, in the first rig's base frame; none on hardware
    published_ns: int  # clock.now_ns when the newest observation in it was handed over
    # each rig's (by its keys' prefix) hand links in contact with something, as the hand reports it
    touching: Mapping[str, frozenset[str]] = {}


class RigParts(NamedTuple):
    """What Rig.from_parts builds a rig from; `source` names it in messages (a preset, or the robot's models)."""

    arm: PartSpec | None
    hand: PartSpec | None
    hand_mount: HandMount
    source: str


def describe(name: str) -> str:
    return f"station {name!r}" if name else "the default station"


class Station:
    def __init__(self, name: str = DEFAULT_STATION, owner: object | None = None):
        self.name = name
        # the robot that opened it (None: a teleoperator's own); a weak reference, the robot holds the station
        self._owner = weakref.ref(owner) if owner is not None else None
        self.rigs: dict[str, RigParts] | None = None  # key prefix -> rig ("" for a single rig); set by the robot
        self.world_runner: WorldRunner | None = None  # backend=mujoco, while the robot is connected
        self.live_view: LiveView | None = None  # while the robot that started it is connected
        self._lock = threading.Lock()
        self._positions: dict[str, tuple[float, int]] = {}  # action key -> (value, when published on clock.now_ns)
        self._views: dict[str, RobotView] = {}  # by the prefix of the rig that published it
        # while the robot is connected: its colour cameras' calibration, and the table top's height in its base frame
        # where the station knows it (the world)
        self.cameras: dict[str, CameraInfo] = {}
        self.table_top_z_m: float | None = None
        # several rigs: each one's base in the first one's base frame (4x4), by key prefix, where the robot knows it
        self.rig_bases: dict[str, np.ndarray] = {}

    @property
    def has_robot(self) -> bool:
        return self._owner is not None and self._owner() is not None

    def announce_rigs(self, rigs: Mapping[str, RigParts]) -> None:
        """The robot is made of these rigs, by the prefix of their keys ("" for a single rig)."""
        self.rigs = dict(rigs)

    def publish_measured(self, positions: Mapping[str, float]) -> None:
        published_ns = now_ns()
        with self._lock:
            for key, value in positions.items():
                self._positions[key] = (float(value), published_ns)

    def read_measured(self, keys: Iterable[str], since_ns: int) -> np.ndarray | None:
        """The values of `keys` in order, if every one was published at or after `since_ns` (clock.now_ns) and is
        finite; else None."""
        with self._lock:
            entries = [self._positions.get(key) for key in keys]
        fresh = [entry[0] for entry in entries if entry is not None and entry[1] >= since_ns]
        if len(fresh) < len(entries):
            return None
        values = np.array(fresh)
        return values if np.all(np.isfinite(values)) else None

    def keys_published_since(self, since_ns: int) -> set[str]:
        with self._lock:
            return {key for key, (_, published_ns) in self._positions.items() if published_ns >= since_ns}

    def publish_view(self, images: Mapping[str, np.ndarray], objects: Mapping[str, DrawnObject],
                     touching: frozenset[str] = frozenset(), rig: str = "") -> None:
        """A rig's view (`rig`: its keys' prefix; its images keyed as the robot's cameras): what its hand touches,
        and the world's objects in its base frame."""
        view = RobotView(images, objects, now_ns(), {rig: touching})
        with self._lock:
            self._views[rig] = view

    def latest_view(self, since_ns: int) -> RobotView | None:
        """The newest view of every rig that published one at or after `since_ns` (clock.now_ns), as one: every
        rig's images and contacts, the first rig's objects; None when none did."""
        with self._lock:
            views = [view for view in self._views.values() if view.published_ns >= since_ns]
        if not views:
            return None
        rank = {prefix: i for i, prefix in enumerate(self.rigs or {})}
        first = min(views, key=lambda view: min(rank.get(rig, len(rank)) for rig in view.touching))
        return RobotView({name: image for view in views for name, image in view.images.items()}, first.objects,
                         max(view.published_ns for view in views),
                         {rig: links for view in views for rig, links in view.touching.items()})

    def world(self) -> WorldRunner:
        """The runner of the world the station's robot runs (backend=mujoco, connected)."""
        if self.world_runner is None:
            raise ConfigError(f"No MuJoCo world is running in {describe(self.name)}: connect a robot with "
                              "--robot.backend=mujoco first (the world expert teleoperator needs it), under the "
                              "same --robot.station as the teleoperator's --teleop.station.")
        return self.world_runner

    def start_live_view(self, config: LiveViewConfig) -> LiveView:
        """Start the station's live view, or return the one already running (a teledex_followers robot starts it
        before its followers connect; each draws itself in it)."""
        with self._lock:
            if self.live_view is None:
                from .viewer.live_view import LiveView  # Rerun takes seconds to import: only when a view starts

                self.live_view = LiveView(config)
            return self.live_view

    def stop_live_view(self) -> None:
        with self._lock:
            view, self.live_view = self.live_view, None
        if view is not None:
            view.close()


_registry_lock = threading.Lock()
_opened: list[weakref.ref[Station]] = []  # every robot's station, oldest first; weak: a station goes with its robot


def open_station(name: str, robot: object) -> Station:
    """A new station for `robot` (called once, when the robot is built), found under `name` from now on."""
    station = Station(name, robot)
    with _registry_lock:
        _opened[:] = [ref for ref in _opened if ref() is not None]
        _opened.append(weakref.ref(station))
    return station


def find_station(name: str) -> Station | None:
    """The station of the latest robot built under `name` that is still alive, else None."""
    with _registry_lock:
        stations = [ref() for ref in reversed(_opened)]
    return next((s for s in stations if s is not None and s.name == name and s.has_robot), None)


def join_station(name: str) -> Station:
    """A teleoperator's station: its robot's, or, with no robot under `name` in this process, one of its own, which
    holds only what the teleoperator is sent (send_feedback) and runs no world."""
    return find_station(name) or Station(name)
