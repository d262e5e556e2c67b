"""Renders a world camera headless (EGL on CPU, no shadows or reflections), with the pinhole intrinsics and pose
that camera_info.json records."""

import mujoco
import numpy as np

from ..devices.render import PinholeIntrinsics
from .world import CAMERA_FOVY_DEG, World


class WorldRenderer:
    """One camera of one world. Not thread-safe: use it from one thread (the OpenGL context follows it)."""

    def __init__(self, world: World, camera: str, width: int, height: int):
        if camera not in world.cameras:
            raise ValueError(f"The world has no camera {camera!r}; it has {sorted(world.cameras)}.")
        self.world, self.camera = world, camera
        self.width, self.height = width, height
        self._data = mujoco.MjData(world.model)
        self._renderer: mujoco.Renderer | None = None
        focal = (height / 2) / np.tan(np.radians(CAMERA_FOVY_DEG) / 2)
        self.intrinsics = PinholeIntrinsics(width, height, focal, focal, width / 2, height / 2)

    @property
    def world_from_camera(self) -> np.ndarray:
        """4x4 pose of the optical frame (x right, y down, z forward) in the world (the table's frame)."""
        camera = self.world.data.camera(self.camera)
        pose = np.eye(4)
        pose[:3, :3] = camera.xmat.reshape(3, 3) @ np.diag([1.0, -1.0, -1.0])  # MuJoCo cameras look along -z, y up
        pose[:3, 3] = camera.xpos
        return pose

    def render(self, _scene=None) -> np.ndarray:
        """RGB uint8 (H, W, 3) of the world now (the state is copied under the world's lock)."""
        world = self.world
        if self._renderer is None:
            self._renderer = mujoco.Renderer(world.model, self.height, self.width)
            for flag in (mujoco.mjtRndFlag.mjRND_SHADOW, mujoco.mjtRndFlag.mjRND_REFLECTION):
                self._renderer.scene.flags[flag] = False
        with world.lock:
            self._data.qpos[:] = world.data.qpos
            self._data.time = world.data.time
        mujoco.mj_kinematics(world.model, self._data)
        mujoco.mj_camlight(world.model, self._data)
        self._renderer.update_scene(self._data, camera=self.camera)
        return self._renderer.render()

    def close(self) -> None:
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None
