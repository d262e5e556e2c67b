"""teledex-calibrate-hand: calibrate the hand mapping for one operator and one robot hand, from the operator's own
session.

The operator shows the calibration pose (flat open hand, fingers together, thumb relaxed in the palm plane) for about
a second, then opens and closes the hand, pinches the thumb to each fingertip, sweeps the thumb across the palm and
spreads the fingers, then picks up a small cube and holds a bottle as they would, in the air (the steps of
operator/calibration_session.py, marked in the recording of a live session). From a keypoint device (keypoint
stream, XR hand tracking) that gives the retargeting's segment scales, root offsets and pinch ranges, the angle
ranges, each robot joint's range over the session (stretched onto the joint's limits: coverage) and the operator's
own pinch and wrap, which the grasp anchors match (the table printed shows how far each step's hand shapes are from
them, and where the anchors would fire); from a glove, the angle ranges the joint mapping uses. The calibration-pose
frames are the marked pose step's, else --pose-frames, else the most extended frames; the grasp frames the marked
pinch and wrap steps', else --grasp-frames.

    # from a recorded session (teledex-record / lerobot-record with --teleop.record_to=alice.datagrams.jsonl)
    teledex-calibrate-hand --hand linkerhand_l20 --operator alice --recording alice.datagrams.jsonl
    # live, with prompts on screen, from a keypoint stream on UDP 5566 (or --live xrobotoolkit / webxr)
    teledex-calibrate-hand --hand linkerhand_l20 --operator alice --live udp --parser keypoints
    # MediaPipe keypoints (.npy) with the grasps at known frames
    teledex-calibrate-hand --hand linkerhand_o6 --operator alice --recording a.npy --grasp-frames pinch=60:84,wrap=90:99

The calibration goes to the user's data folder (<data>/teledex/calibrations/<operator>/<hand>_<side>.yaml, printed;
TELEDEX_CALIBRATIONS_DIR moves it), never into the package. Use it with --teleop.hand_calibration=<operator> (or the
file's path).
"""

import argparse
import sys
import time
from pathlib import Path

from ..geometry.sides import SIDES
from ..operator.calibration_session import CALIBRATION_STEPS, GRASP_STEPS

_POSE_FRACTION = 0.1  # the most-extended tenth of the recording is taken as the calibration pose
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
    parser.add_argument("--grasp-frames", default="", type=grasp_frames,
                        help="where the operator made each grasp in a recording without marked steps: "
                             "pinch=START:STOP,wrap=START:STOP (sample ranges)")
    parser.add_argument("--config", default=None, help="retargeting config YAML (keypoint frames etc.)")
    parser.add_argument("--output", type=Path, default=None, help="the calibration file (default: the data folder)")
    return parser.parse_args(argv)


def _sample_range(text: str) -> slice:
    start, stop = (int(v) for v in text.split(":"))
    return slice(start, stop)


def grasp_frames(text: str) -> dict[str, slice]:
    try:
        ranges = {kind: _sample_range(span) for kind, span in (item.split("=") for item in text.split(",") if item)}
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: give kind=START:STOP pairs, e.g. pinch=600:840,wrap=900:1140") \
            from None
    unknown = sorted(set(ranges) - set(GRASP_STEPS))
    if unknown:
        raise argparse.ArgumentTypeError(f"{', '.join(unknown)}: the grasps recorded are {', '.join(GRASP_STEPS)}")
    return ranges


def pose_frames(keypoints, selection: str, steps: dict | None = None):
    """The calibration-pose frames: the given START:STOP range, else the marked pose step's, else the most extended
    frames."""
    import numpy as np

    from ..operator.keypoints import FINGERTIP_INDICES

    if selection:
        return keypoints[_sample_range(selection)]
    if steps and "pose" in steps:
        return keypoints[steps["pose"]]
    reach = np.linalg.norm(keypoints[:, list(FINGERTIP_INDICES[1:])], axis=-1).sum(axis=1)
    count = max(1, int(_POSE_FRACTION * len(keypoints)))
    return keypoints[np.argsort(reach)[-count:]]


def load_recording(path: Path, side: str):
    """(keypoints (N, 21, 3) wrist frame, canonical angles (M, 20), the marked steps: name -> slice of the keypoints)
    of one hand in a recording; a missing or damaged file is one line (UserError) naming it."""
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
    return keypoints - keypoints[:, :1], np.zeros((0, 20)), {}


def _read_recording(path: Path, side: str):
    """(keypoints, angles, steps) of a session or a glove stream, or the keypoints array of a keypoint stream or
    .npy."""
    import numpy as np

    from ..errors import DataError
    from ..inputs.datagram_file import read_datagrams
    from ..inputs.operator_streams import hand_samples
    from ..operator.stream import OperatorStream

    if path.is_file() and path.stat().st_size == 0:
        raise DataError(f"{path} is empty")
    if path.name.endswith(".jsonl"):
        header, datagrams = read_datagrams(path)
        marks = header.get("steps", [])
        if not marks:
            return (*hand_samples(header["parser"], datagrams, side), {})
        # each marked step's datagrams apart, so that its tracked frames are known
        bounds = [index for _, index in marks] + [len(datagrams)]
        parts = {name: hand_samples(header["parser"], datagrams[start:stop], side)
                 for (name, _), start, stop in zip(marks, bounds, bounds[1:], strict=False)}
        keypoints, angles, steps, start = [], [], {}, 0
        for name, (step_keypoints, step_angles) in parts.items():
            keypoints.append(step_keypoints)
            angles.append(step_angles)
            steps[name] = slice(start, start + len(step_keypoints))
            start += len(step_keypoints)
        return np.concatenate(keypoints), np.concatenate(angles), steps
    if path.suffix == ".npy":
        return np.load(path, allow_pickle=False)
    stream = OperatorStream.load(path)
    if stream.kind != "keypoints":
        return np.zeros((0, 21, 3)), stream.canonical_angles(), {}
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

    packets = record_session(args.live, parser, args.bind, port, path, CALIBRATION_STEPS, prompt, time.sleep)
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
    keypoints, angles, steps = load_recording(recording, args.side)
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
        grasps = args.grasp_frames or {kind: steps[kind] for kind in GRASP_STEPS if kind in steps}
        calibration = calibrate(retargeter.layout, kinematics, retargeter.reference_pose,
                                pose_frames(keypoints, args.pose_frames, steps), keypoints, operator=args.operator,
                                hand=retargeter.hand_name, side=args.side,
                                grasp_keypoints={kind: keypoints[span] for kind, span in grasps.items()})
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
    if calibration.grasp_templates:
        print_grasp_distances(calibration, keypoints, steps or args.grasp_frames, retargeter.config.grasp_anchors)
    elif len(keypoints):
        print(f"  no grasp recorded (its steps: {', '.join(GRASP_STEPS)}; or --grasp-frames): the grasp anchors "
              "stay off for this operator")
    if calibration.joint_ranges_rad:
        print("  the session's reach per joint, stretched onto the joint's range (a joint it barely moved is not; "
              "motion beyond it widens it in use):")
        for joint, low, high, (a, b) in zip(retargeter.joint_names, retargeter.lower, retargeter.upper,
                                            calibration.joint_ranges_rad.values(), strict=True):
            print(f"    {joint:24s} {a:6.2f} .. {b:5.2f} of {low:6.2f} .. {high:5.2f} rad "
                  f"({(b - a) / (high - low):4.0%} covered before)")


def print_grasp_distances(calibration, keypoints, steps: dict, settings) -> None:
    """How far each step's hand shapes are from the operator's own grasps, and where the anchors would fire."""
    import numpy as np

    from ..retargeting.grasp_anchors import fired_shares

    templates = calibration.templates()
    print(f"  the session's hand shapes against the operator's own grasps (RMS mm, scaled hand; anchors fire within "
          f"{settings.far_mm:g} mm, in full within {settings.near_mm:g}):")
    print(f"    {'step':16s}" + "".join(f"{kind + ' p5 / median':>22s}" for kind in templates) + "   fires as")
    for step, span in (steps or {"session": slice(None)}).items():
        frames = keypoints[span]
        if not len(frames):
            continue
        distances, fires = fired_shares(templates, frames, settings.far_mm)
        cells = "".join(f"{np.percentile(column, 5):13.1f} / {np.median(column):5.1f}" for column in distances.T)
        fired = ", ".join(f"{kind} {share:.0%}" for kind, share in fires.items() if share) or "none"
        print(f"    {step:16s}{cells}   {fired}")


def main(argv=None) -> None:
    from .errors import run_command

    run_command("teledex-calibrate-hand", calibrate_hand, parse_args(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    main()
