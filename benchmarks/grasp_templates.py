"""Grasp anchors for a person the hand model is not: their own grasps, recorded by a calibration session, against the
hand model's.

    .venv/bin/python benchmarks/grasp_templates.py [--person long_fingered|average_adult|recorded] [--seeds 50]
        [--first-seed 1000]

The person (operator/persons.py) performs the calibration session (operator/calibration_session.py: a right hand at
30 Hz with 1 mm of tracker jitter) twice, on two random streams: the first is their calibration (`calibrate`, as
teledex-calibrate-hand runs it on the O6, without the coverage ranges), the second a held-out session the first
table judges: per step, each template's distance (RMS mm, scaled hand) to the step's hand shapes, and the share of
frames on which the anchors fire as each grasp. The second table is the world's keypoint route (the scripted plan as
the person's hand, through the keypoint parser, TeleDex retargeting, the grasp anchors and the control chain) on
seeds it was not tuned on, O6 on the Piper, cube and bottle, with the anchors matching: the hand model's grasps,
uncalibrated and calibrated; the person's own.

`--person recorded`: real finger motion. dex-retargeting's recorded right hand (MediaPipe, 30 Hz; a local checkout,
tests/reference_assets.py) as a person (`persons.recorded_person`): its pinch is its closest thumb-to-index approach
with the other fingers out, its wrap its most closed hand (a fist), each from the most open frame of the second
before; the finger shapes as canonical angles on the average adult's hand and wrist path. The recording has no
pinch of a small object and no wrap round a bottle: these are the nearest shapes a real hand made in it.
"""

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from teledex_lerobot.control.config import ControlConfig
from teledex_lerobot.operator.calibration_session import perform
from teledex_lerobot.operator.keypoints import FINGER_CHAINS, FINGER_NAMES, THUMB_TIP, WRIST
from teledex_lerobot.operator.persons import PERSONS, Person, recorded_person
from teledex_lerobot.presets import load_preset
from teledex_lerobot.retargeting import (
    GraspAnchorSettings,
    GraspTemplate,
    HandCalibration,
    build_retargeter,
    calibrate_session,
)
from teledex_lerobot.retargeting.grasp_anchors import fired_shares
from teledex_lerobot.retargeting.keypoint_kinematics import KeypointKinematics
from teledex_lerobot.rig import Rig
from teledex_lerobot.world.episode import run_expert_episode
from teledex_lerobot.world.expert import ScriptedExpert
from teledex_lerobot.world.operator_expert import OperatorExpert
from teledex_lerobot.world.world import World, WorldConfig

PRESET = "piper_linkerhand_o6_single"
RECORDING_HZ = 30.0
RECORDED_FINGERS_OUT_M = 0.08  # a pinch with the other fingers out: their tips this far from the palm on average
TASKS = ("cube_assembly", "bottle_peg_in_hole")
# (label, control overrides beyond the world's keypoint config; "{calibration}" is the calibration file)
CONDITIONS = (
    ("hand model's grasps", {}),
    ("hand model's grasps, calibrated", {"strategy": {"hand_calibration": "{calibration}"}}),
    ("the person's own", {"strategy": {"hand_calibration": "{calibration}", "grasp_templates": "calibration"}}),
)


def recorded_hand_person() -> Person:
    """dex-retargeting's recorded hand as a person (see the module's docstring)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    import reference_assets as assets

    if not assets.available():
        raise SystemExit(f"--person recorded: {assets.MISSING}")
    keypoints = assets.human_recording() @ assets.DEX_TO_OURS.T
    fingers = [FINGER_CHAINS[finger] for finger in FINGER_NAMES[1:]]
    palm = keypoints[:, [WRIST] + [chain[0] for chain in fingers]].mean(axis=1)
    tips = keypoints[:, [chain[-1] for chain in fingers]]
    curl = np.linalg.norm(tips - palm[:, None], axis=2).mean(axis=1)  # the fingertips' mean distance to the palm
    thumb_index = np.linalg.norm(keypoints[:, THUMB_TIP] - keypoints[:, FINGER_CHAINS["index"][-1]], axis=1)
    pinch = int(np.argmin(np.where(curl > RECORDED_FINGERS_OUT_M, thumb_index, np.inf)))
    wrap = int(np.argmin(curl))
    second = int(RECORDING_HZ)
    spans = {"pinch": (pinch - second + int(np.argmax(thumb_index[pinch - second:pinch])), pinch),
             "wrap": (wrap - second + int(np.argmax(curl[wrap - second:wrap])), wrap)}
    print(f"recorded: dex-retargeting's hand, frames (open, closed) {spans}: thumb to index "
          f"{thumb_index[spans['pinch'][0]] * 1e3:.0f} -> {thumb_index[pinch] * 1e3:.0f} mm, fingertips to palm "
          f"{curl[spans['wrap'][0]] * 1e3:.0f} -> {curl[wrap] * 1e3:.0f} mm\n")
    return recorded_person("recorded", keypoints, "right", spans)


def calibrate_person(person: Person, seed: int) -> HandCalibration:
    retargeter = build_retargeter("linkerhand_o6", "teledex", "right")
    keypoints, steps = perform(person, np.random.default_rng(seed))
    kinematics = KeypointKinematics(retargeter.model, retargeter.layout.keypoint_frames, retargeter.layout)
    return calibrate_session(retargeter.layout, kinematics, retargeter.reference_pose, keypoints, steps,
                             operator=person.name, hand=retargeter.hand_name, side="right")


def distance_table(person: Person, calibration: HandCalibration, seed: int) -> None:
    far_mm = GraspAnchorSettings().far_mm
    model = {kind: GraspTemplate.of_model(grasp, "right") for kind, grasp in PERSONS["average_adult"].grasps().items()}
    sets = {"own": calibration.templates(), "model": model}
    keypoints, steps = perform(person, np.random.default_rng(seed))
    print(f"{person.name}: a held-out calibration session, each step's hand shapes against the templates (RMS mm, "
          f"p5 / median; anchors fire within {far_mm:g} mm)")
    header = "".join(f"{f'{name} {kind}':>17s}" for name in sets for kind in sets[name])
    print(f"{'step':16s}{header}   fires as (own)    fires as (model)")
    for step, span in steps.items():
        cells, fired = "", []
        for templates in sets.values():
            distances, shares = fired_shares(templates, keypoints[span], far_mm)
            cells += "".join(f"{np.percentile(c, 5):9.1f} / {np.median(c):5.1f}" for c in distances.T)
            fired.append(", ".join(f"{kind} {share:.0%}" for kind, share in shares.items() if share) or "none")
        print(f"{step:16s}{cells}   {fired[0]:17s} {fired[1]}")


def world_table(person: Person, calibration_file: Path, seeds: range) -> None:
    rig = Rig.from_preset(load_preset(PRESET))
    print(f"\n{person.name} in the world, keypoint route, {PRESET}, seeds {seeds.start}-{seeds.stop - 1}")
    print(f"{'anchors match':34s} {'task':20s} {'success':>8s} {'wall s':>7s}  failed seeds")
    for label, overrides in CONDITIONS:
        strategy = {key: value.format(calibration=calibration_file)
                    for key, value in overrides.get("strategy", {}).items()}
        control = ControlConfig.load("world_expert_keypoints", **({"strategy": strategy} if strategy else {}))
        for task in TASKS:
            world = World(rig, WorldConfig(task=task))
            expert = OperatorExpert(rig, ScriptedExpert(rig, task), control, person=person)
            started = time.perf_counter()
            failed = [seed for seed in seeds if not run_expert_episode(world, expert, seed)[0]]
            print(f"{label:34s} {task:20s} {len(seeds) - len(failed):4d}/{len(seeds):<3d} "
                  f"{time.perf_counter() - started:7.0f}  {failed}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--person", default="long_fingered", choices=sorted(PERSONS) + ["recorded"])
    parser.add_argument("--seeds", type=int, default=50)
    parser.add_argument("--first-seed", type=int, default=1000)
    parser.add_argument("--session-seed", type=int, default=5, help="the calibration session's random stream")
    args = parser.parse_args()
    person = recorded_hand_person() if args.person == "recorded" else PERSONS[args.person]
    calibration = calibrate_person(person, args.session_seed)
    distance_table(person, calibration, args.session_seed + 1)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "calibration.yaml"
        calibration.save(path)
        world_table(person, path, range(args.first_seed, args.first_seed + args.seeds))


if __name__ == "__main__":
    main()
