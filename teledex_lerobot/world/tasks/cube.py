"""Cube assembly: pick one half of a cube up from the table and place it on the other half.

The report gives the distance (the halves start about 10 cm apart) but not the size. The halves are 4 x 4 x 2 cm (a
4 cm cube cut in two): the largest cube the LinkerHand O6 pinches cleanly (its thumb tip meets the curled fingertips
7 cm below the palm, leaving a 4-5 cm pinch; benchmarks/grasp_grid.py).
"""

import numpy as np

from .base import Task, free_body, uniform

HALF_SIZE_M = 0.02  # half the edge of the whole cube
HALF_HEIGHT_M = 0.01  # half the height of one half
HALF_MASS_KG = 0.03  # 32 cm^3 of ABS
SEPARATION_M = (0.09, 0.11)
# Each half lies with a face toward the robot's base (the world origin), turned by up to this much.
MAX_TURN_FROM_ROBOT_RAD = 0.2
# Success: the top half rests on the bottom one, aligned, and the hand has let go.
MAX_OFFSET_M = 0.008  # a fifth of the edge
MAX_YAW_ERROR_RAD = np.radians(10)
STACK_TOLERANCE_M = 0.003
MAX_BOTTOM_MOVE_M = 0.02


class CubeAssembly(Task):
    name = "cube_assembly"
    description = "Pick up the half cube and place it on the other half to assemble the cube."
    objects = ("cube_top", "cube_bottom")
    moved_object = "cube_top"
    released = ("cube_top", "cube_bottom")
    episode_s = 20.0
    drawn_boxes = {name: ((HALF_SIZE_M, HALF_SIZE_M, HALF_HEIGHT_M), (0.0, 0.0, 0.0))
                   for name in ("cube_top", "cube_bottom")}

    def add_objects(self, worldbody) -> None:
        box = [{"type": "box", "size": f"{HALF_SIZE_M} {HALF_SIZE_M} {HALF_HEIGHT_M}"}]
        free_body(worldbody, "cube_top", "0.9 0.3 0.3 1", HALF_MASS_KG, box)
        free_body(worldbody, "cube_bottom", "0.3 0.8 0.4 1", HALF_MASS_KG, box)

    def layout(self, rng, spread=1.0):
        x = uniform(rng, 0.33, 0.41, spread)
        top_y = uniform(rng, 0.03, 0.07, spread)
        bottom_y = top_y - uniform(rng, *SEPARATION_M, spread)
        layout = {}
        for name, y in (("cube_top", top_y), ("cube_bottom", bottom_y)):
            position = np.array([x + uniform(rng, -0.015, 0.015, spread), y, HALF_HEIGHT_M])
            turn = uniform(rng, 0.0, MAX_TURN_FROM_ROBOT_RAD, spread)
            layout[name] = (position, float(np.arctan2(position[1], position[0])) + turn)
        return layout

    def goal_geometry(self, world) -> bool:
        top, bottom = world.object_pose("cube_top"), world.object_pose("cube_bottom")
        offset = np.linalg.norm(top.position_m[:2] - bottom.position_m[:2])
        height = top.position_m[2] - bottom.position_m[2]
        yaw_error = abs((top.yaw_rad - bottom.yaw_rad + np.pi / 4) % (np.pi / 2) - np.pi / 4)
        start = world.initial_position("cube_bottom")
        return bool(offset < MAX_OFFSET_M and abs(height - 2 * HALF_HEIGHT_M) < STACK_TOLERANCE_M
                    and yaw_error < MAX_YAW_ERROR_RAD and top.tilt_rad < MAX_YAW_ERROR_RAD
                    and np.linalg.norm(bottom.position_m[:2] - start[:2]) < MAX_BOTTOM_MOVE_M)

    def workspace_centre_m(self):
        return np.array([0.36, 0.0, 0.04])
