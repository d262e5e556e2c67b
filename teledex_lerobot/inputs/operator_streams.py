"""Operator streams (.npz, processed samples: hand keypoints or glove angles + wrist pose) <-> the datagrams their
device sends, so a stream replays through the same parser and control chain as a live device, and a recorded
session gives back the operator's hand samples (for calibration).

Keypoint streams become keypoint-stream packets (keypoints, wrist pose, the sample's time); glove streams become
UdexReal HandDriver packets (the glove sends no wrist pose, so the arm is not driven by a glove replay).
"""

import numpy as np

from ..operator.glove import glove_to_canonical
from ..operator.keypoints import NUM_CANONICAL_ANGLES
from ..operator.stream import OperatorStream
from . import PARSERS
from .keypoint_stream import encode_keypoints
from .udexreal_glove import encode_udexreal

# The parser, and the control config the live device uses, for each stream kind.
STREAM_DEVICES = {"keypoints": ("keypoints", "keypoints_hybrid"), "glove_angles": ("udexreal", "glove_direct")}


def stream_datagrams(stream: OperatorStream) -> tuple[str, str, list[tuple[int, bytes]]]:
    """(parser, control config, [(t_ns, datagram), ...]) for a stream, one datagram per sample."""
    parser, control = STREAM_DEVICES[stream.kind]
    times = [int(t) for t in stream.timestamps_ns]
    if stream.kind == "keypoints":
        assert stream.hand_keypoints_m is not None  # a stream holds its kind's data (checked when made)
        datagrams = [encode_keypoints(stream.side, keypoints, pose, t)
                     for keypoints, pose, t in zip(stream.hand_keypoints_m, stream.wrist_pose, times, strict=True)]
    else:
        angles = glove_to_canonical(stream.glove_angles_deg, stream.side)
        datagrams = [encode_udexreal({stream.side: sample}) for sample in angles]
    return parser, control, list(zip(times, datagrams, strict=True))


def hand_samples(parser: str, datagrams: list[tuple[int, bytes]], side: str) -> tuple[np.ndarray, np.ndarray]:
    """One hand's samples in a recorded session, through the device's own parser: (keypoints (N, 21, 3) in the wrist
    frame, from frames where every keypoint was tracked; canonical angles (M, 20), from devices that measure angles,
    e.g. gloves). Packets the parser refuses are skipped, as they are live."""
    parse = PARSERS[parser]
    keypoints, angles = [], []
    for t_ns, data in datagrams:
        try:
            frame = parse(data, t_ns)
        except Exception:  # noqa: BLE001 - a bad packet of any kind is skipped, as live
            continue
        if side in frame.hand_keypoints_m and frame.hand_keypoints_valid(side).all():
            keypoints.append(frame.hand_keypoints_m[side])
        if side in frame.hand_angles_rad:
            angles.append(frame.hand_angles_rad[side])
    return np.reshape(keypoints, (-1, 21, 3)), np.reshape(angles, (-1, NUM_CANONICAL_ANGLES))
