"""Draws a rig's links from a fixed pinhole viewpoint: the picture the simulated camera captures.

Not photorealism: a floor grid, the arm and the hand as lines and joints, enough that videos show the motion and a
policy has something visual to learn from.
"""

import cv2
import numpy as np

from teledex_lerobot.geometry.camera import PinholeIntrinsics, view_pose

_BACKGROUND_BGR = (46, 38, 34)
_GRID_BGR = (80, 72, 66)
_COLOURS_BGR = {"arm": (200, 170, 90), "hand": (80, 160, 255)}
_THICKNESS = {"arm": 5, "hand": 2}


class RigRenderer:
    """A fixed camera (a view of VIEWS around centre_m), or with `mount` a wrist camera: mount is its optical
    frame's 4x4 pose in the hand's base frame, and render() is given the hand's pose each frame."""

    def __init__(self, width: int, height: int, view: str, centre_m: np.ndarray, distance_m: float,
                 vertical_fov_deg: float = 55.0, mount: np.ndarray | None = None):
        focal = (height / 2) / np.tan(np.radians(vertical_fov_deg) / 2)
        self.intrinsics = PinholeIntrinsics(width, height, focal, focal, width / 2, height / 2)
        self.mount = mount
        if mount is not None:
            self._place(np.eye(4))
            return
        self._place(view_pose(view, centre_m, distance_m))
        self._background = self._draw_background()

    def _place(self, world_from_camera: np.ndarray) -> None:
        self.position_m = world_from_camera[:3, 3].copy()
        self._world_to_camera = world_from_camera[:3, :3].T.copy()  # rows: camera x (right), y (down), z (forward)

    @property
    def world_from_camera(self) -> np.ndarray:
        """4x4 pose of the camera's optical frame (x right, y down, z forward) in the world frame."""
        pose = np.eye(4)
        pose[:3, :3] = self._world_to_camera.T
        pose[:3, 3] = self.position_m
        return pose

    def project(self, points_m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """World points (…,3) -> pixel coordinates (…,2) and a mask of points in front of the camera."""
        camera = (points_m - self.position_m) @ self._world_to_camera.T
        depth = camera[..., 2]
        in_front = depth > 1e-3
        safe_depth = np.where(in_front, depth, 1.0)
        k = self.intrinsics
        pixels = np.stack([k.fx * camera[..., 0] / safe_depth + k.cx, k.fy * camera[..., 1] / safe_depth + k.cy], -1)
        return pixels, in_front

    def render(self, drawn: list[tuple[str, np.ndarray]], hand_pose: np.ndarray | None = None) -> np.ndarray:
        """drawn: (role, segments (m,2,3)) per part; hand_pose: the hand's base pose, for a wrist camera. Returns an
        RGB uint8 (H, W, 3) image."""
        if self.mount is not None:
            self._place(hand_pose @ self.mount)
            image = self._draw_background()
        else:
            image = self._background.copy()
        for role, segments in drawn:
            colour = _COLOURS_BGR.get(role, (220, 220, 220))
            self._draw_segments(image, segments, colour, _THICKNESS.get(role, 2), joint_dots=True)
        return cv2.cvtColor(image, cv2.COLOR_BGR2RGB)

    def _draw_segments(self, image: np.ndarray, segments: np.ndarray, colour, thickness: int,
                       joint_dots: bool = False) -> None:
        pixels, in_front = self.project(segments)
        # keep far-off points inside int range; cv2 clips lines to the image itself
        pixels = np.clip(np.round(pixels), -1e5, 1e5).astype(int)
        for (start, end), visible in zip(pixels, in_front[:, 0] & in_front[:, 1], strict=True):
            if not visible:
                continue
            a, b = (int(start[0]), int(start[1])), (int(end[0]), int(end[1]))
            cv2.line(image, a, b, colour, thickness, cv2.LINE_AA)
            if joint_dots:
                cv2.circle(image, b, thickness // 2 + 1, (240, 240, 240), -1, cv2.LINE_AA)

    def _draw_background(self) -> np.ndarray:
        k = self.intrinsics
        image = np.full((k.height, k.width, 3), _BACKGROUND_BGR, dtype=np.uint8)
        ticks = np.linspace(-0.8, 0.8, 17)
        lines = [((t, -0.8, 0.0), (t, 0.8, 0.0)) for t in ticks] + [((-0.8, t, 0.0), (0.8, t, 0.0)) for t in ticks]
        self._draw_segments(image, np.asarray(lines, dtype=float), _GRID_BGR, 1)
        return image
