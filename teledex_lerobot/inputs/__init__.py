"""Input devices: parsers (packet bytes -> OperatorFrame), transports (UDP, local socket, the XRoboToolkit headset
app's TCP stream, our WebXR page over HTTPS + WSS), recorded datagram files and their replay. Parsers by name: see
PARSERS; sources by name: source_kinds."""

from .frame import OperatorFrame
from .joint_stream import encode_joints, parse_joints
from .keypoint_stream import encode_keypoints, parse_keypoints
from .receiver import InputReceiver
from .udexreal_glove import encode_udexreal, parse_udexreal
from .xr_state import encode_xr_state, parse_xr_state

PARSERS = {"xr_state": parse_xr_state, "udexreal": parse_udexreal, "keypoints": parse_keypoints,
           "joints": parse_joints}

__all__ = ["PARSERS", "InputReceiver", "OperatorFrame", "encode_joints", "encode_keypoints", "encode_udexreal",
           "encode_xr_state", "parse_joints", "parse_keypoints", "parse_udexreal", "parse_xr_state"]
