"""teledex-calibrate-hand: calibrate the hand mapping for one operator and one robot hand, from the operator's own
session.

The operator shows the calibration pose (flat open hand, fingers together, thumb relaxed in the palm plane) for about
a second, then opens and closes the hand, pinches the thumb to each fingertip, sweeps the thumb across the palm and
spreads the fingers. From a keypoint device (keypoint stream, XR hand tracking) that gives the retargeting's segment
scales, root offsets and pinch ranges, the angle ranges, and each robot joint's range over the session (stretched
onto the joint's limits: coverage); from a glove, the angle ranges the joint mapping uses. The calibration-pose
frames are found automatically (where the fingers are most extended) unless --pose-frames gives them.

    # from a recorded session (teledex-record / lerobot-record with --teleop.record_to=alice.datagrams.jsonl)
    teledex-calibrate-hand --hand linkerhand_l20 --operator alice --recording alice.datagrams.jsonl
    # live, with prompts on screen, from a keypoint stream on UDP 5566 (or --live xrobotoolkit / webxr)
    teledex-calibrate-hand --hand linkerhand_l20 --operator alice --live udp --parser keypoints

The calibration goes to the user's data folder (<data>/teledex/calibrations/<operator>/<hand>_<side>.yaml, printed;
TELEDEX_CALIBRATIONS_DIR moves it), never into the package. Use it with --teleop.hand_calibration=<operator> (or the
file's path).
"""

import argparse
import sys
import time
from pathlib import Path

from ..geometry.sides import SIDES

_POSE_FRACTION = 0.1  # the most-extended tenth of the recording is taken as the calibration pose
# What the operator does in a live calibration, and for how long (s).
LIVE_STEPS = (("Hold the calibration pose: flat open hand, fingers together, thumb relaxed in the palm plane", 3.0),
              ("Open and close your hand, three times", 6.0),
              ("Pinch your thumb to each fingertip in turn: index, middle, ring, little", 8.0),
              ("Sweep your thumb across the palm to the base of your little finger and back, then spread your "
               "fingers wide", 5.0))
LIVE_PORTS = {"udp": 5566, "xrobotoolkit": 63901, "webxr": 8012}


def operator_name(text: str) -> str:
    from ..retargeting.calibration import operator_dir

    try:
        operator_dir(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from error
    return text


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="teledex-calibrate-hand", description=__doc__.split("\n\n")[0],
                                     epilog=__doc__.split("\n\n", 1)[1],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hand", required=True, help="built-in hand model (e.g. linkerhand_l20) or a URDF path")
    parser.add_argument("--side", default="right", choices=SIDES, help="the operator's hand, and the robot hand's")
    parser.add_argument("--operator", required=True, type=operator_name, help="operator name: the calibration's folder")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--recording", type=Path,
                        help="a recorded session (.datagrams.jsonl), an operator stream (.npz) or MediaPipe keypoints "
                             "(.npy, (N, 21, 3), m, wrist frame)")
    source.add_argument("--live", choices=sorted(LIVE_PORTS), help="record the session now, with prompts")
    parser.add_argument("--parser", default="keypoints", help="--live udp: what the packets are (keypoints, "
                                                              "xr_state, udexreal)")
    parser.add_argument("--port", type=int, default=0, help="--live: the port (default: the device's)")
    parser.add_argument("--bind", default="127.0.0.1", help="--live: the address to listen on (default: this "
                                                            "machine only; a headset needs the LAN address)")
    parser.add_argument("--pose-frames", default="", help="START:STOP sample range of the calibration pose")
    parser.add_argument("--config", default=None, help="retargeting config YAML (keypoint frames etc.)")
    parser.add_argument("--output", type=Path, default=None, help="the calibration file (default: the data folder)")
    return parser.parse_args(argv)


def pose_frames(keypoints, selection: str):
    """The calibration-pose frames: the given START:STOP range, else the most extended frames."""
    import numpy as np

    from ..operator.keypoints import FINGERTIP_INDICES

    if selection:
        start, stop = (int(v) for v in selection.split(":"))
        return keypoints[start:stop]
    reach = np.linalg.norm(keypoints[:, list(FINGERTIP_INDICES[1:])], axis=-1).sum(axis=1)
    count = max(1, int(_POSE_FRACTION * len(keypoints)))
    return keypoints[np.argsort(reach)[-count:]]


def load_recording(path: Path, side: str):
    """(keypoints (N, 21, 3) wrist frame, canonical angles (M, 20)) of one hand in a recording; a missing or damaged
    file is one line (UserError) naming it."""
    import zipfile

    import numpy as np

    from .errors import UserError, with_fix

    try:
        read = _read_recording(path, side)
    except FileNotFoundError:
        raise UserError(f"{path} does not exist; give a recorded session (.datagrams.jsonl), an operator stream "
                        "(.npz) or keypoints (.npy)") from None
    except (ValueError, EOFError, zipfile.BadZipFile) as err:
        message = str(err) if str(path) in str(err) else f"{path}: cannot be read, cut or damaged? ({err})"
        raise UserError(with_fix(message, "record the session again, or give another")) from None
    if not isinstance(read, np.ndarray):
        return read
    keypoints = np.asarray(read)
    if (keypoints.dtype.kind not in "fiu" or keypoints.ndim != 3 or keypoints.shape[1:] != (21, 3)
            or not np.isfinite(keypoints).all()):
        raise UserError(f"{path}: expected finite keypoints of shape (N, 21, 3); got {keypoints.dtype} "
                        f"{keypoints.shape}")
    keypoints = keypoints.astype(float)
    return keypoints - keypoints[:, :1], np.zeros((0, 20))


def _read_recording(path: Path, side: str):
    """(keypoints, angles) of a session or a glove stream, or the keypoints array of a keypoint stream or .npy."""
    import numpy as np

    from ..errors import DataError
    from ..inputs.datagram_file import read_datagrams
    from ..inputs.operator_streams import hand_samples
    from ..operator.stream import OperatorStream

    if path.is_file() and path.stat().st_size == 0:
        raise DataError(f"{path} is empty")
    if path.name.endswith(".jsonl"):
        header, datagrams = read_datagrams(path)
        return hand_samples(header["parser"], datagrams, side)
    if path.suffix == ".npy":
        return np.load(path, allow_pickle=False)
    stream = OperatorStream.load(path)
    if stream.kind != "keypoints":
        return np.zeros((0, 21, 3)), stream.canonical_angles()
    return stream.hand_keypoints_m


def record_live(args) -> Path:
    """Prompt the operator through the calibration motions while recording the device's packets; returns the file."""
    from ..inputs.session_recording import record_session

    port = args.port or LIVE_PORTS[args.live]
    parser = args.parser if args.live == "udp" else "xr_state"
    path = calibration_output(args).with_suffix(".datagrams.jsonl")
    print(f"Listening for {parser} packets ({args.live}) on {args.bind}:{port}; recording to {path}", flush=True)

    def prompt(text: str, seconds: float) -> None:
        for left in range(3, 0, -1):
            print(f"\r  {text}: starting in {left} s ", end="", flush=True)
            time.sleep(1.0)
        print(f"\r  {text}: NOW ({seconds:g} s)        ", flush=True)

    packets = record_session(args.live, parser, args.bind, port, path, LIVE_STEPS, prompt, time.sleep)
    print(f"Recorded {packets} packets", flush=True)
    return path


def calibration_output(args) -> Path:
    from ..retargeting.calibration import operator_dir

    hand = Path(args.hand).stem.removesuffix(f"_{args.side}") if args.hand.endswith(".urdf") else args.hand
    return args.output or operator_dir(args.operator) / f"{hand}_{args.side}.yaml"


def calibrate_hand(args) -> None:
    import numpy as np

    from ..retargeting import HandRetargeter, build_retargeter, calibrate
    from ..retargeting.calibration import canonical_angle_ranges, default_calibration
    from ..retargeting.keypoint_kinematics import KeypointKinematics
    from .errors import UserError, hand_model_errors

    recording = args.recording if args.recording is not None else record_live(args)
    keypoints, angles = load_recording(recording, args.side)
    if not len(keypoints) and not len(angles):
        raise UserError(f"{recording}: no {args.side} hand in it (keypoints or glove angles); check --side and that "
                        "the device tracked the hand")
    with hand_model_errors():
        retargeter = build_retargeter(args.hand, "teledex", args.side, config=args.config)
    if retargeter.mirrored:  # its root offsets would subtract one side's hand from the other's
        raise UserError(f"{args.hand} is a hand of the other side than --side={args.side}: calibrate on the same "
                        "side's hand model (its other-side URDF), and use the calibration with that hand")
    kinematics = KeypointKinematics(retargeter.model, retargeter.layout.keypoint_frames, retargeter.layout)
    if len(keypoints):
        calibration = calibrate(retargeter.layout, kinematics, retargeter.reference_pose,
                                pose_frames(keypoints, args.pose_frames), keypoints, operator=args.operator,
                                hand=retargeter.hand_name, side=args.side)
        with_session = HandRetargeter(retargeter.model, "teledex", args.side, retargeter.config, calibration)
        calibration.joint_ranges_rad = with_session.joint_ranges(keypoints)
    else:  # a glove: the operator's angle ranges, on the average adult hand's proportions
        calibration = default_calibration(retargeter.layout, kinematics, retargeter.reference_pose,
                                          hand=retargeter.hand_name, side=args.side)
        calibration.operator = args.operator
        calibration.canonical_angle_ranges_rad = canonical_angle_ranges(angles)
    output = calibration_output(args)
    calibration.save(output)
    print(f"Calibration of {args.operator} for {retargeter.hand_name} ({args.side}) from {len(keypoints)} keypoint "
          f"and {len(angles)} angle samples, written to {output}")
    print(f"Use it with --teleop.hand_calibration={args.operator}")
    for finger, scales in calibration.segment_scales.items():
        pinch = calibration.pinch_distance_range_m.get(finger)
        pinch_text = f", pinch range {pinch[0] * 1000:.0f}-{pinch[1] * 1000:.0f} mm" if pinch else ""
        print(f"  {finger:6s} segment scales {np.round(scales, 2).tolist()}{pinch_text}")
    if calibration.joint_ranges_rad:
        print("  the session's reach per joint, stretched onto the joint's range (a joint it barely moved is not):")
        for joint, low, high, (a, b) in zip(retargeter.joint_names, retargeter.lower, retargeter.upper,
                                            calibration.joint_ranges_rad.values(), strict=True):
            print(f"    {joint:24s} {a:6.2f} .. {b:5.2f} of {low:6.2f} .. {high:5.2f} rad "
                  f"({(b - a) / (high - low):4.0%} covered before)")


def main(argv=None) -> None:
    from .errors import run_command

    run_command("teledex-calibrate-hand", calibrate_hand, parse_args(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    main()
