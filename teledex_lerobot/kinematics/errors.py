"""The one error type of the kinematics package."""


class UrdfError(ValueError):
    """A URDF cannot be used: the message names the problem and how to fix it."""
