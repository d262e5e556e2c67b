"""Does the Cartesian teleop reach the poses a plan needs? The handover's scripted expert reaches its poses along
planned joint paths; an operator reaches them through the teleop's relative arm control (control/relative_arm.py:
damped near the straight wrist, speed-bounded). This replays each rig's planned hand poses through that controller as
the scripted headset person moves its controller (tests/headset_person.teleop_stroke: straight strokes at a calm
hand's speed, re-anchored between strokes as a clutch does, the arm following its command exactly), holds, and
measures how far from the pose the arm ends.

    .venv/bin/python benchmarks/teleop_reach.py [--layouts 20] [--first-seed 0]

Per layout and pose: the error left after the hold (mm, degrees), and joint 5 (the Piper's wrist bend) as the plan
has it and where the teleop left it: a plan on the other side of the straight wrist (joint 5 = 0) from where the arm
starts asks the teleop to cross the singularity it damps. Then the poses reached (within 2 mm and 3 degrees), and for
other headings of the left hand at the handover point (offsets from the line from its base, as the expert's): in how
many layouts the left arm reaches it from its grasp lifted and the right arm the take (above the half, then onto it)
from home.
"""

import argparse
import sys
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from headset_person import teleop_stroke  # noqa: E402

from teledex_lerobot.geometry.rotations import matrix_to_rotvec  # noqa: E402
from teledex_lerobot.presets import load_preset  # noqa: E402
from teledex_lerobot.rig import Rig  # noqa: E402
from teledex_lerobot.world.bimanual_expert import HANDOVER_POINT_M, RECEIVE_APPROACH_M, HandoverExpert  # noqa: E402
from teledex_lerobot.world.expert import LIFT_M  # noqa: E402
from teledex_lerobot.world.grasps import heading_frame  # noqa: E402
from teledex_lerobot.world.world import World, WorldConfig, placed_rigs  # noqa: E402

PRESET = "bimanual_piper_linkerhand_l10"
HOLD_S = 3.0
REACHED = (0.002, np.radians(3.0))
WRIST_BEND = 4  # the Piper's joint 5 (index in the arm's joints)
PASS_OFFSETS_RAD = np.round(np.arange(-0.8, 0.81, 0.2), 1)


def flange(part, q_full: np.ndarray) -> np.ndarray:
    """The arm's mount (flange) pose in its base frame for a full configuration."""
    assert part.mount_frame is not None  # a built-in arm's
    return part.model.frame_pose(q_full, part.mount_frame)


def stroke(part, q: np.ndarray, goal_flange: np.ndarray) -> np.ndarray:
    return teleop_stroke(part, q, goal_flange, HOLD_S)[0]


def error(part, q: np.ndarray, goal_flange: np.ndarray) -> tuple[float, float]:
    pose = flange(part, part.full_configuration(q))
    turn = matrix_to_rotvec(goal_flange[:3, :3] @ pose[:3, :3].T)
    return float(np.linalg.norm(goal_flange[:3, 3] - pose[:3, 3])), float(np.linalg.norm(turn))


def reached(part, q: np.ndarray, goal_flange: np.ndarray) -> bool:
    distance_m, turn_rad = error(part, q, goal_flange)
    return distance_m <= REACHED[0] and turn_rad <= REACHED[1]


def flange_in_base(expert, rig: Rig, hand_world: np.ndarray) -> np.ndarray:
    return np.linalg.inv(expert.arm_base) @ hand_world @ np.linalg.inv(rig.hand_mount)


def pass_headings(expert: HandoverExpert, rigs: dict[str, Rig], q_grasp: np.ndarray) -> dict[float, tuple[bool, bool]]:
    """Per offset of the left hand's heading at the handover point: (the left arm reaches it from its grasp lifted,
    the right arm reaches the take from home)."""
    left, right = expert.experts["left"], expert.experts["right"]
    left_arm, right_arm = rigs["left"].parts["arm"], rigs["right"].parts["arm"]
    point = np.asarray(HANDOVER_POINT_M)
    toward = float(np.arctan2(point[1] - left.arm_base[1, 3], point[0] - left.arm_base[0, 3]))
    lifted = flange(left_arm, left_arm.full_configuration(q_grasp))
    lifted[2, 3] += LIFT_M
    q_lifted = stroke(left_arm, q_grasp, lifted)
    verdicts = {}
    for offset in PASS_OFFSETS_RAD:
        heading = toward + offset
        held = flange_in_base(left, rigs["left"], heading_frame(point, heading) @ left.grasp.hand_in_heading())
        q_left = stroke(left_arm, q_lifted, held)
        take = heading_frame(point, heading + np.pi / 2) @ right.grasp.hand_in_heading()
        above = take.copy()
        above[2, 3] += RECEIVE_APPROACH_M
        q_right = right_arm.home.copy()
        for pose in (above, take):
            q_right = stroke(right_arm, q_right, flange_in_base(right, rigs["right"], pose))
        verdicts[float(offset)] = (reached(left_arm, q_left, held),
                                   reached(right_arm, q_right, flange_in_base(right, rigs["right"], take)))
    return verdicts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--layouts", type=int, default=20)
    parser.add_argument("--first-seed", type=int, default=0)
    args = parser.parse_args()
    spec = load_preset(PRESET)
    rigs = {name: Rig.from_preset(load_preset(follower)) for name, follower in spec.followers.items()}
    world = World(placed_rigs(rigs, spec.placements), WorldConfig(task="handover", seed=args.first_seed))
    expert = HandoverExpert(rigs)
    print(f"{PRESET}, handover: the expert's planned hand poses through the teleop's relative arm control "
          f"(as the scripted headset person moves its controller: tests/headset_person.teleop_stroke; held "
          f"{HOLD_S:.0f} s)\n")
    print(f"{'seed':>5s} {'rig':6s} {'pose':9s} {'error mm':>9s} {'deg':>6s} {'j5 plan':>8s} {'j5 teleop':>9s}")
    reached_poses: Counter[tuple[str, str]] = Counter()
    some_heading = 0
    headings: dict[float, Counter[str]] = {float(offset): Counter() for offset in PASS_OFFSETS_RAD}
    for seed in range(args.first_seed, args.first_seed + args.layouts):
        world.reset(seed)
        expert.reset(world)
        for name, rig_expert in expert.experts.items():
            part = rigs[name].parts["arm"]
            q = part.home.copy()
            for segment in rig_expert.segments:
                if segment.arm_q is None:
                    continue
                goal = flange(part, segment.arm_q)
                q = stroke(part, q, goal)
                distance_m, turn_rad = error(part, q, goal)
                reached_poses[name, segment.name] += reached(part, q, goal)
                print(f"{seed:5d} {name:6s} {segment.name:9s} {1000 * distance_m:9.1f} {np.degrees(turn_rad):6.1f} "
                      f"{segment.arm_q[part.indices][WRIST_BEND]:8.2f} {q[WRIST_BEND]:9.2f}")
                if name == "left" and segment.name == "descend":
                    verdicts = pass_headings(expert, rigs, q)
                    for offset, both in verdicts.items():
                        headings[offset]["left"] += both[0]
                        headings[offset]["right"] += both[1]
                        headings[offset]["both"] += all(both)
                    some_heading += any(all(both) for both in verdicts.values())
    print(f"\nreached within {1000 * REACHED[0]:.0f} mm and {np.degrees(REACHED[1]):.0f} deg, of {args.layouts} "
          "layouts:")
    for (name, pose), count in reached_poses.items():
        print(f"  {name:6s} {pose:9s} {count:3d}")
    print(f"\nthe left hand's heading at the handover point (offset from the line from its base, rad), of "
          f"{args.layouts} layouts:\n{'offset':>8s} {'left':>5s} {'right':>6s} {'both':>5s}")
    for offset, arms in headings.items():
        print(f"{offset:+8.1f} {arms['left']:5d} {arms['right']:6d} {arms['both']:5d}")
    print(f"layouts where some heading is reached by both arms: {some_heading} of {args.layouts}")


if __name__ == "__main__":
    main()
