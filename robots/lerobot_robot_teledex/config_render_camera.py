"""Config of the simulated camera that renders a TeleDex rig."""

from dataclasses import dataclass

from lerobot.cameras import CameraConfig


@CameraConfig.register_subclass("teledex_render")
@dataclass(kw_only=True)
class TeledexRenderCameraConfig(CameraConfig):
    width: int | None = 320
    height: int | None = 240
    fps: int | None = 30
    # Fixed viewpoint around the rig: front, side, top or oblique.
    view: str = "front"
    # Delay between the state a frame shows and the frame's availability, like a real camera pipeline.
    latency_ms: float = 0.0
