"""Where the arm must stand for the scripted expert's grasps: reachability over the workspace per base height.

    .venv/bin/python benchmarks/world_reach.py [--preset piper_linkerhand_o6_single]

For each task's grasp (teledex_lerobot/world/grasps.py) and each height of the arm's base relative to the table top,
how many object positions on a grid (x 0.25-0.46 m, y -0.15..0.15 m from the base) have a heading whose grasp and
pre-grasp poses our IK reaches with every joint at least 0.05 rad inside its limits (the expert's rule; headings:
the grasp's preferred one and the others the expert would try), and the worst such margin. The world places a
table-mounted arm with its shoulder 5.7 cm below the table top (teledex_lerobot/world/mjcf.py).
"""

import argparse
import itertools

import numpy as np

from teledex_lerobot.presets import load_preset
from teledex_lerobot.rig import Rig
from teledex_lerobot.world.expert import MIN_JOINT_MARGIN_RAD, ScriptedExpert
from teledex_lerobot.world.grasps import heading_frame
from teledex_lerobot.world.mjcf import arm_base_height_m
from teledex_lerobot.world.tasks.bottle import BOTTLE_HALF_HEIGHT_M
from teledex_lerobot.world.tasks.cube import HALF_HEIGHT_M

OBJECT_HEIGHT_M = {"cube_assembly": HALF_HEIGHT_M, "bottle_peg_in_hole": BOTTLE_HALF_HEIGHT_M}
XS_M = (0.25, 0.32, 0.39, 0.46)
YS_M = (-0.15, -0.05, 0.05, 0.15)
# Heading offsets from the preferred one: a round object takes any; a square one any of its faces, which the world
# turns by up to 0.2 rad from the robot, so +-0.1 rad around the preferred one.
OFFSETS_RAD = {"cube_assembly": (0.0, 0.1, -0.1), "bottle_peg_in_hole": (0.0, 0.15, -0.15, 0.3, -0.3)}


GOOD_MARGIN_RAD = 0.15  # stop searching once a solution has this much


def margin(expert: ScriptedExpert, pose: np.ndarray, seeds) -> float:
    """The largest joint margin over IK solutions from the seeds (-inf when none converges)."""
    best = -np.inf
    for seed in seeds:
        result = expert.solve_hand_ik(pose, seed)
        if result.converged:
            q = result.q[expert.arm.indices]
            best = max(best, float(min(np.min(q - expert.arm.lower), np.min(expert.arm.upper - q))))
            if best >= GOOD_MARGIN_RAD:
                break
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", default="piper_linkerhand_o6_single")
    args = parser.parse_args()
    # (the grid's positions and seeds are few on purpose: a few thousand IK solves, minutes on a shared CPU)
    rig = Rig.from_preset(load_preset(args.preset))
    world_base = arm_base_height_m(rig)
    arm = rig.parts["arm"]
    seeds = []
    for q2, q3, q4, q5, q6 in itertools.product((1.4,), (-1.5,), (0.0, 1.5, -1.5), (0.8, -0.8), (0.0, 1.5, -1.5)):
        seed = arm.home_full.copy()
        seed[1:6] = [q2, q3, q4, q5, q6]
        seeds.append(seed)
    print(f"{'task':20s} {'base height m':>13s} {'reachable':>10s} {'worst margin rad':>17s}")
    for task in OBJECT_HEIGHT_M:
        expert = ScriptedExpert(rig, task)
        for base in sorted({0.0, -0.05, -0.10, -0.15, round(world_base, 3)}, reverse=True):
            expert.arm_base = np.eye(4)
            expert.arm_base[2, 3] = base
            reached, margins = 0, []
            for x, y in itertools.product(XS_M, YS_M):
                position = np.array([x, y, OBJECT_HEIGHT_M[task]])
                preferred = np.arctan2(y, x) + expert.grasp.preferred_heading_rad
                best = -np.inf
                for offset in OFFSETS_RAD[task]:
                    frame = heading_frame(position, preferred + offset)
                    grasp = frame @ expert.grasp.hand_in_heading()
                    pre = grasp.copy()
                    pre[:3, 3] += frame[:3, :3] @ np.asarray(expert.grasp.approach_m)
                    starts = [seed.copy() for seed in seeds]
                    for start in starts:
                        start[0] = np.arctan2(y, x)
                    best = max(best, min(margin(expert, grasp, starts), margin(expert, pre, starts)))
                if best >= MIN_JOINT_MARGIN_RAD:
                    reached += 1
                    margins.append(best)
            worst = f"{min(margins):17.2f}" if margins else f"{'-':>17s}"
            mark = "  (the world)" if abs(base - world_base) < 1e-3 else ""
            print(f"{task:20s} {base:13.3f} {reached:4d}/{len(XS_M) * len(YS_M):<5d} {worst}{mark}", flush=True)


if __name__ == "__main__":
    main()
