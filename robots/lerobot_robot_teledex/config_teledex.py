"""LeRobot configs for TeleDex robots: one arm, one hand, or a composite rig from a preset."""

from dataclasses import dataclass, field

from lerobot.cameras import CameraConfig
from lerobot.robots import RobotConfig

from teledex_lerobot.devices.factory import BACKENDS
from teledex_lerobot.devices.joint_device import SimDynamicsConfig
from teledex_lerobot.devices.real_config import RealHardwareConfig
from teledex_lerobot.presets import PartSpec, load_preset
from teledex_lerobot.world.world import WorldConfig

from .config_render_camera import TeledexRenderCameraConfig
from .config_world_camera import TeledexWorldCameraConfig

# "mujoco": every part in one MuJoCo world with the task's objects (--robot.world.task=...).
WORLD_BACKEND = "mujoco"


@dataclass(kw_only=True)
class TeledexRobotConfig(RobotConfig):
    """Fields shared by every TeleDex robot."""

    # "fake": instantaneous kinematic devices (unit tests); "sim": simulated devices with dynamics, latency, noise;
    # "real": the vendor-SDK drivers.
    backend: str = "sim"
    sim: SimDynamicsConfig = field(default_factory=SimDynamicsConfig)
    # backend="real": CAN interface/channel per part (--robot.real.arm.channel=can0, --robot.real.hand.interface=...),
    # supervision thresholds and device settings. Cameras (e.g. intelrealsense with serial_number_or_name) go in
    # `cameras`.
    real: RealHardwareConfig = field(default_factory=RealHardwareConfig)
    world: WorldConfig = field(default_factory=WorldConfig)
    # Safety: per command, a joint moves at most (its velocity limit x max_step_s) from its measured position.
    max_step_s: float = 0.1
    cameras: dict[str, CameraConfig] = field(default_factory=dict)

    def __post_init__(self):
        if self.backend not in (*BACKENDS, WORLD_BACKEND):
            raise ValueError(f"backend must be one of {(*BACKENDS, WORLD_BACKEND)} (got {self.backend!r})")
        if self.max_step_s <= 0:
            raise ValueError(f"max_step_s must be > 0 (got {self.max_step_s})")
        self.sim.validate()
        self.real.validate()
        if self.backend == WORLD_BACKEND:
            self.world.validate()
        super().__post_init__()


@dataclass(kw_only=True)
class TeledexPartConfig(TeledexRobotConfig):
    # A built-in model name or a path to a .urdf file.
    model: str = ""
    side: str = "right"
    # Joints to drive, in command order; None drives every actuated joint of the model.
    joints: list[str] | None = None
    # Start pose, rad (m for prismatic joints); joints not listed start at 0 (clipped to their limits).
    home: dict[str, float] = field(default_factory=dict)

    def part_spec(self) -> PartSpec:
        return PartSpec(self.model, self.side, tuple(self.joints) if self.joints else None, dict(self.home))


@RobotConfig.register_subclass("teledex_arm")
@dataclass(kw_only=True)
class TeledexArmConfig(TeledexPartConfig):
    model: str = "piper"


@RobotConfig.register_subclass("teledex_hand")
@dataclass(kw_only=True)
class TeledexHandConfig(TeledexPartConfig):
    model: str = "linkerhand_o6"


@RobotConfig.register_subclass("teledex")
@dataclass(kw_only=True)
class TeledexConfig(TeledexRobotConfig):
    """An arm + hand (+ cameras) rig described by a preset in configs/presets/ (or a path to a preset file)."""

    preset: str = "piper_linkerhand_o6_single"
    # With no --robot.cameras, the preset's cameras are attached; false records joints (and object states) only.
    preset_cameras: bool = True

    def __post_init__(self):
        preset = load_preset(self.preset)  # fails early, naming the available presets
        if not self.cameras and self.preset_cameras:
            camera = TeledexWorldCameraConfig if self.backend == WORLD_BACKEND else TeledexRenderCameraConfig
            self.cameras = {name: camera(**settings) for name, settings in preset.cameras.items()}
        super().__post_init__()
