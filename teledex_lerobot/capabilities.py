"""What a robot or an input may do beyond LeRobot's Robot and Teleoperator interfaces, as typing.Protocols: the
recording (recording/loop.py, recorder.py) and the sync-validation wrapper ask, the robot and teleoperator packages
answer. Here, below the recording, so that the robot package (its sync-validation wrapper answers the robot's for any
robot) never imports it; the types named here are imported for type checking only, so the recording's loop loads
none of them (neither MuJoCo nor Rerun). A protocol check looks at the object's class (inspect.getattr_static), never
through a wrapper: a wrapper answers each capability itself.

What the recording asks of the robot it records:
- RecordableRobot: the robot as the recording loop drives it: LeRobot's Robot interface, the sync check (validate),
  its clock, its faults and its episodes. lerobot_robot_teledex's SyncValidatedRobot answers it for any LeRobot robot
  from the capabilities below, neutrally where the robot lacks one.
Robots:
- FaultReportingRobot: its devices latch faults (a silent bus, a joint out of range, a camera lost or stalled),
  which it reports and re-arms;
- TimestampedRobot: it says when each part's measurement in its last observation was captured (a sync source each);
- Clocked: its timestamps are taken on a clock of its own (a lockstep world's);
- EpisodicRobot: it is told when each episode starts (reset_episode), and may lay out its scene then (a world);
- WorldRobot: it runs in a simulated world (SimulatedWorld), which judges each episode (success, stages: every frame
  records it, the episode ends `settle_s` after success, and a plan may keep successes only), says how it laid the
  episode out, for its metadata, and may run in lockstep: its time stands still until advanced, and the loop then
  advances it one control period per tick and never sleeps (no tick is dropped, the CPU sets the pace, the wall
  clock plays no part);
- RigRobot: one TeleDex rig (its parts are its joint sources; its models name the dataset's robot_type);
  FollowersRobot: several, one per follower;
- ObservationGroupsRobot: it says which of its float observations are taxels and which the scene's objects;
- StationRobot: it shares a station with its teleoperators (its live view, which the recording feeds too);
- PresetConfig, BackendConfig (a robot's config): the preset it is built from, the backend it runs on (the
  episode's metadata records both); RatedConfig: the rate it is recorded at, its cameras' frame rates.
Cameras:
- CapturedCamera: it says when its latest frame was captured, on the machine's monotonic clock.
Inputs:
- ScriptedInput (a teleoperator's config): not a person, so a world it drives may run in lockstep;
- WorldReader: it reads the simulated world the robot runs (a scripted expert);
- EpisodeAwareInput: told when the robot has been reset for a new episode (it re-anchors to the robot's pose);
- EpisodeTimedInput: told when each episode begins and how long it lasts (it shows the operator the time left);
- CapturedInput: it says when the sample behind its last action was captured (the input's sync source);
- FaultShowingInput: it shows the robot's faults to the operator;
- CorrectedInput: the robot executes something else than the action recorded (recovery data: a perturbed target
  executed, the expert's correction recorded);
- KeyboardInput: it has keys of its own (its state machine's), which a recorder holding the keyboard forwards;
  KeyboardListeningConfig: its config says whether it listens to the keyboard itself (such a recorder turns it off).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:  # for type checking only: the world imports MuJoCo, the station's live view Rerun
    import numpy as np

    from .clock import Clock
    from .devices.device_fault import DeviceFault
    from .rig import Rig
    from .station import Station
    from .sync import SyncPacket
    from .world.devices import WorldRunner


@runtime_checkable
class RecordableRobot(Protocol):
    """The robot as the recording loop drives it (lerobot_robot_teledex.sync_validated: around any robot)."""

    @property
    def name(self) -> str: ...

    @property
    def cameras(self) -> Mapping[str, Any]: ...  # LeRobot cameras by name

    @property
    def observation_features(self) -> dict: ...

    @property
    def action_features(self) -> dict: ...

    @property
    def is_connected(self) -> bool: ...

    def connect(self, calibrate: bool = True) -> None: ...

    def disconnect(self) -> None: ...

    def get_observation(self) -> dict:
        """The robot's observation; the capture time of each of its sources is kept for validate()."""

    def send_action(self, action: dict) -> dict:
        """The action sent (after the robot's safety limits)."""

    def validate(self, extra_timestamps_ns: dict[str, int | None] | None = None) -> SyncPacket:
        """The sync check of the last observation, with extra sources (the input's) added."""

    @property
    def clock(self) -> Clock: ...  # every capture time of the robot is taken on it

    # faults (FaultReportingRobot): none for a robot that reports none
    @property
    def fault_lookback_ns(self) -> int: ...

    def device_faults(self) -> dict[str, str]: ...

    def active_faults(self) -> Mapping[str, DeviceFault]: ...

    def clear_faults(self) -> dict[str, str]: ...

    # episodes (EpisodicRobot, WorldRobot)
    def start_episode(self, episode_index: int) -> bool:
        """Tell the robot episode `episode_index` starts (a world lays out its scene, the robot at home); whether
        it was told (an EpisodicRobot), so that the input restarts from where the robot now is."""

    @property
    def judges_episodes(self) -> bool: ...  # known before connecting: the dataset gets its success column or not

    def episode_outcome(self) -> dict | None:
        """{"success": bool, "stage": str, ...} for the episode so far, or None (nobody judges it)."""

    def world_episode(self) -> dict | None:
        """What laid out this episode (a simulated world: task, seed, randomised values), or None."""

    @property
    def lockstep(self) -> bool: ...  # nothing moves until advance()

    def advance(self, duration_ns: int) -> None:
        """Lockstep: let duration_ns pass (one control period per tick)."""


@runtime_checkable
class FaultReportingRobot(Protocol):
    # The longest a fault's cause can precede its detection (a camera's stall limit): the recording holds its frames
    # at least this long before storing them, so that it can mark those recorded since the cause.
    @property
    def fault_lookback_ns(self) -> int: ...

    def device_faults(self) -> dict[str, str]:
        """Every part whose device is in fault, with the message (what happened and what to check); {} when clear."""

    def active_faults(self) -> Mapping[str, DeviceFault]:
        """Every part in fault -> its fault, whose `since_ns` is when its cause began (None: unknown)."""

    def clear_faults(self) -> dict[str, str]:
        """Re-arm every device; the faults whose cause is still there remain, returned as device_faults()."""


@runtime_checkable
class TimestampedRobot(Protocol):
    def capture_timestamps_ns(self) -> dict[str, int]:
        """When each part's measurement in the last observation was captured (its own clock's now_ns)."""


@runtime_checkable
class Clocked(Protocol):
    """Something whose timestamps are taken on a clock of its own (a robot in a lockstep world)."""

    @property
    def clock(self) -> Clock: ...


@runtime_checkable
class EpisodicRobot(Protocol):
    def reset_episode(self, episode_index: int | None = None) -> int | None:
        """Episode `episode_index` starts (None: the next one): a world lays out its scene with the robot at home
        and returns the layout seed; a robot with nothing to reset returns None."""


@runtime_checkable
class SimulatedWorld(Protocol):
    """The simulated world a robot runs in: it judges each episode, describes its layout, and may run in lockstep."""

    @property
    def runner(self) -> WorldRunner | None: ...  # what steps the world, while the robot is connected

    @property
    def lockstep(self) -> bool: ...  # nothing moves until advance()

    def advance(self, duration_ns: int) -> None: ...

    def episode_outcome(self) -> dict | None:
        """{"success": bool, "stage": str, ...} for the episode so far; None while the robot is not connected."""

    def world_episode(self) -> dict | None:
        """What laid out this episode (task, seed, randomised values); None while the robot is not connected."""


@runtime_checkable
class WorldRobot(Protocol):
    @property
    def world(self) -> SimulatedWorld | None: ...  # its simulated world (TeleDex robots: backend=mujoco), else None


@runtime_checkable
class RigRobot(Protocol):
    @property
    def rig(self) -> Rig: ...


@runtime_checkable
class FollowersRobot(Protocol):
    @property
    def robots(self) -> Mapping[str, RigRobot]: ...  # follower name -> its robot (teledex_followers)

    def base_poses(self) -> Mapping[str, np.ndarray]: ...  # follower name -> its base in the first one's (4x4)


@runtime_checkable
class ObservationGroupsRobot(Protocol):
    @property
    def tactile_keys(self) -> list[str]: ...  # one float observation per taxel

    @property
    def environment_state_keys(self) -> list[str]: ...  # the scene's object poses (observation.environment_state)


@runtime_checkable
class StationRobot(Protocol):
    @property
    def station(self) -> Station: ...  # what it shares with the teleoperators of its process, its live view among them


@runtime_checkable
class PresetConfig(Protocol):
    preset: str  # the preset (configs/presets/) the robot is built from; "" for none


@runtime_checkable
class RatedConfig(Protocol):
    """A robot config that knows the rate it is recorded at and its cameras' frame rates: teledex-record records at
    that rate unless --dataset.fps says otherwise, and refuses a camera slower than the recording."""

    def recording_fps(self) -> int | None: ...  # its preset's fps; None: no rate of its own (LeRobot's default)

    def camera_fps(self) -> dict[str, int]: ...  # camera name -> the frames per second it delivers


@runtime_checkable
class BackendConfig(Protocol):
    backend: str  # what runs its parts: fake, sim, real or mujoco


@runtime_checkable
class CapturedCamera(Protocol):
    @property
    def capture_ns(self) -> int | None: ...  # when the latest frame was captured (clock.now_ns); None: no frame yet


@runtime_checkable
class ScriptedInput(Protocol):
    """A teleoperator's config: an input that is not a person (a script, a policy) says so. Nothing in it needs the
    wall clock, so a simulated world it drives may run in lockstep (teledex-record resolves --robot.world.clock=auto
    with it)."""

    scripted: bool


@runtime_checkable
class WorldReader(Protocol):
    def attach_world(self, runner: WorldRunner) -> None:
        """Read this world (a scripted input that sees the scene)."""


@runtime_checkable
class EpisodeAwareInput(Protocol):
    def start_episode(self) -> None:
        """The robot has just been reset for a new episode (a world lays out its scene, the robot at home): start
        from where it is now, never drive it back to where the last episode ended."""


@runtime_checkable
class EpisodeTimedInput(Protocol):
    def episode_started(self, duration_s: float) -> None:
        """An episode is recorded from now for at most `duration_s` (it may end sooner: on success, a key)."""


@runtime_checkable
class CapturedInput(Protocol):
    sample_capture_ns: int | None  # when the sample behind the last action was captured; None: no sample yet


@runtime_checkable
class FaultShowingInput(Protocol):
    def report_robot_faults(self, faults: dict[str, str]) -> None:
        """The robot's current faults (part -> message; {} when clear), for the operator to see."""


@runtime_checkable
class CorrectedInput(Protocol):
    def executed_action(self, action: dict) -> dict:
        """What the robot executes for the action the input returned (and the recording keeps)."""


@runtime_checkable
class KeyboardInput(Protocol):
    def press_keyboard_key(self, name: str) -> bool:
        """A key by LeRobot's key-listener name; False when the input has no use for it."""

    def keyboard_help(self) -> str:
        """Its keys and what they do, for the console's help line ("" for none)."""


@runtime_checkable
class KeyboardListeningConfig(Protocol):
    keyboard: bool  # the input listens to the keyboard itself
