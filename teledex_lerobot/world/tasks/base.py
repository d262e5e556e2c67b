"""What a task is: objects added to the scene, a seeded layout, a success predicate and a workspace to look at."""

import xml.etree.ElementTree as ET
from abc import ABC, abstractmethod
from dataclasses import dataclass

import mujoco
import numpy as np

from ..mjcf import GRIP_CLASS, SCENE_CONAFFINITY, SCENE_CONTYPE


@dataclass(frozen=True)
class ObjectPose:
    position_m: np.ndarray  # (3,) world frame
    quat_wxyz: np.ndarray  # (4,)

    @property
    def rotation(self) -> np.ndarray:
        matrix = np.zeros(9)
        mujoco.mju_quat2Mat(matrix, self.quat_wxyz)
        return matrix.reshape(3, 3)

    @property
    def yaw_rad(self) -> float:
        rotation = self.rotation
        return float(np.arctan2(rotation[1, 0], rotation[0, 0]))

    @property
    def tilt_rad(self) -> float:
        """Angle between the object's z axis and the world's vertical."""
        return float(np.arccos(np.clip(self.rotation[2, 2], -1.0, 1.0)))


def uniform(rng: np.random.Generator, low: float, high: float, spread: float = 1.0) -> float:
    """rng.uniform(low, high) with the range scaled by `spread` about its middle (one draw either way, so a layout's
    other values do not change with the spread)."""
    value = rng.uniform(low, high)
    if spread == 1.0:
        return float(value)
    middle = (low + high) / 2
    return float(middle + spread * (value - middle))


def yaw_quat(yaw_rad: float) -> np.ndarray:
    return np.array([np.cos(yaw_rad / 2), 0.0, 0.0, np.sin(yaw_rad / 2)])


def free_body(worldbody: ET.Element, name: str, rgba: str, mass_kg: float, geoms: list[dict[str, str]]) -> ET.Element:
    """A free-moving object: its geoms share the mass by volume."""
    body = ET.SubElement(worldbody, "body", name=name, pos="0 0 0.5")
    ET.SubElement(body, "freejoint", name=f"{name}/free")
    volume = sum(_volume(g) for g in geoms)
    for index, geom in enumerate(geoms):
        ET.SubElement(body, "geom", {"class": GRIP_CLASS, **geom}, name=f"{name}/geom{index}", rgba=rgba,
                      density=f"{mass_kg / volume:.6g}", contype=str(SCENE_CONTYPE), conaffinity=str(SCENE_CONAFFINITY))
    return body


def static_body(worldbody: ET.Element, name: str, rgba: str, geoms: list[dict[str, str]]) -> ET.Element:
    body = ET.SubElement(worldbody, "body", name=name, pos="0 0 0")
    for index, geom in enumerate(geoms):
        ET.SubElement(body, "geom", {"class": GRIP_CLASS, **geom}, name=f"{name}/geom{index}", rgba=rgba,
                      contype=str(SCENE_CONTYPE), conaffinity=str(SCENE_CONAFFINITY))
    return body


def _volume(geom: dict[str, str]) -> float:
    size = [float(v) for v in geom["size"].split()]
    if geom["type"] == "box":
        return 8 * size[0] * size[1] * size[2]
    if geom["type"] == "cylinder":
        return np.pi * size[0] ** 2 * 2 * size[1]
    raise ValueError(geom["type"])


# Stage "lifted": the object to move is this far above where it lay.
LIFTED_M = 0.02


class Task(ABC):
    """One task of the world. Subclasses set `name`, `description` (the dataset's task text), `objects` (the bodies
    whose poses are observed, in observation order: whatever the layout moves, free or fixed) and `moved_object`
    (the one the hand carries)."""

    name: str = ""
    description: str = ""
    objects: tuple[str, ...] = ()
    moved_object: str = ""
    # The objects the hand must have let go of for success (a static fixture it brushes does not count).
    released: tuple[str, ...] = ()
    # Seconds of simulated time an episode may take (the evaluation horizon).
    episode_s: float = 20.0
    # Consecutive control ticks the predicate must hold for success.
    success_ticks: int = 10
    # How an operator's display draws each object: (box half extents, box centre in the object's frame), metres.
    drawn_boxes: dict[str, tuple[tuple[float, float, float], tuple[float, float, float]]] = {}
    # Names of the values relations() observes beside the objects' poses, in its order.
    relation_names: tuple[str, ...] = ()
    # The rigs the task needs, by name (a world of several, e.g. ("left", "right")); () needs one rig, any.
    rigs: tuple[str, ...] = ()
    # How far the world's fixed cameras stand from workspace_centre_m (wide enough for the task's layouts).
    view_distance_m: float = 0.5

    @abstractmethod
    def add_objects(self, worldbody: ET.Element) -> None:
        """Add the task's bodies to the scene."""

    @abstractmethod
    def layout(self, rng: np.random.Generator, spread: float = 1.0) -> dict[str, tuple[np.ndarray, float]]:
        """Body name -> (xyz of its origin, yaw) for a new episode, every range scaled by `spread` about its middle
        (uniform() above: spread 1 draws exactly rng.uniform's values)."""

    @abstractmethod
    def goal_geometry(self, world) -> bool:
        """The objects stand as the goal wants them, at this instant (the hand may still touch them)."""

    def goal_reached(self, world) -> bool:
        """The success predicate at this instant (success needs it for success_ticks ticks in a row): the goal's
        geometry, and the hand has let go of every object."""
        return self.goal_geometry(world) and not any(world.hand_touches(name) for name in self.released)

    def relations(self, world) -> np.ndarray:
        """Where the objects stand relative to the goal, beside their raw poses in the observed object state (what
        a state-based policy would otherwise have to compute to the millimetre from two poses)."""
        return np.zeros(0)

    def stages(self, world) -> dict[str, bool]:
        """Which stages (world/episode.py STAGES) hold at this instant."""
        moved = self.moved_object
        lift = world.object_pose(moved).position_m[2] - world.initial_position(moved)[2]
        return {"reached": world.hand_touches(moved), "grasped": world.hand_bodies_touching(moved) >= 2,
                "lifted": bool(lift >= LIFTED_M), "placed": self.goal_geometry(world)}

    def workspace_centre_m(self) -> np.ndarray:
        """Where the cameras look."""
        return np.array([0.32, 0.0, 0.05])
