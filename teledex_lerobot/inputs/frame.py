"""OperatorFrame: one parsed input packet from any device, in the operator frame (x forward, y left, z up; metres,
radians, quaternions xyzw). Parsers build it; the control layer reads only this.

Validity is per device: a device that is present but unusable this frame (a controller switched off, a hand whose
palm is not tracked, a value out of range) is left out of poses / analog / buttons / hands and named in
`invalid_devices`; the other devices of the packet are used as usual.
"""

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

# OpenXR XrSpaceLocationFlags, as Pico's HandJointLocations "s" and our WebXR page send them per joint.
ORIENTATION_VALID, POSITION_VALID, ORIENTATION_TRACKED, POSITION_TRACKED = 0x1, 0x2, 0x4, 0x8


@dataclass
class OperatorFrame:
    received_ns: int  # clock.now_ns when the packet arrived on this machine (freshness)
    # Named poses [x, y, z, qx, qy, qz, qw]: left/right_controller, head, left/right_wrist.
    poses: dict[str, np.ndarray] = field(default_factory=dict)
    # Named analog values: left/right_trigger and left/right_grip in 0..1, left/right_axis_x/y in -1..1.
    analog: dict[str, float] = field(default_factory=dict)
    # Named buttons: A, B, X, Y, left/right_menu, left/right_axis_click.
    buttons: dict[str, bool] = field(default_factory=dict)
    hand_keypoints_m: dict[str, np.ndarray] = field(default_factory=dict)  # side -> (21, 3) MediaPipe, wrist frame
    hand_angles_rad: dict[str, np.ndarray] = field(default_factory=dict)  # side -> (20,) canonical angles
    joint_positions: dict[str, float] = field(default_factory=dict)  # a leader arm: joint name -> rad
    sender_time_ns: int | None = None  # the sender's own timestamp, if it sends one (the sender's clock)
    # When the sender captured this sample, on this machine's clock: its timestamp plus the estimated clock offset
    # (inputs.clock_sync); the arrival time when the sender sends none. Never later than received_ns.
    capture_ns: int | None = None
    # Devices present in the packet but not used this frame -> why ("left_controller": "inactive (all-zero pose)").
    invalid_devices: dict[str, str] = field(default_factory=dict)
    # Fields dropped because their value is out of range or of the wrong type, "<device>.<field>: <problem>", e.g.
    # "right_controller.trigger: 5.0 outside 0..1". A dropped field is absent from the frame, as if not sent.
    bad_fields: list[str] = field(default_factory=list)
    # Hand tracking quality per side: False = low (Pico isActive=0: tracked, less accurate), True = high.
    hand_high_quality: dict[str, bool] = field(default_factory=dict)
    # Per keypoint of hand_keypoints_m (side -> (21,) uint8): the OpenXR location flags above. A keypoint without
    # POSITION_VALID is not tracked this frame (its position is a guess); POSITION_TRACKED = measured, not inferred.
    hand_keypoint_flags: dict[str, np.ndarray] = field(default_factory=dict)
    # Which sender it came from (InputReceiver.sender_id): when it changes, the arm re-anchors to the new one.
    sender_id: int = 0

    def __post_init__(self):
        if self.capture_ns is None:
            self.capture_ns = self.received_ns

    def hand_keypoints_valid(self, side: str) -> np.ndarray:
        """(21,) bool: which keypoints of that hand have a valid position (all, if the source sends no flags)."""
        flags = self.hand_keypoint_flags.get(side)
        if flags is None:
            return np.ones(21, dtype=bool)
        return (flags & POSITION_VALID) != 0

    def check_finite(self) -> "OperatorFrame":
        """Raise ValueError naming the first NaN/inf value (a packet with one is rejected whole)."""
        groups: dict[str, Mapping[str, np.ndarray | float]] = {
            "poses": self.poses, "analog": self.analog, "hand_keypoints_m": self.hand_keypoints_m,
            "hand_angles_rad": self.hand_angles_rad, "joint_positions": self.joint_positions}
        for group, values in groups.items():
            for name, value in values.items():
                if not np.all(np.isfinite(value)):
                    raise ValueError(f"non-finite value in {group}[{name!r}]")
        for name, pose in self.poses.items():
            if np.shape(pose) != (7,) or abs(np.linalg.norm(pose[3:]) - 1.0) > 1e-2:
                raise ValueError(f"pose {name!r} must be [x, y, z, qx, qy, qz, qw] with a unit quaternion")
        return self

    def triggers_released(self, threshold: float) -> bool:
        """Whether every trigger reads below `threshold`; a trigger whose value was dropped as bad is not known to be
        released."""
        if any(bad.split(":", 1)[0].endswith(".trigger") for bad in self.bad_fields):
            return False
        return all(value < threshold for name, value in self.analog.items() if name.endswith("_trigger"))


# Timestamps are stored as int64 nanoseconds (both formats): anything beyond cannot be a clock reading.
MAX_TIMESTAMP_NS = 2**63 - 1


def sender_timestamp_ns(value, field: str = "timestamp_ns") -> int | None:
    """A sender's timestamp field as integer ns (None if absent); ValueError naming the field if it is not one."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or not \
            0 <= value < MAX_TIMESTAMP_NS:
        raise ValueError(f"{field} must be nanoseconds on the sender's clock, 0 to {MAX_TIMESTAMP_NS} (int64), got "
                         f"{value!r}")
    return int(value)
