"""What a robot or an input may do beyond LeRobot's Robot and Teleoperator interfaces, as typing.Protocols: the
recording (recording/loop.py, recorder.py) and the sync-validation wrapper ask, the robot and teleoperator packages
answer. Here, below both, so that the robot package (its sync-validation wrapper answers the robot's for any robot)
never imports the recording. A protocol check looks at the object's class (inspect.getattr_static), never through a
wrapper's __getattr__: a wrapper answers each capability itself.

Robots:
- FaultReportingRobot: its devices latch faults (a silent bus, a joint out of range, a camera lost or stalled),
  which it reports and re-arms;
- TimestampedRobot: it says when each part's measurement in its last observation was captured (a sync source each);
- LockstepRobot: a simulated world whose time stands still until advanced; the loop then advances it one control
  period per tick and never sleeps (no tick is dropped, the CPU sets the pace, the wall clock plays no part);
- JudgedRobot: it knows how the episode is going (success, stages): every frame records it, the episode ends
  `settle_s` after success, and a plan may keep successes only;
- WorldEpisodes: it lays out each episode (a simulated world), and says how for the episode's metadata.
Cameras:
- CapturedCamera: it says when its latest frame was captured, on the machine's monotonic clock.
Inputs:
- EpisodeAwareInput: told when the robot has been reset for a new episode (it re-anchors to the robot's pose);
- EpisodeTimedInput: told when each episode begins and how long it lasts (it shows the operator the time left);
- CapturedInput: it says when the sample behind its last action was captured (the input's sync source);
- FaultShowingInput: it shows the robot's faults to the operator;
- CorrectedInput: the robot executes something else than the action recorded (recovery data: a perturbed target
  executed, the expert's correction recorded);
- KeyboardInput: it has keys of its own (its state machine's), which a recorder holding the keyboard forwards;
  KeyboardListeningConfig: its config says whether it listens to the keyboard itself (such a recorder turns it off).
"""

from typing import Protocol, runtime_checkable


@runtime_checkable
class LockstepRobot(Protocol):
    lockstep: bool  # nothing moves until advance()

    def advance(self, duration_ns: int) -> None: ...


@runtime_checkable
class FaultReportingRobot(Protocol):
    # The longest a fault's cause can precede its detection (a camera's stall limit): the recording holds its frames
    # at least this long before storing them, so that it can mark those recorded since the cause.
    fault_lookback_ns: int

    def device_faults(self) -> dict[str, str]:
        """Every part whose device is in fault, with the message (what happened and what to check); {} when clear."""

    def active_faults(self) -> dict:
        """Every part in fault -> its fault, whose `since_ns` is when its cause began (None: unknown)."""

    def clear_faults(self) -> dict[str, str]:
        """Re-arm every device; the faults whose cause is still there remain, returned as device_faults()."""


@runtime_checkable
class TimestampedRobot(Protocol):
    def capture_timestamps_ns(self) -> dict[str, int]:
        """When each part's measurement in the last observation was captured (its own clock's now_ns)."""


@runtime_checkable
class CapturedCamera(Protocol):
    capture_ns: int | None  # when the latest frame was captured (clock.now_ns); None: no frame yet


@runtime_checkable
class JudgedRobot(Protocol):
    judges_episodes: bool  # known before connecting: the dataset gets its success column or not

    def episode_outcome(self) -> dict | None:
        """{"success": bool, "stage": str, ...} for the episode so far, or None (nobody judges it)."""


@runtime_checkable
class WorldEpisodes(Protocol):
    def world_episode(self) -> dict | None:
        """What laid out this episode (a simulated world: task, seed, randomised values), or None."""


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
