"""The one frame object every sink is fed, and the layout that names its parts.

A recorded frame holds everything the control loop knew at one tick: the observation split into joint state, tactile
taxels and camera images (each named by the layout, so both formats use the same names), the action actually sent
(after the safety filter), the sync validation packet, when the frame was checked, and any device faults.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..sync import SyncPacket


@dataclass(frozen=True)
class FrameLayout:
    """Names and shapes of a recording's frames; fixed for a dataset."""

    state_names: tuple[str, ...]  # float observations other than tactile, in order (qpos / observation.state)
    action_names: tuple[str, ...]
    tactile_names: tuple[str, ...]  # one float per taxel; empty without tactile sensors
    cameras: dict[str, tuple[int, int, int]]  # stream name -> (height, width, channels: 3 colour, 1 depth)
    source_names: tuple[str, ...]  # sync sources, in column order
    fps: int
    # Observations about the scene rather than the robot (a simulated world's object poses): stored apart from the
    # state (LeRobot's observation.environment_state, the input of its state-based policies).
    environment_names: tuple[str, ...] = ()
    # The robot judges its episodes (a simulated world): every frame records whether the task has succeeded by then
    # (LeRobot's next.success, the native "success").
    judged: bool = False

    @property
    def depth_streams(self) -> tuple[str, ...]:
        """The cameras' depth maps (one channel, uint16 millimetres), by their names in `cameras`."""
        return tuple(name for name, shape in self.cameras.items() if shape[2] == 1)

    @classmethod
    def from_features(cls, observation_features: dict, action_features: dict, tactile_names, source_names, fps: int,
                      environment_names=(), judged: bool = False):
        apart = (*tactile_names, *environment_names)
        return cls(state_names=tuple(k for k, v in observation_features.items() if v is float and k not in apart),
                   action_names=tuple(action_features), tactile_names=tuple(tactile_names),
                   cameras={k: tuple(v) for k, v in observation_features.items() if isinstance(v, tuple)},
                   source_names=tuple(source_names), fps=fps, environment_names=tuple(environment_names),
                   judged=judged)


@dataclass
class RecordedFrame:
    state: np.ndarray  # (len(state_names),) float
    action: np.ndarray  # (len(action_names),) float, as sent
    tactile: np.ndarray  # (len(tactile_names),) float
    images: dict[str, np.ndarray]  # stream -> (H, W, 3) uint8 colour, or (H, W, 1) uint16 depth in millimetres
    packet: SyncPacket
    faults: dict[str, str] = field(default_factory=dict)  # part -> message, while a device reports a fault
    environment: np.ndarray = field(default_factory=lambda: np.zeros(0))  # (len(environment_names),) float
    success: bool = False  # layout.judged: the task has succeeded by this frame

    @property
    def frame_ns(self) -> int:
        return self.packet.checked_ns

    @classmethod
    def from_observation(cls, layout: FrameLayout, observation: dict, action: dict, packet: SyncPacket,
                         faults: dict[str, str] | None = None, success: bool = False) -> "RecordedFrame":
        return cls(state=np.array([observation[k] for k in layout.state_names], dtype=np.float64),
                   action=np.array([action[k] for k in layout.action_names], dtype=np.float64),
                   tactile=np.array([observation[k] for k in layout.tactile_names], dtype=np.float64),
                   images={name: observation[name] for name in layout.cameras}, packet=packet,
                   faults=dict(faults or {}),
                   environment=np.array([observation[k] for k in layout.environment_names], dtype=np.float64),
                   success=success)


def source_stamps(frames: Sequence[RecordedFrame], source_names: Sequence[str]) -> np.ndarray:
    """(T, S) int64: each frame's capture time of each source, NO_STAMP (-1) where it has none (never measured, or
    its part was in fault; SyncPacket.stamps): what both formats store (native source_timestamps_ns, LeRobot's
    t_<source>_ns columns) and the recorder's sync figures read."""
    return np.array([f.packet.stamps(source_names) for f in frames], dtype=np.int64).reshape(len(frames),
                                                                                          len(source_names))
