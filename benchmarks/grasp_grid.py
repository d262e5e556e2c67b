"""Which grasps, contact settings, finger forces and objects hold: the hand alone on a stiff (welded) arm.

    .venv/bin/python benchmarks/grasp_grid.py [--hand linkerhand_o6 [linkerhand_l10 ...]] [--hold-s 5] [--quick]

The hands are those with measured grasps (teledex_lerobot/world/grasps.py GRASPS), or a hand URDF path given grasps
there.

Each trial (teledex_lerobot/world/grasp_rig.py): the hand comes down on one task object with the grasp's preshape,
closes, lifts it 10 cm and holds still; "held" means the object came up with the hand and slipped < 5 mm in the hand
during the hold. Tables:
1. contact model (both tasks' grasps): friction cone and impratio x noslip iterations x friction x contact stiffness;
2. around the world's default contact model: condim, finger force limit, object mass, where the hand lands
   (placement error along and across the heading, heading error);
3. grasp strategies: the measured ones against the ones that fail (O6: a pitched pinch for the cube half, the
   earlier fingertip pinch of the bottle with the hand pitched down; other hands: the measured ones alone).
"""

import argparse
import dataclasses
import time

import numpy as np

from teledex_lerobot.presets import PartSpec
from teledex_lerobot.world.grasp_rig import GraspRig
from teledex_lerobot.world.grasps import Grasp, grasp_for
from teledex_lerobot.world.world import ContactConfig

OBJECTS = {"cube_assembly": "cube_top", "bottle_peg_in_hole": "bottle"}
MASSES_KG = {"cube_assembly": (0.03, 0.06, 0.12), "bottle_peg_in_hole": (0.15, 0.3, 0.5)}


def _pitched(grasp: Grasp, pitch_rad: float, object_in_hand_m) -> Grasp:
    """The grasp with the hand pitched down about the heading frame's y axis (fingers toward the table)."""
    c, s = np.cos(pitch_rad), np.sin(pitch_rad)
    pitch = np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])
    axes = tuple(tuple(pitch @ np.asarray(axis)) for axis in grasp.hand_axes)
    return dataclasses.replace(grasp, name=f"{grasp.name}_pitched_{np.degrees(pitch_rad):.0f}deg", hand_axes=axes,
                               object_in_hand_m=object_in_hand_m)


def alternative_grasps(hand: str) -> dict[str, list[Grasp]]:
    """Strategies that were tried and fail, next to the measured ones (O6 only)."""
    cube, bottle = grasp_for(hand, "cube_assembly"), grasp_for(hand, "bottle_peg_in_hole")
    if hand != "linkerhand_o6":
        return {"cube_assembly": [cube], "bottle_peg_in_hole": [bottle]}
    # The cube half's pinch with the hand pitched 25 deg down, the object where thumb and fingertips meet.
    pitched_cube = _pitched(cube, np.radians(25), (0.0, 0.062, 0.134))
    # The bottle pinched between the opposed thumb and the fingertips, hand pitched 50 deg down, fingers along the
    # heading (palm sideways): the first expert's grasp.
    pinch = Grasp(name="fingertip_pinch", hand_axes=((0.0, 0.0, -1.0), (0.0, 1.0, 0.0),
                                                                   (1.0, 0.0, 0.0)),
                  object_in_hand_m=(-0.015, 0.069, 0.158), preshape=cube.preshape,
                  closed={"thumb_cmc_yaw": 1.36, "thumb_cmc_pitch": 0.05, "mcp_pitch": 0.6},
                  approach_m=(-0.08, 0.0, 0.03), symmetry=0)
    pinch = _pitched(pinch, np.radians(50), pinch.object_in_hand_m)
    return {"cube_assembly": [cube, pitched_cube], "bottle_peg_in_hole": [bottle, pinch]}


def row(task: str, grasp: str, setting: str, result, wall_s: float) -> str:
    return (f"{task:19s} {grasp:34s} {setting:44s} {100 * result.lifted_m:7.1f} {1000 * result.slip_m:8.2f} "
            f"{np.degrees(result.rotation_rad):7.1f} {'yes' if result.held else 'no':>5s} {wall_s:6.1f}")


def header(title: str) -> None:
    print(f"\n{title}")
    print(f"{'task':19s} {'grasp':34s} {'setting':44s} {'lift cm':>7s} {'slip mm':>8s} {'turn °':>7s} "
          f"{'held':>5s} {'wall s':>6s}", flush=True)


def trial(hand: str, task: str, grasp: Grasp, contact: ContactConfig, hold_s: float, *, effort_nm=None,
          mass_kg=None, offset_m=(0.0, 0.0, 0.0), heading_error_rad=0.0):
    rig = GraspRig(PartSpec(hand), task, contact)
    name = OBJECTS[task]
    if effort_nm is not None:
        rig.set_finger_effort(effort_nm)
    if mass_kg is not None:
        rig.set_object_mass(name, mass_kg)
    started = time.perf_counter()
    result = rig.trial(grasp, name, hold_s=hold_s, offset_m=offset_m, heading_error_rad=heading_error_rad)
    return result, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hand", nargs="+", default=["linkerhand_o6"])
    parser.add_argument("--hold-s", type=float, default=5.0)
    parser.add_argument("--quick", action="store_true", help="only the default settings and the strategies")
    args = parser.parse_args()
    default = ContactConfig()
    held = total = 0

    def report(task, grasp, setting, run):
        nonlocal held, total
        try:
            result, wall_s = run()
        except ValueError as error:  # a grasp that cannot even be approached
            total += 1
            print(f"{task:19s} {grasp.name:34s} {setting:44s} {error}", flush=True)
            return
        held, total = held + result.held, total + 1
        print(row(task, grasp.name, setting, result, wall_s), flush=True)

    for hand in args.hand:
        if not args.quick:
            header(f"{hand}: 1. Contact model (hold {args.hold_s:g} s)")
            for task in OBJECTS:
                grasp = grasp_for(hand, task)
                for (cone, impratio), noslip, friction, timeconst in (
                        (c, n, f, t) for c in (("pyramidal", 1.0), ("elliptic", 1.0), ("elliptic", 10.0),
                                               ("elliptic", 100.0))
                        for n in (0, 3) for f in (0.7, 1.0, 1.5) for t in (0.02, 0.005)):
                    contact = dataclasses.replace(default, cone=cone, impratio=impratio, noslip_iterations=noslip,
                                                  friction=friction, solref_timeconst_s=timeconst)
                    setting = f"{cone[:4]} impratio {impratio:3.0f} noslip {noslip} mu {friction} solref {timeconst}"
                    report(task, grasp, setting, lambda: trial(hand, task, grasp, contact, args.hold_s))

            header(f"{hand}: 2. Around the default contact model "
                   f"({default.cone}, impratio {default.impratio:g}, noslip {default.noslip_iterations}, "
                   f"mu {default.friction}, condim {default.condim}, solref {default.solref_timeconst_s})")
            for task in OBJECTS:
                grasp = grasp_for(hand, task)
                variants = [(f"condim {c}", dict(contact=dataclasses.replace(default, condim=c))) for c in (3, 6)]
                variants += [(f"finger force limit {e} N m", dict(effort_nm=e)) for e in (0.5, 1.0, 4.0)]
                variants += [(f"object mass {m} kg", dict(mass_kg=m)) for m in MASSES_KG[task]]
                variants += [(f"hand lands {1000 * d:+.0f} mm along heading", dict(offset_m=(d, 0.0, 0.0)))
                             for d in (-0.005, 0.005)]
                variants += [(f"hand lands {1000 * d:+.0f} mm across heading", dict(offset_m=(0.0, d, 0.0)))
                             for d in (-0.005, 0.005)]
                if grasp.symmetry:
                    variants += [(f"heading error {e:+d} deg", dict(heading_error_rad=np.radians(e)))
                                 for e in (-10, 10)]
                for setting, options in variants:
                    contact = options.pop("contact", default)
                    report(task, grasp, setting, lambda: trial(hand, task, grasp, contact, args.hold_s, **options))

        header(f"{hand}: 3. Grasp strategies (default contact model)")
        for task, grasps in alternative_grasps(hand).items():
            for grasp in grasps:
                report(task, grasp, "default", lambda: trial(hand, task, grasp, default, args.hold_s))
    print(f"\nheld {held}/{total}")


if __name__ == "__main__":
    main()
