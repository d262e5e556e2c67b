"""XR state JSON (XRoboToolkit / Pico, notes §5.2) <-> OperatorFrame.

The same schema is the open protocol for any headset (Quest, WebXR pages): one state object per UDP datagram,
WebSocket message or local-socket datagram. Accepted forms: the state object itself, or the PC service's wrapper
{"functionName": "Tracking", "value": "<state JSON string>"}.

- Poses are "x,y,z,qx,qy,qz,qw" strings in the XR frame (OpenXR: x right, y up, z backward; metres). They are
  turned into the operator frame (x forward, y left, z up) by R = [[0,0,-1],[-1,0,0],[0,1,0]], as XRoboToolkit's
  teleop samples do: p' = R p, rotation R' = R Rot R^T.
- Controllers: trigger, grip, axisX/Y, axisClick, primaryButton / secondaryButton (A/B on the right, X/Y on the left),
  menuButton.
- Hands: "HandJointLocations" with 26 OpenXR joints (0 palm, 1 wrist, ...) or 25 WebXR joints (wrist first, no
  palm); only hands with isActive != 0 count. They become MediaPipe-21 keypoints in the wrist frame plus a
  "<side>_wrist" pose (wrist position, wrist frame axes estimated from the keypoints).
"""

import json

import numpy as np

from ..geometry.rotations import matrix_to_quat, quat_to_matrix
from ..operator.hand_model import keypoints_in_wrist_frame, wrist_frame_rotation
from ..operator.keypoints import OPENXR26_INDEX_FOR_MEDIAPIPE21
from .frame import OperatorFrame

OPERATOR_FROM_XR = np.array([[0.0, 0.0, -1.0], [-1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
_SIDES = {"left": "leftHand", "right": "rightHand"}
_BUTTONS = {"left": ("X", "Y"), "right": ("A", "B")}  # primaryButton, secondaryButton


def _floats(text: str, count: int) -> np.ndarray:
    values = np.array([float(v) for v in str(text).split(",")])
    if values.shape != (count,):
        raise ValueError(f"expected {count} comma-separated numbers, got {len(values)}")
    return values


def _pose_to_operator(pose_xr: np.ndarray) -> np.ndarray:
    if not np.all(np.isfinite(pose_xr)) or abs(np.linalg.norm(pose_xr[3:]) - 1.0) > 1e-2:
        raise ValueError(f"pose {pose_xr} is not finite with a unit quaternion")
    rotation = OPERATOR_FROM_XR @ quat_to_matrix(pose_xr[3:]) @ OPERATOR_FROM_XR.T
    return np.concatenate([OPERATOR_FROM_XR @ pose_xr[:3], matrix_to_quat(rotation)])


def _pose_to_xr(pose_operator: np.ndarray) -> np.ndarray:
    rotation = OPERATOR_FROM_XR.T @ quat_to_matrix(pose_operator[3:]) @ OPERATOR_FROM_XR
    return np.concatenate([OPERATOR_FROM_XR.T @ pose_operator[:3], matrix_to_quat(rotation)])


def _text(values) -> str:
    return ",".join(f"{v:.6f}" for v in values)


def parse_xr_state(data: bytes, received_ns: int) -> OperatorFrame:
    """One datagram -> frame; raises ValueError (or a JSON/Key/Type error) on anything malformed."""
    state = json.loads(data)
    if isinstance(state.get("value"), str):
        state = json.loads(state["value"])
    frame = OperatorFrame(received_ns=received_ns, sender_time_ns=state.get("timeStampNs"))
    head = state.get("Head")
    if head and "pose" in head:
        frame.poses["head"] = _pose_to_operator(_floats(head["pose"], 7))
    for side, controller in (state.get("Controller") or {}).items():
        if side not in _SIDES or not controller:
            continue
        if "pose" in controller:
            frame.poses[f"{side}_controller"] = _pose_to_operator(_floats(controller["pose"], 7))
        for key, name in (("trigger", "trigger"), ("grip", "grip"), ("axisX", "axis_x"), ("axisY", "axis_y")):
            if key in controller:
                frame.analog[f"{side}_{name}"] = float(controller[key])
        primary, secondary = _BUTTONS[side]
        for key, name in (("primaryButton", primary), ("secondaryButton", secondary),
                          ("menuButton", f"{side}_menu"), ("axisClick", f"{side}_axis_click")):
            if key in controller:
                frame.buttons[name] = bool(controller[key])
    for side, key in _SIDES.items():
        hand = (state.get("Hand") or {}).get(key)
        if hand and int(hand.get("isActive", 0)):
            _add_hand(frame, side, [_floats(joint["p"], 7)[:3] for joint in hand["HandJointLocations"]])
    return frame.check_finite()


def _add_hand(frame: OperatorFrame, side: str, positions_xr: list[np.ndarray]) -> None:
    joints = np.array(positions_xr)
    if len(joints) == 25:  # WebXR: no palm joint; give it the wrist's place so OpenXR indices apply
        joints = np.vstack([joints[:1], joints])
    if joints.shape != (26, 3):
        raise ValueError(f"{side} hand: expected 26 (OpenXR) or 25 (WebXR) joints, got {len(positions_xr)}")
    keypoints = joints[OPENXR26_INDEX_FOR_MEDIAPIPE21] @ OPERATOR_FROM_XR.T
    if not np.all(np.isfinite(keypoints)):
        raise ValueError(f"non-finite {side} hand joint")
    frame.hand_keypoints_m[side] = keypoints_in_wrist_frame(keypoints, side)
    wrist_quat = matrix_to_quat(wrist_frame_rotation(keypoints, side))
    frame.poses[f"{side}_wrist"] = np.concatenate([keypoints[0], wrist_quat])


def openxr26_from_mediapipe21(keypoints: np.ndarray) -> np.ndarray:
    """26 OpenXR joint positions from 21 MediaPipe keypoints (same frame): the palm halfway from the wrist to the
    middle MCP, each finger metacarpal a quarter of the way from the wrist to its MCP (neither is read back)."""
    keypoints = np.asarray(keypoints, dtype=float)
    joints = np.zeros((26, 3))
    joints[OPENXR26_INDEX_FOR_MEDIAPIPE21] = keypoints
    joints[0] = (keypoints[0] + keypoints[9]) / 2
    for metacarpal, mcp in ((6, 5), (11, 9), (16, 13), (21, 17)):
        joints[metacarpal] = keypoints[0] + 0.25 * (keypoints[mcp] - keypoints[0])
    return joints


def encode_xr_state(*, timestamp_ns: int = 0, head: np.ndarray | None = None, controllers: dict | None = None,
                    hands_m: dict | None = None, webxr_hands: bool = False) -> bytes:
    """An XR state datagram from operator-frame data (fixtures, tests, simulated headsets).

    controllers: side -> {"pose": [7], "trigger", "grip", "axis_x", "axis_y", "primary", "secondary", "menu"};
    hands_m: side -> (21, 3) MediaPipe keypoints in the operator frame (world, not wrist frame).
    """
    state = {"predictTime": 0.0, "appState": {"focus": True}, "timeStampNs": int(timestamp_ns), "Input": 0,
             "Controller": {}, "Hand": {}}
    if head is not None:
        state["Head"] = {"pose": _text(_pose_to_xr(np.asarray(head, float))), "status": 3}
    for side, c in (controllers or {}).items():
        state["Controller"][side] = {
            "pose": _text(_pose_to_xr(np.asarray(c["pose"], float))), "trigger": float(c.get("trigger", 0.0)),
            "grip": float(c.get("grip", 0.0)), "axisX": float(c.get("axis_x", 0.0)),
            "axisY": float(c.get("axis_y", 0.0)), "axisClick": False, "primaryButton": bool(c.get("primary")),
            "secondaryButton": bool(c.get("secondary")), "menuButton": bool(c.get("menu"))}
    for side, keypoints in (hands_m or {}).items():
        joints = openxr26_from_mediapipe21(np.asarray(keypoints, float) @ OPERATOR_FROM_XR)
        if webxr_hands:
            joints = joints[1:]
        state["Hand"][_SIDES[side]] = {"isActive": 1, "count": len(joints), "scale": 1.0, "HandJointLocations": [
            {"p": _text(np.r_[p, 0.0, 0.0, 0.0, 1.0]), "s": 15, "r": 0.01} for p in joints]}
    return json.dumps(state, separators=(",", ":")).encode()
