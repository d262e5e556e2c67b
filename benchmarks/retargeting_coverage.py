"""Coverage: how much of each robot joint's range a person's real motion reaches through TeleDex retargeting, before
and after the operator's calibration stretches the session's range onto the joints' limits.

    .venv/bin/python benchmarks/retargeting_coverage.py [--hands linkerhand_o6 ... allegro_hand_right ...]

The motion is dex-retargeting's published MediaPipe recording of a right hand (example/profiling/
human_joint_right.pkl, 621 frames at 30 Hz; tests/reference_assets.py says where to check it out). The calibration
is made as teledex-calibrate-hand makes it, from the recording's first half only (the calibration session); coverage
is measured on its second half (motion the calibration never saw): per joint, the 2nd to 98th percentile of the
output over the joint's range. dex-urdf hands (allegro_hand_right, ...) are read from the dex-urdf checkout.
"""

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
import reference_assets  # noqa: E402

from teledex_lerobot.cli.calibrate_hand import pose_frames  # noqa: E402
from teledex_lerobot.kinematics import KinematicModel, resolve_urdf  # noqa: E402
from teledex_lerobot.retargeting import HandRetargeter, RetargetingConfig, calibrate  # noqa: E402
from teledex_lerobot.retargeting.keypoint_kinematics import KeypointKinematics  # noqa: E402

HANDS = ["linkerhand_o6", "linkerhand_l10", "linkerhand_l20", "allegro_hand_right", "inspire_hand_right",
         "ability_hand_right"]


def hand_model(name: str) -> KinematicModel:
    if name.startswith("linkerhand"):
        return KinematicModel.from_urdf(resolve_urdf(name, "right"))
    return KinematicModel.from_urdf(reference_assets.DEX_URDF_HANDS / name.rsplit("_", 1)[0] / f"{name}.urdf")


def coverage(retargeter: HandRetargeter, keypoints: np.ndarray) -> np.ndarray:
    retargeter.reset()
    joints, ok = retargeter.retarget_sequence(keypoints)
    low, high = np.percentile(joints[ok], (2, 98), axis=0)
    return (high - low) / (retargeter.upper - retargeter.lower)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hands", nargs="+", default=HANDS)
    args = parser.parse_args()
    if not reference_assets.available():
        sys.exit(reference_assets.MISSING)
    motion = reference_assets.human_recording() @ reference_assets.DEX_TO_OURS.T
    session, held_out = motion[: len(motion) // 2], motion[len(motion) // 2:]
    print(f"calibration session: frames 0-{len(session) - 1}; coverage measured on frames {len(session)}-"
          f"{len(motion) - 1}")
    print("\ncoverage: default = the average adult hand's calibration; scaled = the session's scales, offsets and "
          "pinch ranges;\nstretched = those and the session's joint ranges stretched onto the limits (what "
          "teledex-calibrate-hand writes)")
    print(f"\n{'hand':22s} {'joint':26s} {'range rad':>15s} {'default':>8s} {'scaled':>7s} {'stretched':>9s}")
    for name in args.hands:
        model = hand_model(name)
        config = RetargetingConfig()
        before = HandRetargeter(model, "teledex", "right", config)
        kinematics = KeypointKinematics(model, before.layout.keypoint_frames, before.layout)
        calibration = calibrate(before.layout, kinematics, before.reference_pose, pose_frames(session, ""), session,
                                operator="dex-retargeting-recording", hand=before.hand_name, side="right")
        scaled = HandRetargeter(model, "teledex", "right", config, calibration)
        calibration.joint_ranges_rad = scaled.joint_ranges(session)
        stretched = HandRetargeter(model, "teledex", "right", config, calibration)
        columns = [coverage(retargeter, held_out) for retargeter in (before, scaled, stretched)]
        for joint, low, high, *reached in zip(before.joint_names, before.lower, before.upper, *columns, strict=True):
            print(f"{name:22s} {joint:26s} {low:6.2f} .. {high:5.2f} " + " ".join(f"{r:8.0%}" for r in reached))
        print(f"{name:22s} {'mean / min':26s} {'':15s} " + " ".join(f"{c.mean():4.0%}/{c.min():3.0%}"
                                                                    for c in columns), flush=True)


if __name__ == "__main__":
    main()
