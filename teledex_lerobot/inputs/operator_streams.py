"""Operator streams (.npz, processed samples: hand keypoints or glove angles + wrist pose) -> the datagrams their
device would have sent, so a stream replays through the same parser and control chain as a live device.

Keypoint streams become keypoint-stream packets (keypoints, wrist pose, the sample's time); glove streams become
UdexReal HandDriver packets (the glove sends no wrist pose, so the arm is not driven by a glove replay).
"""

from ..operator.glove import glove_to_canonical
from ..operator.stream import OperatorStream
from .keypoint_stream import encode_keypoints
from .udexreal_glove import encode_udexreal

# The parser, and the control config the live device uses, for each stream kind.
STREAM_DEVICES = {"keypoints": ("keypoints", "keypoints_hybrid"), "glove_angles": ("udexreal", "glove_direct")}


def stream_datagrams(stream: OperatorStream) -> tuple[str, str, list[tuple[int, bytes]]]:
    """(parser, control config, [(t_ns, datagram), ...]) for a stream, one datagram per sample."""
    parser, control = STREAM_DEVICES[stream.kind]
    times = [int(t) for t in stream.timestamps_ns]
    if stream.kind == "keypoints":
        datagrams = [encode_keypoints(stream.side, keypoints, pose, t)
                     for keypoints, pose, t in zip(stream.hand_keypoints_m, stream.wrist_pose, times, strict=True)]
    else:
        angles = glove_to_canonical(stream.glove_angles_deg, stream.side)
        datagrams = [encode_udexreal({stream.side: sample}) for sample in angles]
    return parser, control, list(zip(times, datagrams, strict=True))
