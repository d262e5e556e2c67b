"""The operator's live view, in Rerun: the robot at its measured and commanded pose, the operator's hand beside the
retargeted robot hand, each camera, each frame's sync check, the teleoperation state, faults and the episode timer.

Turned on by the robot: --robot.live_view.enabled=true (see LiveViewConfig); it runs in the robot's station
(teledex_lerobot/station.py) while the robot is connected. Fed from where the data is:
- the TeleDex robots: their rig at connect, measured joints, camera frames and faults per observation, the commanded
  joints per action;
- the TeleDex input teleoperators: the operator frame, the state machine's state and staleness per tick;
- the recorder (teledex-record): sync(packet) per frame, start_episode / end_episode around each episode.
"""

from .config import LiveViewConfig

__all__ = ["LiveViewConfig"]
