"""What the live view shows, where, and how often. Given once, on the robot: --robot.live_view.enabled=true."""

import os
import sys
from dataclasses import dataclass

from ..errors import ConfigError

VIEWERS = ("spawn", "web", "connect", "none")


@dataclass
class LiveViewConfig:
    # Show the live view (Rerun) of this robot, the input driving it and the recording.
    enabled: bool = False
    # Where it is shown: "spawn" the Rerun viewer app on this desktop; "web" serve the web viewer on this machine
    # (open the http://127.0.0.1 address it logs; from another machine through `ssh -L`); "connect" to a Rerun
    # viewer already running at `url`; "none" (only the .rrd files of `rrd_dir`).
    viewer: str = "spawn"
    url: str = "rerun+http://127.0.0.1:9876/proxy"  # viewer=connect: the viewer's gRPC address
    grpc_port: int = 9876  # spawn / web: where the viewer listens for the data (127.0.0.1 only)
    web_port: int = 9090  # web: the page's port (127.0.0.1 only)
    # Past this the viewer drops its oldest data: a share of the RAM (25 percent, written with a percent sign) or a
    # size such as 4GB.
    memory_limit: str = "25%"
    # Save what the view shows: one .rrd per episode (episode_000003.rrd) when teledex-record marks episodes; under
    # commands that mark none (lerobot-teleoperate, lerobot-record) one session_<time>.rrd. "" = save nothing.
    rrd_dir: str = ""
    # The 3D scene, hands, joint plots and status are drawn at most this often; camera images at most image_max_hz
    # (JPEG). The control loop's rate is untouched: what comes faster is skipped by the view's own thread.
    max_hz: float = 30.0
    image_max_hz: float = 10.0  # camera images are sent to the view at most this often
    jpeg_quality: int = 80  # of the camera images sent to the view, 1-100

    def validate(self) -> None:
        if self.viewer not in VIEWERS:
            raise ConfigError(f"live_view.viewer must be one of {VIEWERS} (got {self.viewer!r})")
        if self.viewer == "connect" and not self.url.startswith(("rerun://", "rerun+http://", "rerun+https://")):
            raise ConfigError(f"live_view.url must look like rerun+http://127.0.0.1:9876/proxy (got {self.url!r})")
        for name in ("grpc_port", "web_port"):
            if not 0 < getattr(self, name) < 65536:
                raise ConfigError(f"live_view.{name} must be a port number 1-65535 (got {getattr(self, name)})")
        if self.max_hz <= 0 or self.image_max_hz <= 0:
            raise ConfigError(f"live_view.max_hz and image_max_hz must be > 0 (got {self.max_hz}, {self.image_max_hz})")
        if not 1 <= self.jpeg_quality <= 100:
            raise ConfigError(f"live_view.jpeg_quality must be 1-100 (got {self.jpeg_quality})")
        if self.enabled and self.viewer == "none" and not self.rrd_dir:
            raise ConfigError("live_view.viewer=none shows nothing: give live_view.rrd_dir to save .rrd files, or "
                              "choose viewer=spawn, web or connect")
        if self.enabled and self.viewer == "spawn" and not has_desktop():
            raise ConfigError("live_view.viewer=spawn opens a window, but there is no desktop here (DISPLAY and "
                              "WAYLAND_DISPLAY are unset): use live_view.viewer=web and open the address it logs")


def has_desktop() -> bool:
    """Whether a window can open: always off Linux; on Linux, with an X11 or Wayland display."""
    return not sys.platform.startswith("linux") or bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
