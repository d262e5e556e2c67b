"""A camera's depth stream beside its colour: LeRobot's robots observe it as `<camera>_depth`, an (H, W, 1) uint16
map in millimetres, when the camera's config has use_depth (LeRobot's intelrealsense, our teledex_realsense and
teledex_world); the dataset then stores it as a depth video (info.is_depth_map)."""


def depth_key(camera: str) -> str:
    return f"{camera}_depth"


def reads_depth(camera) -> bool:
    """camera: a LeRobot Camera or CameraConfig."""
    return bool(getattr(camera, "use_depth", False))
