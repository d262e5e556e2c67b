"""Config of the simulated camera that renders a TeleDex rig."""

import math
from dataclasses import dataclass

from lerobot.cameras import CameraConfig

from teledex_lerobot.errors import ConfigError

# Wider than any stereo camera head (a ZED 2's baseline is 0.12 m, a person's eyes 0.063 m): more is a slip of unit.
MAX_STEREO_BASELINE_M = 0.3


@CameraConfig.register_subclass("teledex_render")
@dataclass(kw_only=True)
class TeledexRenderCameraConfig(CameraConfig):
    # The frame's size in pixels (each eye's, for a stereo pair) and rate: always set, as a rendered camera has no
    # size or rate of its own to fall back on.
    width: int = 320
    height: int = 240
    fps: int = 30
    # Fixed viewpoint around the rig: front, side, top or oblique.
    view: str = "front"
    # Delay between the state a frame shows and the frame's availability, like a real camera pipeline.
    latency_ms: float = 0.0
    # > 0: a stereo pair this far apart (m; teledex_world only), delivered as one side-by-side image, left eye | right
    # eye (a ZED camera's convention, and the headset's per-eye view): `width` is then each eye's, the frame
    # 2 x width wide. 0: one camera.
    stereo_baseline_m: float = 0.0

    def __post_init__(self) -> None:
        if not (math.isfinite(self.stereo_baseline_m) and 0 <= self.stereo_baseline_m <= MAX_STEREO_BASELINE_M):
            raise ConfigError(f"stereo_baseline_m={self.stereo_baseline_m} (camera view {self.view!r}) is not a "
                              f"stereo camera's baseline: give the distance between its eyes in metres, 0 < b <= "
                              f"{MAX_STEREO_BASELINE_M} (a ZED 2: 0.12), or 0 for one camera")
