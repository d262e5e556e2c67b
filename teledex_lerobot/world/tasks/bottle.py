"""Bottle peg-in-hole: grasp a water bottle from the side and stand it in a square base on the table.

Sizes from the report: bottle about 6 cm across, square base about 7 cm wide and 4 cm high, the two about 20 cm
apart. The bottle is a rigid cylinder here (the real one is a soft plastic bottle).
"""

import numpy as np

from .base import Task, free_body, static_body, uniform

BOTTLE_RADIUS_M = 0.03
BOTTLE_HALF_HEIGHT_M = 0.08
BOTTLE_MASS_KG = 0.15
BASE_OUTER_HALF_M = 0.037  # 7.4 cm wide
BASE_WALL_M = 0.004  # inner opening 6.6 cm: 3 mm clearance around the bottle
BASE_HEIGHT_M = 0.04
BASE_FLOOR_M = 0.004
SEPARATION_M = (0.18, 0.22)
# Success: the bottle stands in the base: its bottom below the rim, upright, inside the opening, hand off.
MAX_TILT_RAD = np.radians(15)


def bottle_bottom(world) -> np.ndarray:
    """The centre of the bottle's bottom face (world, m)."""
    bottle = world.object_pose("bottle")
    return bottle.position_m - bottle.rotation[:, 2] * BOTTLE_HALF_HEIGHT_M


class BottlePegInHole(Task):
    name = "bottle_peg_in_hole"
    description = "Grasp the bottle from the side and insert it into the square base."
    objects = ("bottle", "base")
    moved_object = "bottle"
    released = ("bottle",)
    episode_s = 24.0
    drawn_boxes = {"bottle": ((BOTTLE_RADIUS_M, BOTTLE_RADIUS_M, BOTTLE_HALF_HEIGHT_M), (0.0, 0.0, 0.0)),
                   "base": ((BASE_OUTER_HALF_M, BASE_OUTER_HALF_M, BASE_HEIGHT_M / 2), (0.0, 0.0, BASE_HEIGHT_M / 2))}
    relation_names = ("bottle_bottom_from_opening_x", "bottle_bottom_from_opening_y", "bottle_bottom_from_opening_z")

    def add_objects(self, worldbody) -> None:
        free_body(worldbody, "bottle", "0.3 0.6 0.95 1", BOTTLE_MASS_KG,
                  [{"type": "cylinder", "size": f"{BOTTLE_RADIUS_M} {BOTTLE_HALF_HEIGHT_M}"}])
        half, wall, height = BASE_OUTER_HALF_M, BASE_WALL_M, BASE_HEIGHT_M
        inner = half - wall
        walls = [{"type": "box", "pos": f"{sx * (half - wall / 2)} {sy * 0} {height / 2}",
                  "size": f"{wall / 2} {half} {height / 2}"} for sx, sy in ((1, 0), (-1, 0))]
        walls += [{"type": "box", "pos": f"0 {sy * (half - wall / 2)} {height / 2}",
                   "size": f"{inner} {wall / 2} {height / 2}"} for sy in (1, -1)]
        walls.append({"type": "box", "pos": f"0 0 {BASE_FLOOR_M / 2}", "size": f"{inner} {inner} {BASE_FLOOR_M / 2}"})
        static_body(worldbody, "base", "0.55 0.42 0.3 1", walls)

    def layout(self, rng, spread=1.0):
        x = uniform(rng, 0.36, 0.42, spread)
        bottle_y = uniform(rng, 0.07, 0.11, spread)
        base_y = bottle_y - uniform(rng, *SEPARATION_M, spread)
        return {"bottle": (np.array([x + uniform(rng, -0.02, 0.02, spread), bottle_y, BOTTLE_HALF_HEIGHT_M]), 0.0),
                "base": (np.array([x + uniform(rng, -0.02, 0.02, spread), base_y, 0.0]),
                         uniform(rng, -0.3, 0.3, spread))}

    def relations(self, world) -> np.ndarray:
        """The bottle's bottom from the opening's centre at the rim (world axes, m): the 3 mm that decide."""
        return bottle_bottom(world) - (world.body_position("base") + [0.0, 0.0, BASE_HEIGHT_M])

    def goal_geometry(self, world) -> bool:
        bottle = world.object_pose("bottle")
        base = world.body_position("base")
        bottom = bottle_bottom(world)
        inner = BASE_OUTER_HALF_M - BASE_WALL_M
        return bool(np.linalg.norm(bottom[:2] - base[:2]) < inner and bottom[2] < BASE_HEIGHT_M
                    and bottle.tilt_rad < MAX_TILT_RAD)

    def workspace_centre_m(self):
        return np.array([0.36, -0.02, 0.07])
