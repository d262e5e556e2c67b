"""OperatorFrame: one parsed input packet from any device, in the operator frame (x forward, y left, z up; metres,
radians, quaternions xyzw). Parsers build it; the control layer reads only this.
"""

from dataclasses import dataclass, field

import numpy as np



@dataclass
class OperatorFrame:
    received_ns: int  # clock.now_ns when the packet arrived on this machine (freshness, sync)
    # Named poses [x, y, z, qx, qy, qz, qw]: left/right_controller, head, left/right_wrist.
    poses: dict[str, np.ndarray] = field(default_factory=dict)
    # Named analog values: left/right_trigger and left/right_grip in 0..1, left/right_axis_x/y in -1..1.
    analog: dict[str, float] = field(default_factory=dict)
    # Named buttons: A, B, X, Y, left/right_menu, left/right_axis_click.
    buttons: dict[str, bool] = field(default_factory=dict)
    hand_keypoints_m: dict[str, np.ndarray] = field(default_factory=dict)  # side -> (21, 3) MediaPipe, wrist frame
    hand_angles_rad: dict[str, np.ndarray] = field(default_factory=dict)  # side -> (20,) canonical angles
    joint_positions: dict[str, float] = field(default_factory=dict)  # a leader arm: joint name -> rad
    sender_time_ns: int | None = None  # the sender's own timestamp, if it sends one (another clock)

    def check_finite(self) -> "OperatorFrame":
        """Raise ValueError naming the first NaN/inf value (a packet with one is rejected whole)."""
        groups = {"poses": self.poses, "analog": self.analog, "hand_keypoints_m": self.hand_keypoints_m,
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
        """Whether every trigger reads below `threshold`."""
        return all(value < threshold for name, value in self.analog.items() if name.endswith("_trigger"))
