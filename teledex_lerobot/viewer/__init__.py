"""The operator's live view, in Rerun: the robot at its measured and commanded pose, the operator's hand beside the
retargeted robot hand, each camera, each frame's sync check, the teleoperation state, faults and the episode timer.

Turned on by the robot: --robot.live_view.enabled=true (see LiveViewConfig). Fed from where the data is:
- the TeleDex robots: their rig at connect, measured joints, camera frames and faults per observation, the commanded
  joints per action;
- the TeleDex input teleoperators: the operator frame, the state machine's state and staleness per tick;
- the recorder (teledex-record): log_sync(packet) per frame, start_episode / end_episode around each episode.
"""

from .config import LiveViewConfig
from .instance import active, end_episode, log_sync, start, start_episode, stop

__all__ = ["LiveViewConfig", "active", "end_episode", "log_sync", "start", "start_episode", "stop"]
