"""A sync-validation wrapper around any LeRobot Robot, ours or LeRobot's, that leaves the robot unchanged.

get_observation() returns exactly what the robot returns; alongside, the wrapper collects every source's capture
timestamp for that observation, and validate() turns them, plus the input device's, into a SyncPacket. Times are
taken on the robot's clock (a lockstep world's) where it has one, else on the machine's monotonic clock.

Where the timestamps come from:
- joints: a robot with capture_timestamps_ns() (TimestampedRobot: TeleDex robots) gives its devices' own message
  times, one source per part; any other robot is one source, stamped at the middle of the get_observation() call;
- cameras: `capture_ns` (CapturedCamera: TeleDex cameras) or the capture time LeRobot camera threads keep in
  `latest_timestamp` (cameras/capture_time.py);
- a camera's depth stream (<camera>_depth, a source of its own): `depth_capture_ns` where the camera knows when
  its depth was captured (teledex_realsense, from the device's frame timestamps), else the colour's time (a rendered
  world camera draws both at one instant; LeRobot's RealSense stamps a frameset once).
"""

from collections.abc import Mapping
from typing import Any

from lerobot.robots import Robot

from teledex_lerobot.capabilities import (
    Clocked,
    EpisodicRobot,
    FaultReportingRobot,
    SimulatedWorld,
    TimestampedRobot,
    WorldRobot,
)
from teledex_lerobot.clock import MONOTONIC, Clock
from teledex_lerobot.devices.device_fault import DeviceFault
from teledex_lerobot.sync import SyncPacket, SyncPolicy, validate_timestamps

from .cameras.capture_time import camera_capture_ns
from .cameras.depth_streams import depth_key, reads_depth

ROBOT_SOURCE = "robot"


class SyncValidatedRobot:
    """The robot as the recording asks for it (capabilities.RecordableRobot): LeRobot's Robot interface forwarded,
    the capabilities answered here for any robot, neutrally where the robot lacks them (a protocol check looks at the
    wrapper's class, not through it). Anything else is the robot's own: `robot`."""

    def __init__(self, robot: Robot, policy: SyncPolicy | None = None):
        self.robot = robot
        self.policy = policy or SyncPolicy()
        self.last_timestamps_ns: dict[str, int | None] = {}

    # LeRobot's Robot interface
    @property
    def name(self) -> str:
        return self.robot.name

    @property
    def cameras(self) -> Mapping[str, Any]:
        """The robot's LeRobot cameras by name ({} for a robot without any)."""
        return getattr(self.robot, "cameras", {})

    @property
    def observation_features(self) -> dict:
        return self.robot.observation_features

    @property
    def action_features(self) -> dict:
        return self.robot.action_features

    @property
    def is_connected(self) -> bool:
        return self.robot.is_connected

    def connect(self, calibrate: bool = True) -> None:
        self.robot.connect(calibrate)

    def disconnect(self) -> None:
        self.robot.disconnect()

    def send_action(self, action: dict) -> dict:
        return self.robot.send_action(action)

    # the capabilities
    @property
    def clock(self) -> Clock:
        return self.robot.clock if isinstance(self.robot, Clocked) else MONOTONIC

    @property
    def _world(self) -> SimulatedWorld | None:
        return self.robot.world if isinstance(self.robot, WorldRobot) else None

    @property
    def lockstep(self) -> bool:
        world = self._world
        return world is not None and world.lockstep

    def advance(self, duration_ns: int) -> None:
        world = self._world
        if world is None:
            raise RuntimeError(f"{self.name} runs in no simulated world: its time passes by itself")
        world.advance(duration_ns)

    @property
    def judges_episodes(self) -> bool:
        """A simulated world judges its episodes; people judge a real scene (the recorder's s / f keys)."""
        return self._world is not None

    def episode_outcome(self) -> dict | None:
        world = self._world
        return world.episode_outcome() if world is not None else None

    def world_episode(self) -> dict | None:
        world = self._world
        return world.world_episode() if world is not None else None

    def start_episode(self, episode_index: int) -> bool:
        if not isinstance(self.robot, EpisodicRobot):
            return False
        self.robot.reset_episode(episode_index)
        return True

    @property
    def fault_lookback_ns(self) -> int:
        return self.robot.fault_lookback_ns if isinstance(self.robot, FaultReportingRobot) else 0

    def device_faults(self) -> dict[str, str]:
        return self.robot.device_faults() if isinstance(self.robot, FaultReportingRobot) else {}

    def active_faults(self) -> Mapping[str, DeviceFault]:
        return self.robot.active_faults() if isinstance(self.robot, FaultReportingRobot) else {}

    def clear_faults(self) -> dict[str, str]:
        return self.robot.clear_faults() if isinstance(self.robot, FaultReportingRobot) else {}

    def get_observation(self) -> dict:
        started = self.clock.now_ns()
        observation = self.robot.get_observation()
        finished = self.clock.now_ns()
        stamps: dict[str, int | None] = {}
        if isinstance(self.robot, TimestampedRobot):
            stamps.update(self.robot.capture_timestamps_ns())
        else:
            stamps[ROBOT_SOURCE] = (started + finished) // 2
        for name, camera in self.cameras.items():
            stamps[name] = camera_capture_ns(camera)
            if reads_depth(camera):
                stamps[depth_key(name)] = getattr(camera, "depth_capture_ns", stamps[name])
        self.last_timestamps_ns = stamps
        return observation

    def validate(self, extra_timestamps_ns: dict[str, int | None] | None = None) -> SyncPacket:
        """The packet for the last observation, with extra sources (e.g. the input device) added."""
        return validate_timestamps({**self.last_timestamps_ns, **(extra_timestamps_ns or {})}, self.clock.now_ns(),
                                   self.policy)

