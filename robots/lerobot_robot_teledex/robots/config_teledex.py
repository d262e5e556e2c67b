"""LeRobot configs for TeleDex robots: one arm, one hand, or a composite rig from a preset."""

from dataclasses import dataclass, field
from typing import ClassVar

from lerobot.cameras import CameraConfig
from lerobot.robots import RobotConfig

from teledex_lerobot.devices.registry import BACKENDS, Backend, RealHardwareConfig, register_backend
from teledex_lerobot.devices.simulated import SimDynamicsConfig
from teledex_lerobot.errors import ConfigError
from teledex_lerobot.kinematics.catalogue import BUILTIN_MODELS
from teledex_lerobot.presets import PartSpec, load_preset
from teledex_lerobot.viewer import LiveViewConfig
from teledex_lerobot.world.devices import make_world_devices
from teledex_lerobot.world.world import WorldConfig

from ..cameras.config_render_camera import TeledexRenderCameraConfig
from ..cameras.config_world_camera import TeledexWorldCameraConfig

# "mujoco": every part in one MuJoCo world with the task's objects (--robot.world.task=...).
WORLD_BACKEND = "mujoco"
register_backend(WORLD_BACKEND, Backend(build_rig=make_world_devices))


@dataclass(kw_only=True)
class TeledexRobotConfig(RobotConfig):
    """Fields shared by every TeleDex robot."""

    # "fake": instantaneous kinematic devices (unit tests); "sim": first-order simulated joints with latency, noise
    # and fault injection (devices/simulated.py); "real": the vendor drivers (devices/<vendor>/); "mujoco": physics.
    backend: str = "sim"
    sim: SimDynamicsConfig = field(default_factory=SimDynamicsConfig)  # backend=sim: --robot.sim.latency_ms=...
    # backend="real": CAN interface/channel per part (--robot.real.arm.channel=can0, --robot.real.hand.interface=...),
    # supervision thresholds (--robot.real.feedback_timeout_ms=...) and each vendor's settings
    # (--robot.real.agilex.speed_percent=..., --robot.real.linkerhand.tactile=true, --robot.real.linker_a7.poll_hz=...).
    # Cameras (e.g. intelrealsense with serial_number_or_name) go in `cameras`.
    real: RealHardwareConfig = field(default_factory=RealHardwareConfig)
    world: WorldConfig = field(default_factory=WorldConfig)  # backend=mujoco: --robot.world.task=...
    # Safety: per command, a joint moves at most (its velocity limit x max_step_s) from its measured position.
    max_step_s: float = 0.1
    # name -> LeRobot camera config (--robot.cameras='{wrist: {type: opencv, index_or_path: 0}}'); {} = the preset's
    cameras: dict[str, CameraConfig] = field(default_factory=dict)
    # A camera whose newest frame is older than this (ms) is in fault (stalled), as is one whose read fails (lost):
    # the recording's fault policy handles it like an arm's. Twice the sync check's default max_age_ms: a rendered
    # camera on a loaded machine can take a second for a frame; a real camera silent this long is starved or hung.
    camera_stall_ms: float = 2000.0
    # The operator's live view (Rerun) of this robot, its input and the recording: --robot.live_view.enabled=true.
    live_view: LiveViewConfig = field(default_factory=LiveViewConfig)
    # Where the teleoperators of this process find this robot (its rig, measured pose, world, live view): give each
    # robot of a process its own, and its teleoperator the same --teleop.station. "" = the process's default.
    station: str = ""

    def __post_init__(self):
        if self.backend not in BACKENDS:
            raise ConfigError(f"--robot.backend={self.backend!r}: the backend must be one of {tuple(BACKENDS)}")
        if self.max_step_s <= 0:
            raise ConfigError(f"--robot.max_step_s={self.max_step_s}: max_step_s must be > 0 (seconds of motion at the "
                              "joints' velocity limits one command may ask for; default 0.1)")
        if not self.camera_stall_ms > 0:
            raise ConfigError(f"--robot.camera_stall_ms={self.camera_stall_ms}: give the longest a camera may go "
                              "without a new frame, in ms (> 0; default 2000)")
        self.sim.validate()
        self.real.validate()
        self.live_view.validate()
        if self.backend == WORLD_BACKEND:
            self.world.validate()
        for name, camera in self.cameras.items():
            _check_depth_camera(name, camera)
        super().__post_init__()

    def recording_fps(self) -> int | None:
        return None  # one arm or hand: no preset, so no rate of its own

    def camera_fps(self) -> dict[str, int]:
        return {name: camera.fps for name, camera in self.cameras.items() if camera.fps}


def _check_depth_camera(name: str, camera: CameraConfig) -> None:
    """A TeleDex robot records each camera's colour, and its depth aligned to that colour."""
    if not getattr(camera, "use_rgb", True):
        raise ConfigError(f"cameras.{name}: use_rgb=false is not recorded by TeleDex robots (they record a camera's "
                          "colour, and its depth aligned to it): set use_rgb=true")
    if camera.type == "intelrealsense" and getattr(camera, "use_depth", False):
        raise ConfigError(f"cameras.{name}: LeRobot's intelrealsense camera reads depth unaligned to the colour image "
                          "(and in the sensor's unit): use type teledex_realsense, the same camera and settings with "
                          "depth aligned to colour, in millimetres")


@dataclass(kw_only=True)
class TeledexPartConfig(TeledexRobotConfig):
    # A built-in model name or a path to a .urdf file.
    model: str = ""
    side: str = "right"  # right or left
    # Joints to drive, in command order; None drives every actuated joint of the model.
    joints: list[str] | None = None
    # Start pose, rad (m for prismatic joints); joints not listed start at 0 (clipped to their limits).
    home: dict[str, float] = field(default_factory=dict)

    role: ClassVar[str]  # the part this robot type drives: "arm" or "hand"

    def __post_init__(self):
        info = BUILTIN_MODELS.get(self.model)
        if info is not None and info.kind != self.role:  # before the robot is built: the flag named, not the rig
            models = ", ".join(name for name, each in BUILTIN_MODELS.items() if each.kind == self.role)
            other = {"arm": "hand", "hand": "arm"}[self.role]
            raise ConfigError(f"--robot.model={self.model} is {_a(info.kind)}, and --robot.type=teledex_{self.role} "
                              f"drives {_a(self.role)}: give {_a(self.role)} ({models}) or its URDF's path, or use "
                              f"--robot.type=teledex_{other}")
        super().__post_init__()

    def part_spec(self) -> PartSpec:
        return PartSpec(self.model, self.side, tuple(self.joints) if self.joints else None, dict(self.home))


def _a(part: str) -> str:
    return f"an {part}" if part == "arm" else f"a {part}"


@RobotConfig.register_subclass("teledex_arm")
@dataclass(kw_only=True)
class TeledexArmConfig(TeledexPartConfig):
    model: str = "piper"
    role: ClassVar[str] = "arm"


@RobotConfig.register_subclass("teledex_hand")
@dataclass(kw_only=True)
class TeledexHandConfig(TeledexPartConfig):
    model: str = "linkerhand_o6"
    role: ClassVar[str] = "hand"


@RobotConfig.register_subclass("teledex")
@dataclass(kw_only=True)
class TeledexConfig(TeledexRobotConfig):
    """An arm + hand (+ cameras) rig described by a preset in configs/presets/ (or a path to a preset file)."""

    preset: str = "piper_linkerhand_o6_single"  # a name in configs/presets/ or a preset .yaml path
    # With no --robot.cameras, the preset's cameras are attached; false records joints (and object states) only.
    preset_cameras: bool = True

    def __post_init__(self):
        preset = load_preset(self.preset)  # fails early, naming the available presets
        if preset.followers:
            raise ConfigError(f"Preset {self.preset!r} is several rigs ({', '.join(preset.followers)}): use "
                              f"--robot.type=teledex_followers --robot.preset={self.preset}")
        if not self.cameras and self.preset_cameras:
            camera = TeledexWorldCameraConfig if self.backend == WORLD_BACKEND else TeledexRenderCameraConfig
            self.cameras = {name: camera(**settings) for name, settings in preset.cameras.items()}
        super().__post_init__()

    def recording_fps(self) -> int | None:
        return load_preset(self.preset).fps
