"""teledex-calibrate-hand: calibrate the hand retargeting for one operator and one robot hand.

The operator records a short operator stream (or a (N, 21, 3) .npy of MediaPipe keypoints, metres, wrist frame):
first the calibration pose (flat open hand, fingers together, thumb relaxed in the palm plane) for about a second,
then opening, closing and pinching the thumb to each fingertip. The calibration-pose frames are found
automatically (the frames where the fingers are most extended) unless --pose-frames gives them.

    teledex-calibrate-hand --hand linkerhand_l20 --side right --operator alice --recording alice_calib.npz

writes configs/retargeting/calibrations/alice/linkerhand_l20_right.yaml (or --output), to pass as the replay
teleoperator's --teleop.hand_calibration or to build_retargeter(..., calibration=path).
"""

import argparse
from pathlib import Path

import numpy as np

from ..geometry.sides import SIDES
from ..operator.keypoints import FINGERTIP_INDICES
from ..operator.stream import OperatorStream
from ..paths import CONFIGS_DIR
from ..retargeting import build_retargeter, calibrate
from ..retargeting.keypoint_kinematics import KeypointKinematics

CALIBRATIONS_DIR = CONFIGS_DIR / "retargeting" / "calibrations"
_POSE_FRACTION = 0.1  # the most-extended tenth of the recording is taken as the calibration pose


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hand", required=True, help="built-in hand model (e.g. linkerhand_l20) or a URDF path")
    parser.add_argument("--side", default="right", choices=SIDES)
    parser.add_argument("--operator", required=True, help="operator name, stored in the file and its path")
    parser.add_argument("--recording", required=True, type=Path, help="operator stream .npz or keypoints .npy")
    parser.add_argument("--pose-frames", default="", help="START:STOP sample range of the calibration pose")
    parser.add_argument("--config", default=None, help="retargeting config YAML (keypoint_frames etc.)")
    parser.add_argument("--output", type=Path, default=None)
    return parser.parse_args(argv)


def load_recording(path: Path) -> np.ndarray:
    if path.suffix == ".npy":
        keypoints = np.load(path, allow_pickle=False)
    else:
        stream = OperatorStream.load(path)
        if stream.kind != "keypoints":
            raise SystemExit(f"{path}: a {stream.kind} stream; calibration needs hand keypoints")
        keypoints = stream.hand_keypoints_m
    keypoints = np.asarray(keypoints, dtype=float)
    if keypoints.ndim != 3 or keypoints.shape[1:] != (21, 3) or not np.isfinite(keypoints).all():
        raise SystemExit(f"{path}: expected finite keypoints of shape (N, 21, 3); got {keypoints.shape}")
    return keypoints - keypoints[:, :1]


def pose_frames(keypoints: np.ndarray, selection: str) -> np.ndarray:
    """The calibration-pose frames: the given START:STOP range, else the most extended frames."""
    if selection:
        start, stop = (int(v) for v in selection.split(":"))
        return keypoints[start:stop]
    reach = np.linalg.norm(keypoints[:, list(FINGERTIP_INDICES[1:])], axis=-1).sum(axis=1)
    count = max(1, int(_POSE_FRACTION * len(keypoints)))
    return keypoints[np.argsort(reach)[-count:]]


def main(argv=None) -> None:
    args = parse_args(argv)
    keypoints = load_recording(args.recording)
    retargeter = build_retargeter(args.hand, "teledex", args.side, config=args.config)
    kinematics = KeypointKinematics(retargeter.model, retargeter.layout.keypoint_frames,
                                    retargeter.layout)
    calibration = calibrate(retargeter.layout, kinematics, retargeter.reference_pose,
                            pose_frames(keypoints, args.pose_frames), keypoints, operator=args.operator,
                            hand=retargeter.hand_name, side=args.side)
    output = args.output or CALIBRATIONS_DIR / args.operator / f"{retargeter.hand_name}_{args.side}.yaml"
    calibration.save(output)
    print(f"Calibration of {args.operator} for {retargeter.hand_name} ({args.side}) written to {output}")
    for finger, scales in calibration.segment_scales.items():
        pinch = calibration.pinch_distance_range_m.get(finger)
        pinch_text = f", pinch range {pinch[0] * 1000:.0f}-{pinch[1] * 1000:.0f} mm" if pinch else ""
        print(f"  {finger:6s} segment scales {np.round(scales, 2).tolist()}{pinch_text}")


if __name__ == "__main__":
    main()
