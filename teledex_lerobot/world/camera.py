"""Renders a world camera headless (EGL on CPU, no shadows or reflections), with the pinhole intrinsics and pose
that camera_info.json records; and its depth, aligned to its colour by construction (the same camera, one instant),
in uint16 millimetres as a RealSense D455 delivers it. A camera with an ipd (build_world_xml's stereo baseline) is a
stereo pair: one side-by-side image, left eye | right eye."""

import mujoco
import numpy as np
from scipy.spatial.transform import Rotation

from ..errors import ConfigError
from ..geometry.camera import DEPTH_SCALE_M, PinholeIntrinsics
from .world import World

# A pixel whose depth reaches this share of the far clipping plane saw nothing (the sky beyond the floor).
_NOTHING_SEEN = 0.99
# An mjvGLCamera's fields. After mjv_updateScene a scene's camera[0] and camera[1] are the left and right eye, ipd
# apart along the camera's x, axes parallel; mjr_render without a stereo mode renders their average (measured on
# MuJoCo 3.8: not the left eye, as mjtStereo's comment has it).
_GL_CAMERA_FIELDS = ("pos", "forward", "up", "frustum_center", "frustum_width", "frustum_bottom", "frustum_top",
                     "frustum_near", "frustum_far", "orthographic")


class WorldRenderer:
    """One camera of one world, for one of its rigs (`rig_name`: in a world of several, the rig whose base frame its
    poses are given in). Not thread-safe: use it from one thread (the OpenGL context follows it)."""

    def __init__(self, world: World, camera: str, width: int, height: int, rig_name: str = ""):
        """width: each eye's, for a stereo pair (its frame is twice as wide)."""
        if camera not in world.cameras:
            raise ConfigError(f"The world has no camera {camera!r}; choose one of {sorted(world.cameras)}, or build "
                              "the world with that camera")
        self.world, self.camera, self.rig_name = world, camera, rig_name
        self.width, self.height = width, height
        self.baseline_m = float(world.model.camera(camera).ipd[0])  # 0: one camera
        self._data = mujoco.MjData(world.model)
        self._renderer: mujoco.Renderer | None = None
        focal = (height / 2) / np.tan(np.radians(world.model.camera(camera).fovy[0]) / 2)
        # Pixel centres at whole coordinates (OpenCV's and librealsense's convention): the optical axis meets the
        # image at its middle, half a pixel before width / 2 (the rendered depth of a plane shows the difference). A
        # stereo pair's: each eye's, the left's in the frame's pixels.
        self.intrinsics = PinholeIntrinsics(width, height, focal, focal, (width - 1) / 2, (height - 1) / 2)

    def _optical(self, rotation: np.ndarray, position: np.ndarray) -> np.ndarray:
        """4x4 pose of the optical frame (x right, y down, z forward; a stereo pair's left eye) from a MuJoCo camera's
        frame (it looks along its -z; a stereo pair's centre)."""
        pose = np.eye(4)
        pose[:3, :3] = rotation @ np.diag([1.0, -1.0, -1.0])
        pose[:3, 3] = position - self.baseline_m / 2 * rotation[:, 0]
        return pose

    @property
    def base_from_camera(self) -> np.ndarray:
        """4x4 pose of the optical frame (a stereo pair's left eye) in the rig's base frame, now (a wrist camera
        moves with the hand)."""
        with self.world.lock:
            camera = self.world.data.camera(self.camera)
            pose = self._optical(camera.xmat.reshape(3, 3), camera.xpos)
            return np.linalg.inv(self.world.base_pose(self.rig_name)) @ pose

    @property
    def mount(self) -> tuple[str, np.ndarray] | None:
        """(rig part, 4x4 pose of the optical frame (a stereo pair's left eye) in the part's base frame) of a camera
        mounted on a moving part (the wrist view), else None."""
        model = self.world.model
        camera = model.camera(self.camera)
        body = model.body(int(camera.bodyid[0]))
        if body.id == 0:
            return None
        rotation = Rotation.from_quat(camera.quat, scalar_first=True).as_matrix()
        return body.name.removeprefix(f"{self.rig_name}/").split("/", 1)[0], self._optical(rotation, camera.pos)

    def render(self) -> np.ndarray:
        """RGB uint8 (H, W, 3) of the world now; a stereo pair's (H, 2 W, 3), left eye | right eye."""
        renderer = self._update_scene()
        if not self.baseline_m:
            return renderer.render()
        cameras = renderer.scene.camera
        eyes = [{field: np.copy(getattr(camera, field)) for field in _GL_CAMERA_FIELDS} for camera in cameras]
        images = []
        for eye in eyes:  # both GL cameras made this eye: their average is the eye
            for camera in cameras:
                for field, value in eye.items():
                    setattr(camera, field, value)
            images.append(renderer.render())
        return np.concatenate(images, axis=1)

    def render_rgbd(self) -> tuple[np.ndarray, np.ndarray]:
        """Colour and depth of the world now (one camera, not a stereo pair), one scene: RGB uint8 (H, W, 3) and depth
        along the optical axis, uint16 millimetres (H, W, 1); 0 where nothing is seen within 65.535 m (as a RealSense
        marks no return)."""
        renderer = self._update_scene()
        rgb = renderer.render()
        renderer.enable_depth_rendering()
        try:
            depth_m = renderer.render()
        finally:
            renderer.disable_depth_rendering()
        model = self.world.model
        far_m = model.vis.map.zfar * model.stat.extent
        units = np.rint(depth_m / DEPTH_SCALE_M)
        seen = (depth_m < _NOTHING_SEEN * far_m) & (units <= np.iinfo(np.uint16).max)
        return rgb, np.where(seen, units, 0).astype(np.uint16)[..., None]

    def _update_scene(self) -> mujoco.Renderer:
        """The renderer (made on first use, in this thread), its scene the world now (its state copied under the
        world's lock)."""
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
        return self._renderer

    def close(self) -> None:
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None
