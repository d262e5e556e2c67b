"""Handover, a task for two rigs (`left`, `right`, as bimanual presets place them): the left hand picks the half cube
up near its own side and passes it to the right hand, which assembles it on the other half, laid out on the right
where the left arm cannot reach (a left arm reaching there is what the task is not). Success as the cube's: the top
half rests on the bottom one, aligned, and both hands have let go.
"""

import numpy as np

from .base import uniform
from .cube import HALF_HEIGHT_M, CubeAssembly


class Handover(CubeAssembly):
    name = "handover"
    description = ("Pick up the half cube with the left hand, hand it to the right hand, and place it on the other "
                   "half to assemble the cube.")
    rigs = ("left", "right")
    view_distance_m = 0.8  # both arms and the layout's width in view
    episode_s = 30.0
    relation_names = (*(f"cube_top_in_{rig}_hand_{axis}" for rig in rigs for axis in "xyz"),
                      *(f"cube_top_from_assembled_{axis}" for axis in "xyz"),
                      *(f"{rig}_hand_touches_cube_top" for rig in rigs))

    def layout(self, rng, spread=1.0):
        # bimanual_piper_linkerhand_l10 stands the arms at y = +-0.25 m: the top half lies 3-11 cm inside the left
        # arm's base line, where its pinch reaches best; the bottom half 6-11 cm outside the right arm's, where the
        # right pinch reaches and the left cannot (benchmarks/bimanual.py measures both)
        top = np.array([uniform(rng, 0.34, 0.42, spread), uniform(rng, 0.14, 0.22, spread), HALF_HEIGHT_M])
        bottom = np.array([uniform(rng, 0.34, 0.40, spread), uniform(rng, -0.36, -0.31, spread), HALF_HEIGHT_M])
        return {"cube_top": (top, uniform(rng, -0.2, 0.2, spread)),
                "cube_bottom": (bottom, uniform(rng, -0.2, 0.2, spread))}

    def relations(self, world) -> np.ndarray:
        """Where the half is in each hand's frame (m: what a take needs to the millimetre), where it is from resting
        assembled on the other half (world axes, m), and which hands touch it (1 or 0)."""
        top = np.append(world.object_pose("cube_top").position_m, 1.0)
        in_hands = [(np.linalg.inv(world.hand_pose(rig)) @ top)[:3] for rig in self.rigs]
        assembled = world.object_pose("cube_bottom").position_m + [0.0, 0.0, 2 * HALF_HEIGHT_M]
        touching = world.hands_touching("cube_top")
        return np.concatenate([*in_hands, top[:3] - assembled, [float(rig in touching) for rig in self.rigs]])

    def workspace_centre_m(self):
        return np.array([0.34, 0.0, 0.06])
