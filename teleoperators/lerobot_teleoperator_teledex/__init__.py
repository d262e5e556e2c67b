"""LeRobot plugin: TeleDex teleoperators (teledex_replay)."""

from .config_teledex_replay import TeledexReplayConfig
from .teledex_replay import TeledexReplay

__all__ = ["TeledexReplay", "TeledexReplayConfig"]
