"""A sync-validation wrapper around any LeRobot Robot, ours or LeRobot's, that leaves the robot unchanged.

get_observation() returns exactly what the robot returns; alongside, the wrapper collects every source's capture
timestamp for that observation, and validate() turns them, plus the input device's, into a SyncPacket. Times are
taken on the robot's clock (a lockstep world's) where it has one, else on the machine's monotonic clock.

Where the timestamps come from:
- joints: a robot with capture_timestamps_ns() (TimestampedRobot: TeleDex robots) gives its devices' own message
  times, one source per part; any other robot is one source, stamped at the middle of the get_observation() call;
- cameras: `capture_ns` (CapturedCamera: TeleDex cameras) or the capture time LeRobot camera threads keep in
  `latest_timestamp` (time.perf_counter seconds, converted here to the monotonic clock);
- a camera's depth stream (<camera>_depth, a source of its own): `depth_capture_ns` where the camera knows when
  its depth was captured (teledex_realsense, from the device's frame timestamps), else the colour's time (a rendered
  world camera draws both at one instant; LeRobot's RealSense stamps a frameset once).
"""

from typing import Any

from teledex_lerobot.capabilities import (
    CapturedCamera,
    FaultReportingRobot,
    JudgedRobot,
    LockstepRobot,
    TimestampedRobot,
    WorldEpisodes,
)
from teledex_lerobot.clock import MONOTONIC, Clock, Clocked, from_perf_counter
from teledex_lerobot.sync import SyncPacket, SyncPolicy, validate_timestamps

from .depth_streams import depth_key, reads_depth

ROBOT_SOURCE = "robot"


class SyncValidatedRobot:
    """Everything else is the robot's own (attribute access falls through); the capabilities the recording loop asks
    about (teledex_lerobot/capabilities.py) are answered here for any robot, neutrally where the robot lacks them,
    because protocol checks look at the wrapper's class, not through it."""

    def __init__(self, robot, policy: SyncPolicy | None = None):
        self.robot = robot
        self.policy = policy or SyncPolicy()
        self.last_timestamps_ns: dict[str, int | None] = {}

    @property
    def clock(self) -> Clock:
        return self.robot.clock if isinstance(self.robot, Clocked) else MONOTONIC

    @property
    def lockstep(self) -> bool:
        return isinstance(self.robot, LockstepRobot) and self.robot.lockstep

    def advance(self, duration_ns: int) -> None:
        self.robot.advance(duration_ns)

    @property
    def judges_episodes(self) -> bool:
        return isinstance(self.robot, JudgedRobot) and self.robot.judges_episodes

    def episode_outcome(self) -> dict | None:
        return self.robot.episode_outcome() if isinstance(self.robot, JudgedRobot) else None

    def world_episode(self) -> dict | None:
        return self.robot.world_episode() if isinstance(self.robot, WorldEpisodes) else None

    @property
    def fault_lookback_ns(self) -> int:
        return self.robot.fault_lookback_ns if isinstance(self.robot, FaultReportingRobot) else 0

    def device_faults(self) -> dict[str, str]:
        return self.robot.device_faults() if isinstance(self.robot, FaultReportingRobot) else {}

    def active_faults(self) -> dict:
        return self.robot.active_faults() if isinstance(self.robot, FaultReportingRobot) else {}

    def clear_faults(self) -> dict[str, str]:
        return self.robot.clear_faults() if isinstance(self.robot, FaultReportingRobot) else {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self.robot, name)

    def get_observation(self) -> dict:
        started = self.clock.now_ns()
        observation = self.robot.get_observation()
        finished = self.clock.now_ns()
        if isinstance(self.robot, TimestampedRobot):
            stamps = dict(self.robot.capture_timestamps_ns())
        else:
            stamps = {ROBOT_SOURCE: (started + finished) // 2}
        for name, camera in getattr(self.robot, "cameras", {}).items():
            stamps[name] = camera_capture_ns(camera)
            if reads_depth(camera):
                stamps[depth_key(name)] = getattr(camera, "depth_capture_ns", stamps[name])
        self.last_timestamps_ns = stamps
        return observation

    def validate(self, extra_timestamps_ns: dict[str, int | None] | None = None) -> SyncPacket:
        """The packet for the last observation, with extra sources (e.g. the input device) added."""
        return validate_timestamps({**self.last_timestamps_ns, **(extra_timestamps_ns or {})}, self.clock.now_ns(),
                                   self.policy)


def camera_capture_ns(camera) -> int | None:
    """When a camera's latest frame was captured (clock.now_ns), where it says; None: it does not."""
    if isinstance(camera, CapturedCamera):
        return camera.capture_ns
    stamp = getattr(camera, "latest_timestamp", None)
    return None if stamp is None else from_perf_counter(stamp)
