"""The one error type of the kinematics package."""

from ..errors import ModelError


class UrdfError(ModelError):
    """A URDF cannot be used: the message names the problem and how to fix it (a ValueError, as ModelError is)."""
