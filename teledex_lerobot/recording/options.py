"""What teledex-record adds to lerobot-record's flags: read by its --help (cli/record.py, without loading LeRobot)
and by the recording (recording/recorder.py, whose TeledexRecordConfig adds LeRobot's robot, teleoperator and
dataset settings). Nothing here imports LeRobot."""

from dataclasses import dataclass, field

from ..storage.errors import UserError
from ..sync import SyncPolicy, TimingPolicy
from .loop import FAULT_POLICIES, STOP

KEEP_CHOICES = ("all", "successes")


@dataclass
class NativeOutputConfig:
    enabled: bool = True  # also write the native TeleDex layout (telemetry.npz, manifest, metadata, videos)
    # Where the native layout goes; default: "<dataset root>_native".
    root: str | None = None
    # Only used when the LeRobot dataset stores no videos (--dataset.video=false): the native layout then encodes
    # its own H.264 at this quality.
    video_crf: int = 18


@dataclass
class RecordOptions:
    """What teledex-record adds to lerobot-record's flags."""

    native: NativeOutputConfig = field(default_factory=NativeOutputConfig)  # --native.*: the native layout
    sync: SyncPolicy = field(default_factory=SyncPolicy)  # --sync.*: when a frame counts as synchronised
    timing: TimingPolicy = field(default_factory=TimingPolicy)  # --timing.*: episodes that dropped too many ticks
    resume: bool = False  # add episodes to an existing dataset (both roots must exist)
    # Wait for the space key before each episode; otherwise episodes start on their own.
    wait_for_start: bool = False
    # After each episode, show its summary (duration, sync success, dropped ticks, faults) and wait for the operator:
    # k / enter keeps it, d discards it, r re-records it. The verdict and summary go into the episode's metadata.
    confirm_episodes: bool = False
    # When a device fault latches during an episode (an arm's or hand's, or a camera lost or stalled past
    # --robot.camera_stall_ms): "stop" it there and save it marked, "rerecord" (drop it), or
    # "keep-and-mark" (record on, every frame in fault flagged). Either way, the next episode waits for the operator
    # to re-arm (the `a` key) once the cause is gone.
    fault_policy: str = STOP
    # Robots that judge their episodes (the MuJoCo world): end each this many seconds after the task succeeded
    # (a negative value records to --dataset.episode_time_s) ...
    settle_s: float = 0.5
    # ... and keep "all" episodes or only "successes" (failures dropped, each attempt on a new layout).
    keep: str = "all"

    def __post_init__(self):
        if self.fault_policy not in FAULT_POLICIES:
            raise UserError(f"--fault_policy must be one of {', '.join(FAULT_POLICIES)} (got {self.fault_policy!r})")
        if self.keep not in KEEP_CHOICES:
            raise UserError(f"--keep must be one of {', '.join(KEEP_CHOICES)} (got {self.keep!r})")
