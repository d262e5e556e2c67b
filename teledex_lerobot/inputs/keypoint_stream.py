"""Generic keypoint stream datagrams <-> OperatorFrame: any hand tracker (MediaPipe, a mocap glove, a headset).

One datagram: {"timestamp_ns": int (optional, sender clock),
               "hands": {"right": {"keypoints_m": [[x, y, z] x 21], "wrist_pose": [x, y, z, qx, qy, qz, qw],
                                   "frame": "wrist" | "operator"}},
               "analog": {"right_clutch": 1.0, ...} (optional)}
Keypoints are MediaPipe-21 in metres, either already in the wrist frame (default) or in the operator frame (then
re-expressed in the wrist frame estimated from them). The wrist pose is in the operator frame (x forward, y left,
z up) and becomes the "<side>_wrist" pose.
"""

import json

import numpy as np

from ..geometry.sides import check_side
from ..operator.hand_model import keypoints_in_wrist_frame
from ..operator.keypoints import validate_keypoints
from .frame import OperatorFrame, sender_timestamp_ns


def parse_keypoints(data: bytes, received_ns: int) -> OperatorFrame:
    message = json.loads(data)
    frame = OperatorFrame(received_ns=received_ns, sender_time_ns=sender_timestamp_ns(message.get("timestamp_ns")))
    for side, hand in message["hands"].items():
        check_side(side, "hands key")
        keypoints = np.asarray(hand["keypoints_m"], dtype=float)
        validate_keypoints(keypoints)
        if keypoints.ndim != 2:
            raise ValueError("one hand's keypoints must have shape (21, 3)")
        if hand.get("frame", "wrist") == "operator":
            keypoints = keypoints_in_wrist_frame(keypoints, side)
        frame.hand_keypoints_m[side] = keypoints
        if "wrist_pose" in hand:
            frame.poses[f"{side}_wrist"] = np.asarray(hand["wrist_pose"], dtype=float)
    frame.analog = {str(k): float(v) for k, v in (message.get("analog") or {}).items()}
    return frame.check_finite()


def encode_keypoints(side: str, keypoints_m: np.ndarray, wrist_pose: np.ndarray, timestamp_ns: int | None = None,
                     analog: dict | None = None) -> bytes:
    hand = {"keypoints_m": np.round(np.asarray(keypoints_m, float), 6).tolist(),
            "wrist_pose": np.round(np.asarray(wrist_pose, float), 6).tolist(), "frame": "wrist"}
    message: dict[str, object] = {} if timestamp_ns is None else {"timestamp_ns": int(timestamp_ns)}
    message["hands"] = {side: hand}
    if analog:
        message["analog"] = analog
    return json.dumps(message, separators=(",", ":")).encode()
