"""Renders a world camera headless (EGL on CPU, no shadows or reflections), with the pinhole intrinsics and pose
that camera_info.json records; and its depth, aligned to its colour by construction (the same camera, one instant),
in uint16 millimetres as a RealSense D455 delivers it."""

import mujoco
import numpy as np
from scipy.spatial.transform import Rotation

from ..geometry.camera import DEPTH_SCALE_M, PinholeIntrinsics
from .world import World

# A pixel whose depth reaches this share of the far clipping plane saw nothing (the sky beyond the floor).
_NOTHING_SEEN = 0.99


class WorldRenderer:
    """One camera of one world. Not thread-safe: use it from one thread (the OpenGL context follows it)."""

    def __init__(self, world: World, camera: str, width: int, height: int):
        if camera not in world.cameras:
            raise ValueError(f"The world has no camera {camera!r}; it has {sorted(world.cameras)}.")
        self.world, self.camera = world, camera
        self.width, self.height = width, height
        self._data = mujoco.MjData(world.model)
        self._renderer: mujoco.Renderer | None = None
        focal = (height / 2) / np.tan(np.radians(world.model.camera(camera).fovy[0]) / 2)
        # Pixel centres at whole coordinates (OpenCV's and librealsense's convention): the optical axis meets the
        # image at its middle, half a pixel before width / 2 (the rendered depth of a plane shows the difference).
        self.intrinsics = PinholeIntrinsics(width, height, focal, focal, (width - 1) / 2, (height - 1) / 2)

    @property
    def base_from_camera(self) -> np.ndarray:
        """4x4 pose of the optical frame (x right, y down, z forward) in the rig's base frame, now (a wrist camera
        moves with the hand)."""
        with self.world.lock:
            camera = self.world.data.camera(self.camera)
            pose = np.eye(4)
            pose[:3, :3] = camera.xmat.reshape(3, 3) @ np.diag([1.0, -1.0, -1.0])  # MuJoCo cameras look along -z
            pose[:3, 3] = camera.xpos
            return np.linalg.inv(self.world.base_pose()) @ pose

    @property
    def mount(self) -> tuple[str, np.ndarray] | None:
        """(rig part, 4x4 pose of the optical frame in the part's base frame) of a camera mounted on a moving part
        (the wrist view), else None."""
        model = self.world.model
        camera = model.camera(self.camera)
        body = model.body(int(camera.bodyid[0]))
        if body.id == 0:
            return None
        pose = np.eye(4)
        pose[:3, :3] = Rotation.from_quat(camera.quat, scalar_first=True).as_matrix() @ np.diag([1.0, -1.0, -1.0])
        pose[:3, 3] = camera.pos
        return body.name.split("/", 1)[0], pose

    def render(self) -> np.ndarray:
        """RGB uint8 (H, W, 3) of the world now."""
        self._update_scene()
        return self._renderer.render()

    def render_rgbd(self) -> tuple[np.ndarray, np.ndarray]:
        """Colour and depth of the world now, one scene: RGB uint8 (H, W, 3) and depth along the optical axis,
        uint16 millimetres (H, W, 1); 0 where nothing is seen within 65.535 m (as a RealSense marks no return)."""
        self._update_scene()
        rgb = self._renderer.render()
        self._renderer.enable_depth_rendering()
        try:
            depth_m = self._renderer.render()
        finally:
            self._renderer.disable_depth_rendering()
        model = self.world.model
        far_m = model.vis.map.zfar * model.stat.extent
        units = np.rint(depth_m / DEPTH_SCALE_M)
        seen = (depth_m < _NOTHING_SEEN * far_m) & (units <= np.iinfo(np.uint16).max)
        return rgb, np.where(seen, units, 0).astype(np.uint16)[..., None]

    def _update_scene(self) -> None:
        """The scene of the world now (its state copied under the world's lock)."""
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

    def close(self) -> None:
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None
