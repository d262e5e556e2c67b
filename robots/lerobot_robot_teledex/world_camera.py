"""A camera that renders the MuJoCo world the robot runs in (EGL, headless), in its own capture thread."""

from teledex_lerobot.world.camera import WorldRenderer
from teledex_lerobot.world.devices import current_world

from .config_world_camera import TeledexWorldCameraConfig
from .render_camera import TeledexRenderCamera


class TeledexWorldCamera(TeledexRenderCamera):
    """The robot (backend mujoco) attaches it after its devices have started the world."""

    def __init__(self, config: TeledexWorldCameraConfig):
        super().__init__(config)
        self.name = ""

    def __str__(self) -> str:
        return f"TeledexWorldCamera({self.config.view})"

    def attach_scene(self, scene, centre_m, distance_m) -> None:
        world = current_world()
        name = next((n for n, view in world.cameras.items() if view == self.config.view), None)
        if name is None:
            raise RuntimeError(f"{self}: the world has no camera with view {self.config.view!r} "
                               f"(its cameras: {world.cameras}); name it in the robot's cameras.")
        self.renderer = WorldRenderer(world, name, self.width, self.height)
        self._scene = lambda: None

    def disconnect(self) -> None:
        super().disconnect()
        self.renderer = None  # its OpenGL context belonged to the capture thread, which has ended
