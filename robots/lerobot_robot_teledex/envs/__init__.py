"""TeleDex environments: `--env.type=teledex`, the MuJoCo world's tasks as a LeRobot environment (configs.py)."""

from .configs import TeledexEnvConfig

__all__ = ["TeledexEnvConfig"]
