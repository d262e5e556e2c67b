"""Bimanual lift, a task for two rigs (`left`, `right`): a box too wide for one hand and too heavy for one hand's
friction lies between the arms; both hands press it from its ends, lift it together and set it down on a target
square. Nothing holds the box but the two hands' pressure: if either lets go, it slips out.

Success: the box rests on the target (its centre within MAX_OFFSET_M, turned at most MAX_YAW_ERROR_RAD, level) and
neither hand touches it. Stages as every task's (reached, grasped: both hands on it, lifted, placed).
"""

import xml.etree.ElementTree as ET

import numpy as np

from .base import LIFTED_M, Task, free_body, uniform

BOX_HALF_M = (0.04, 0.14, 0.05)  # 8 cm deep, 28 cm from end to end (the hands press its ends), 10 cm high
BOX_MASS_KG = 0.6
TARGET_HALF_M = 0.05  # the target square, drawn on the table (it has no thickness to collide with)
SHIFT_M = (0.08, 0.12)  # the target lies this far beyond the box, away from the arms
YAW_RAD = (0.14, 0.30)  # the box's and the target's yaw
MAX_OFFSET_M = 0.02
MAX_YAW_ERROR_RAD = np.radians(10)
MAX_TILT_RAD = np.radians(8)
RESTING_M = 0.003  # the box's bottom this near the table: resting on it


class BimanualLift(Task):
    name = "bimanual_lift"
    description = "Lift the wide box with both hands and set it down on the target square."
    objects = ("box", "target")
    moved_object = "box"
    released = ("box",)
    rigs = ("left", "right")
    view_distance_m = 0.7  # both arms and the layout's width in view
    episode_s = 24.0
    drawn_boxes = {"box": (BOX_HALF_M, (0.0, 0.0, 0.0)),
                   "target": ((TARGET_HALF_M, TARGET_HALF_M, 0.0005), (0.0, 0.0, 0.0))}

    def add_objects(self, worldbody) -> None:
        free_body(worldbody, "box", "0.85 0.65 0.3 1", BOX_MASS_KG,
                  [{"type": "box", "size": " ".join(f"{v}" for v in BOX_HALF_M)}])
        target = ET.SubElement(worldbody, "body", name="target", pos="0 0 0")
        ET.SubElement(target, "geom", name="target/square", type="box", size=f"{TARGET_HALF_M} {TARGET_HALF_M} 0.0005",
                      pos="0 0 0.0005", rgba="0.3 0.5 0.9 1", contype="0", conaffinity="0")

    def layout(self, rng, spread=1.0):
        box = np.array([uniform(rng, 0.30, 0.36, spread), uniform(rng, -0.03, 0.03, spread), BOX_HALF_M[2]])
        target = box + [uniform(rng, *SHIFT_M, spread), uniform(rng, -0.04, 0.04, spread), -BOX_HALF_M[2]]
        # both turned 8-17 degrees counter-clockwise (the left end toward the arms): the left Piper holds its hand's
        # palm against the box's end at 7-22 degrees and at none from -30 to 0 (world/bimanual_expert.py)
        return {"box": (box, uniform(rng, *YAW_RAD, spread)), "target": (target, uniform(rng, *YAW_RAD, spread))}

    def goal_geometry(self, world) -> bool:
        box, target = world.object_pose("box"), world.object_pose("target")
        yaw_error = abs((box.yaw_rad - target.yaw_rad + np.pi / 2) % np.pi - np.pi / 2)  # the box is symmetric
        bottom = box.position_m[2] - BOX_HALF_M[2]
        return bool(np.linalg.norm(box.position_m[:2] - target.position_m[:2]) < MAX_OFFSET_M
                    and yaw_error < MAX_YAW_ERROR_RAD and box.tilt_rad < MAX_TILT_RAD and abs(bottom) < RESTING_M)

    def stages(self, world) -> dict[str, bool]:
        lift = world.object_pose("box").position_m[2] - world.initial_position("box")[2]
        return {"reached": world.hand_touches("box"), "grasped": len(world.hands_touching("box")) >= 2,
                "lifted": bool(lift >= LIFTED_M), "placed": self.goal_geometry(world)}

    def workspace_centre_m(self):
        return np.array([0.38, 0.0, 0.06])
