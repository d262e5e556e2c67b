"""XR state JSON (XRoboToolkit / Pico, as the headset app's TrackingData.cs builds it) <-> OperatorFrame.

The same schema is the open protocol of our WebXR page (inputs/webxr_page). Accepted forms: the state object itself,
or the app's wrapper {"functionName": "Tracking", "value": "<state JSON string>"}.

- Poses are "x,y,z,qx,qy,qz,qw" strings in the XR frame (OpenXR: x right, y up, z backward; metres). They are
  turned into the operator frame (x forward, y left, z up) by R = [[0,0,-1],[-1,0,0],[0,1,0]], as XRoboToolkit's
  teleop samples do: p' = R p, rotation R' = R Rot R^T.
- Controllers: trigger, grip (0..1), axisX/Y (-1..1), axisClick, primaryButton / secondaryButton (A/B on the right,
  X/Y on the left), menuButton (JSON booleans).
- Hands: "HandJointLocations" with 26 OpenXR joints (0 palm, 1 wrist, ...) or 25 WebXR joints (wrist first, no
  palm), each {"p": pose, "s": OpenXR location flags, "r": radius}. They become MediaPipe-21 keypoints in the wrist
  frame plus a "<side>_wrist" pose (wrist position, wrist frame axes estimated from the keypoints), with the flags
  of each keypoint. isActive is Pico's tracking quality (0 low, 1 high), not presence.
- timeStampNs: the sender's clock (ns), kept as sender_time_ns.

Validity is per device (frame.py): an all-zero pose is a device that is off or not tracked; a value of the wrong
type or out of range is a bad field, dropped and counted; `appState.focus` false (the headset shows its system UI)
invalidates every controller and hand, since the operator is not aiming at the robot. A hand is used only when all
21 keypoints have a valid position (inferred ones included, flagged as such): the control chain does not yet skip
single keypoints, and one missing fingertip must not bend a robot finger to a pose nobody made.
"""

import json
import math

import numpy as np

from ..geometry.rotations import matrix_to_quat, quat_to_matrix
from ..operator.hand_model import keypoints_in_wrist_frame, wrist_frame_rotation
from ..operator.keypoints import OPENXR26_INDEX_FOR_MEDIAPIPE21
from .frame import (
    ORIENTATION_TRACKED,
    ORIENTATION_VALID,
    POSITION_TRACKED,
    POSITION_VALID,
    OperatorFrame,
    sender_timestamp_ns,
)

OPERATOR_FROM_XR = np.array([[0.0, 0.0, -1.0], [-1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
_SIDES = {"left": "leftHand", "right": "rightHand"}
_BUTTONS = {"left": ("X", "Y"), "right": ("A", "B")}  # primaryButton, secondaryButton
_ANALOG = (("trigger", "trigger", 0.0), ("grip", "grip", 0.0), ("axisX", "axis_x", -1.0), ("axisY", "axis_y", -1.0))
_ANALOG_TOLERANCE = 1e-3  # float noise around the ends of a range is clipped, anything further is a bad field
ALL_FLAGS = ORIENTATION_VALID | POSITION_VALID | ORIENTATION_TRACKED | POSITION_TRACKED


class _BadField(ValueError):
    pass


def _floats(text, count: int) -> np.ndarray:
    if not isinstance(text, str):
        raise _BadField(f"expected a string of {count} comma-separated numbers, got {type(text).__name__}")
    try:
        values = np.array([float(v) for v in text.split(",")])
    except ValueError:
        raise _BadField(f"expected {count} comma-separated numbers, got {text[:60]!r}") from None
    if values.shape != (count,):
        raise _BadField(f"expected {count} comma-separated numbers, got {len(values)}")
    if not np.all(np.isfinite(values)):
        raise _BadField(f"non-finite number in {text[:60]!r}")
    return values


def _pose_xr(text) -> np.ndarray | None:
    """The pose in the XR frame; None for an all-zero pose (device off / not tracked); _BadField if malformed."""
    pose = _floats(text, 7)
    if not np.any(pose[:3]):  # a tracked device is never exactly at the origin; an absent one is reported there
        return None
    if abs(np.linalg.norm(pose[3:]) - 1.0) > 1e-2:
        raise _BadField(f"quaternion norm {np.linalg.norm(pose[3:]):.3f}, expected 1")
    return pose


def _pose_to_operator(pose_xr: np.ndarray) -> np.ndarray:
    rotation = OPERATOR_FROM_XR @ quat_to_matrix(pose_xr[3:]) @ OPERATOR_FROM_XR.T
    return np.concatenate([OPERATOR_FROM_XR @ pose_xr[:3], matrix_to_quat(rotation)])


def _pose_to_xr(pose_operator: np.ndarray) -> np.ndarray:
    rotation = OPERATOR_FROM_XR.T @ quat_to_matrix(pose_operator[3:]) @ OPERATOR_FROM_XR
    return np.concatenate([OPERATOR_FROM_XR.T @ pose_operator[:3], matrix_to_quat(rotation)])


def _text(values) -> str:
    return ",".join(f"{v:.6f}" for v in values)


def _number(value) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise _BadField(f"expected a number, got {value!r}")
    return float(value)


def _bad(frame: OperatorFrame, field: str, problem) -> None:
    frame.bad_fields.append(f"{field}: {problem}")


def parse_xr_state(data: bytes, received_ns: int) -> OperatorFrame:
    """One state -> frame. Raises ValueError (or a JSON error) only when the packet as a whole is unreadable; a
    device or field that is wrong is left out and recorded in the frame (invalid_devices, bad_fields)."""
    state = json.loads(data)
    if isinstance(state, dict) and "functionName" in state:
        if not isinstance(state.get("value"), str):
            raise ValueError("the Tracking wrapper's value must be the state JSON as a string")
        state = json.loads(state["value"])
    if not isinstance(state, dict):
        raise ValueError(f"expected the XR state JSON object, got {type(state).__name__}")
    frame = OperatorFrame(received_ns=received_ns)
    try:
        frame.sender_time_ns = sender_timestamp_ns(state.get("timeStampNs"), "timeStampNs")
    except ValueError as problem:
        frame.bad_fields.append(str(problem))
    head = state.get("Head")
    if isinstance(head, dict) and "pose" in head:
        _add_pose(frame, "head", head["pose"])
    groups = {}
    for name in ("Controller", "Hand"):
        groups[name] = state.get(name) or {}
        if not isinstance(groups[name], dict):
            _bad(frame, name, f"expected an object, got {type(groups[name]).__name__}")
            groups[name] = {}
    app_state = state.get("appState")
    focused = not (isinstance(app_state, dict) and app_state.get("focus") is False)
    for side, hand_key in _SIDES.items():
        controller, hand = groups["Controller"].get(side), groups["Hand"].get(hand_key)
        if not focused:
            for device, present in ((f"{side}_controller", controller), (f"{side}_hand", hand)):
                if present:
                    frame.invalid_devices[device] = "headset app not in focus"
            continue
        if controller:
            _add_controller(frame, side, controller)
        if hand:
            _add_hand(frame, side, hand)
    return frame.check_finite()


def _add_pose(frame: OperatorFrame, device: str, text) -> None:
    try:
        pose = _pose_xr(text)
    except _BadField as problem:
        _bad(frame, f"{device}.pose", problem)
        frame.invalid_devices[device] = f"bad pose ({problem})"
        return
    if pose is None:
        frame.invalid_devices[device] = "inactive (all-zero pose)"
    else:
        frame.poses[device] = _pose_to_operator(pose)


def _add_controller(frame: OperatorFrame, side: str, controller) -> None:
    device = f"{side}_controller"
    if not isinstance(controller, dict):
        _bad(frame, device, f"expected an object, got {type(controller).__name__}")
        return
    if "pose" in controller:
        _add_pose(frame, device, controller["pose"])
    for key, name, low in _ANALOG:
        if key not in controller:
            continue
        try:
            value = _number(controller[key])
            if not low - _ANALOG_TOLERANCE <= value <= 1.0 + _ANALOG_TOLERANCE:
                raise _BadField(f"{value!r} outside {low:g}..1")
        except _BadField as problem:
            _bad(frame, f"{device}.{key}", problem)
            continue
        frame.analog[f"{side}_{name}"] = min(max(value, low), 1.0)
    primary, secondary = _BUTTONS[side]
    for key, name in (("primaryButton", primary), ("secondaryButton", secondary), ("menuButton", f"{side}_menu"),
                      ("axisClick", f"{side}_axis_click")):
        if key not in controller:
            continue
        if isinstance(controller[key], bool):
            frame.buttons[name] = controller[key]
        else:
            _bad(frame, f"{device}.{key}", f"expected true or false, got {controller[key]!r}")


def _add_hand(frame: OperatorFrame, side: str, hand) -> None:
    device = f"{side}_hand"
    try:
        if not isinstance(hand, dict):
            raise _BadField(f"expected an object, got {type(hand).__name__}")
        quality = hand.get("isActive", 1)
        if isinstance(quality, bool) or quality not in (0, 1):
            raise _BadField(f"isActive must be 0 (low quality) or 1 (high), got {quality!r}")
        locations = hand.get("HandJointLocations")
        if not isinstance(locations, list) or len(locations) not in (25, 26):
            count = len(locations) if isinstance(locations, list) else type(locations).__name__
            raise _BadField(f"expected 26 (OpenXR) or 25 (WebXR) HandJointLocations, got {count}")
        joints: np.ndarray = np.zeros((len(locations), 3))
        flags = np.zeros(len(locations), dtype=np.uint8)
        for i, location in enumerate(locations):
            if not isinstance(location, dict):
                raise _BadField(f"joint {i}: expected an object")
            joints[i] = _floats(location.get("p"), 7)[:3]
            status = location.get("s", ALL_FLAGS)
            # by value, not JSON type: the XRoboToolkit app's LitJson writes this C# ulong as a double ("s":15.0)
            if isinstance(status, bool) or not isinstance(status, int | float) or not float(status).is_integer() \
                    or status < 0:
                raise _BadField(f"joint {i}: location flags s must be a whole number >= 0, got {status!r}")
            flags[i] = int(status) & ALL_FLAGS
    except _BadField as problem:
        _bad(frame, device, problem)
        frame.invalid_devices[device] = f"bad hand ({problem})"
        return
    if len(joints) == 25:  # WebXR: no palm joint; give it the wrist's place so OpenXR indices apply
        joints, flags = np.vstack([joints[:1], joints]), np.r_[flags[:1], flags]
    keypoint_flags = flags[OPENXR26_INDEX_FOR_MEDIAPIPE21]
    missing = int(np.sum((keypoint_flags & POSITION_VALID) == 0))
    if missing:
        frame.invalid_devices[device] = f"{missing} of 21 keypoints not tracked"
        return
    keypoints = joints[OPENXR26_INDEX_FOR_MEDIAPIPE21] @ OPERATOR_FROM_XR.T
    frame.hand_keypoints_m[side] = keypoints_in_wrist_frame(keypoints, side)
    frame.hand_keypoint_flags[side] = keypoint_flags
    frame.hand_high_quality[side] = quality == 1
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


def encode_xr_state(*, timestamp_ns: int | None = None, head: np.ndarray | None = None,
                    controllers: dict | None = None, hands_m: dict | None = None, webxr_hands: bool = False) -> bytes:
    """An XR state datagram from operator-frame data (fixtures, tests, simulated headsets). Without `timestamp_ns`
    the state carries no sender clock (a constant stamp would read as a sender whose clock stopped).

    controllers: side -> {"pose": [7], "trigger", "grip", "axis_x", "axis_y", "axis_click", "primary", "secondary",
    "menu"};
    hands_m: side -> (21, 3) MediaPipe keypoints in the operator frame (world, not wrist frame).
    """
    controller_states: dict[str, dict] = {}
    hand_states: dict[str, dict] = {}
    state = {"predictTime": 0.0, "appState": {"focus": True},
             **({} if timestamp_ns is None else {"timeStampNs": int(timestamp_ns)}), "Input": 0,
             "Controller": controller_states, "Hand": hand_states}
    if head is not None:
        state["Head"] = {"pose": _text(_pose_to_xr(np.asarray(head, float))), "status": 3}
    for side, c in (controllers or {}).items():
        controller_states[side] = {
            "pose": _text(_pose_to_xr(np.asarray(c["pose"], float))), "trigger": float(c.get("trigger", 0.0)),
            "grip": float(c.get("grip", 0.0)), "axisX": float(c.get("axis_x", 0.0)),
            "axisY": float(c.get("axis_y", 0.0)), "axisClick": bool(c.get("axis_click")),
            "primaryButton": bool(c.get("primary")),
            "secondaryButton": bool(c.get("secondary")), "menuButton": bool(c.get("menu"))}
    for side, keypoints in (hands_m or {}).items():
        joints = openxr26_from_mediapipe21(np.asarray(keypoints, float) @ OPERATOR_FROM_XR)
        if webxr_hands:
            joints = joints[1:]
        hand_states[_SIDES[side]] = {"isActive": 1, "count": len(joints), "scale": 1.0, "HandJointLocations": [
            {"p": _text(np.r_[p, 0.0, 0.0, 0.0, 1.0]), "s": float(ALL_FLAGS), "r": 0.01} for p in joints]}
    return json.dumps(state, separators=(",", ":")).encode()
