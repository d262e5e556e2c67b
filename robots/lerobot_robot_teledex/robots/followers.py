"""teledex_followers: several TeleDex rigs recorded as one LeRobot robot (one master, several followers).

Design: the robot is a thin composite of ordinary `teledex` robots, one per follower, each keeping its own devices
and safety filter; every key and camera is prefixed "<follower>_". The input teleoperators build one control chain
per follower (each with its own strategy) and emit the same prefixed keys when given the same `followers`, so
teledex-record and lerobot-record record both rigs into one dataset with no change to either command.

With backend=mujoco the followers stand in one world (placed by the preset's `placements`), stepped as one: the first
follower lays out and judges its episodes and observes its objects; each renders its own cameras (a fixed view two
followers share is drawn by one world camera)."""

from dataclasses import dataclass, field, replace
from functools import cached_property, partial

import numpy as np
from lerobot.robots import Robot, RobotConfig
from lerobot.utils.decorators import check_if_already_connected, check_if_not_connected

from teledex_lerobot.clock import Clock
from teledex_lerobot.devices.joint_device import JointDevice
from teledex_lerobot.devices.real_config import RigPorts, check_distinct_ports
from teledex_lerobot.devices.registry import RealHardwareConfig
from teledex_lerobot.errors import ConfigError
from teledex_lerobot.presets import RigPlacement, load_preset, placed_bases, shared_world_cameras
from teledex_lerobot.station import open_station
from teledex_lerobot.viewer import LiveViewConfig
from teledex_lerobot.world.devices import make_shared_world_devices
from teledex_lerobot.world.world import WorldConfig, placed_rigs

from .config_teledex import WORLD_BACKEND, TeledexConfig
from .robot_world import RobotWorld
from .teledex_robot import Teledex


@RobotConfig.register_subclass("teledex_followers")
@dataclass(kw_only=True)
class TeledexFollowersConfig(RobotConfig):
    # follower name -> preset (configs/presets/ name or .yaml path)
    followers: dict[str, str] = field(default_factory=lambda: {"left": "piper_linkerhand_o6_single",
                                                               "right": "piper_linkerhand_o6_single"})
    # A preset of several rigs (e.g. bimanual_piper_linkerhand_l10): its followers and placements replace these.
    preset: str = ""
    # backend=mujoco: where each follower stands in the world (default: a row along the table's edge, 0.5 m apart)
    placements: dict[str, RigPlacement] = field(default_factory=dict)
    # backend=mujoco: the world they share, --robot.world.task=... (as --robot.type=teledex's)
    world: WorldConfig = field(default_factory=WorldConfig)
    backend: str = "sim"  # every follower's: fake, sim, real or mujoco (as --robot.type=teledex's backend)
    # Safety: per command, a joint moves at most (its velocity limit x max_step_s) from its measured position.
    max_step_s: float = 0.1
    with_cameras: bool = True  # each follower's preset cameras, prefixed
    # backend="real": each follower's CAN ports,
    # --robot.ports='{left: {arm: {channel: can0}, hand: {channel: can1}}, right: {arm: {channel: can2}, hand:
    # {channel: can3}}}' (interface defaults to socketcan); what they share is --robot.real.* (supervision, vendors).
    ports: dict[str, RigPorts] = field(default_factory=dict)
    # backend=real: what the followers share (supervision thresholds, vendor settings); their ports are in `ports`
    real: RealHardwareConfig = field(default_factory=RealHardwareConfig)
    # The operator's live view (Rerun), every follower in it: --robot.live_view.enabled=true.
    live_view: LiveViewConfig = field(default_factory=LiveViewConfig)
    # Where the teleoperators of this process find this robot (as --robot.type=teledex's); "" = the default.
    station: str = ""

    def __post_init__(self):
        if self.preset:
            followers = load_preset(self.preset).followers
            if not followers:
                raise ConfigError(f"Preset {self.preset!r} is one rig: use --robot.type=teledex --robot.preset="
                                  f"{self.preset}, or give --robot.followers")
            self.followers = dict(followers)
            self.placements = dict(load_preset(self.preset).placements)
        if not self.followers:
            raise ConfigError("--robot.followers is empty: name at least one follower, --robot.followers='{<name>: "
                              "<preset>}'")
        unplaced = sorted(set(self.placements) - set(self.followers))
        if unplaced:
            raise ConfigError(f"--robot.placements names {unplaced}, which are not followers: key them by the "
                              f"followers' names ({', '.join(self.followers)})")
        unknown = sorted(set(self.ports) - set(self.followers))
        if unknown:
            raise ConfigError(f"--robot.ports names {unknown}, which are not followers: key the ports by the "
                              f"followers' names ({', '.join(self.followers)})")
        if self.backend == "real":
            missing = [name for name in self.followers if name not in self.ports]
            if missing:
                raise ConfigError(f"backend=real needs each follower's CAN ports; missing for {', '.join(missing)}: "
                                  "--robot.ports='{" + ", ".join(f"{name}: {{arm: {{channel: can0}}, hand: "
                                                                 f"{{channel: can1}}}}" for name in self.followers)
                                  + "}' with each follower's own channels")
            for name, ports in self.ports.items():
                ports.arm.validate(f"ports.{name}.arm")
                ports.hand.validate(f"ports.{name}.hand")
            check_distinct_ports(self.ports, {name: _roles(preset) for name, preset in self.followers.items()})
        self.live_view.validate()
        self.world.validate()
        super().__post_init__()

    def follower_configs(self) -> dict[str, TeledexConfig]:
        """Each follower's rig config: its preset, the backend, limits and world they share (the first observes the
        world's objects), its own ports."""
        configs = {}
        for index, (name, preset) in enumerate(self.followers.items()):
            ports = self.ports.get(name, RigPorts())
            world = replace(self.world, observe_objects=self.world.observe_objects and index == 0)
            configs[name] = TeledexConfig(preset=preset, backend=self.backend, max_step_s=self.max_step_s,
                                          preset_cameras=self.with_cameras, world=world,
                                          real=replace(self.real, arm=ports.arm, hand=ports.hand))
        if self.backend == WORLD_BACKEND and self.with_cameras:  # one world: a fixed view followers share is one camera
            kept = shared_world_cameras(self.followers)
            for name, config in configs.items():
                for camera in [camera for camera in config.cameras if f"{name}_{camera}" not in kept]:
                    del config.cameras[camera]
        return configs

    def recording_fps(self) -> int | None:
        rates = {config.recording_fps() for config in self.follower_configs().values()}
        return rates.pop() if len(rates) == 1 else None  # followers at different rates: no rate of their own

    def camera_fps(self) -> dict[str, int]:
        return {f"{name}_{camera}": fps for name, config in self.follower_configs().items()
                for camera, fps in config.camera_fps().items()}


def _roles(preset: str) -> tuple[str, ...]:
    rig = load_preset(preset)
    return tuple(role for role in ("arm", "hand") if getattr(rig, role) is not None)


class TeledexFollowers(Robot):
    config_class = TeledexFollowersConfig
    name = "teledex_followers"

    def __init__(self, config: TeledexFollowersConfig):
        super().__init__(config)
        self.config = config
        # one station for every follower: each publishes its measured pose there, under its prefixed keys
        self.station = open_station(config.station, self)
        self.robots = {}
        configs = config.follower_configs()
        shared = config.backend == WORLD_BACKEND
        self._world_devices: dict[str, dict[str, JointDevice]] = {}  # backend=mujoco, while connecting
        for index, (name, robot_config) in enumerate(configs.items()):
            self.robots[name] = Teledex(
                robot_config, station=self.station,
                world=RobotWorld(robot_config.world, name, lays_out=index == 0) if shared else None,
                devices_from=partial(self._shared_world_devices, configs, name) if shared else None)
            self.robots[name].measured_key_prefix = f"{name}_"
        self.station.announce_rigs({f"{name}_": robot.rig_parts() for name, robot in self.robots.items()})
        self.cameras = {f"{name}_{cam}": camera for name, robot in self.robots.items()
                        for cam, camera in robot.cameras.items()}

    def _shared_world_devices(self, configs: dict[str, TeledexConfig], follower: str) -> dict[str, JointDevice]:
        """A follower's parts in the world every follower shares, built as the first follower connects."""
        if not self._world_devices:
            rigs = placed_rigs({name: robot.rig for name, robot in self.robots.items()}, self.config.placements)
            self._world_devices = make_shared_world_devices(rigs, configs, self.config.world)
        return self._world_devices[follower]

    @property
    def world(self) -> RobotWorld | None:
        """backend=mujoco: the world the followers share, as the follower that lays out its episodes holds it."""
        return next(iter(self.robots.values())).world

    @property
    def clock(self) -> Clock:
        return next(iter(self.robots.values())).clock

    def base_poses(self) -> dict[str, np.ndarray]:
        """Each follower's base in the first follower's base frame (4x4): where a shared world stands them, else
        where the placements say the station's bases stand (offset and yaw, as in the world)."""
        world = self.world
        if world is None or world.runner is None:
            return placed_bases(list(self.robots), self.config.placements)
        with world.runner.world.lock:
            poses = {name: world.runner.world.base_pose(name) for name in self.robots}
        first = np.linalg.inv(next(iter(poses.values())))
        return {name: first @ pose for name, pose in poses.items()}

    @check_if_not_connected
    def reset_episode(self, episode_index: int | None = None) -> int | None:
        """Start an episode: a shared world lays out its scene once, every follower starts from it (None without a
        world)."""
        first, *others = self.robots.values()
        seed = first.reset_episode(episode_index)
        if seed is not None:
            for robot in others:
                robot.begin_episode()
        return seed

    @cached_property
    def environment_state_keys(self) -> list[str]:
        return [f"{name}_{key}" for name, robot in self.robots.items() for key in robot.environment_state_keys]

    @cached_property
    def tactile_keys(self) -> list[str]:
        return [f"{name}_{key}" for name, robot in self.robots.items() for key in robot.tactile_keys]

    @cached_property
    def observation_features(self) -> dict:
        return {f"{name}_{key}": value for name, robot in self.robots.items()
                for key, value in robot.observation_features.items()}

    @cached_property
    def action_features(self) -> dict:
        return {f"{name}_{key}": value for name, robot in self.robots.items()
                for key, value in robot.action_features.items()}

    @property
    def is_connected(self) -> bool:
        return all(robot.is_connected for robot in self.robots.values())

    @check_if_already_connected
    def connect(self, calibrate: bool = True) -> None:
        if self.config.live_view.enabled:  # before the followers connect: each draws itself in it
            self.station.start_live_view(self.config.live_view)
        for robot in self.robots.values():
            robot.connect(calibrate)
        self.station.rig_bases = {f"{name}_": pose for name, pose in self.base_poses().items()}

    @property
    def is_calibrated(self) -> bool:
        return True

    def calibrate(self) -> None:
        pass

    def configure(self) -> None:
        pass

    @check_if_not_connected
    def get_observation(self) -> dict:
        return {f"{name}_{key}": value for name, robot in self.robots.items()
                for key, value in robot.get_observation().items()}

    @check_if_not_connected
    def send_action(self, action: dict) -> dict:
        sent = {}
        for name, robot in self.robots.items():
            prefix = f"{name}_"
            own = {key.removeprefix(prefix): value for key, value in action.items() if key.startswith(prefix)}
            sent.update({prefix + key: value for key, value in robot.send_action(own).items()})
        return sent

    def capture_timestamps_ns(self) -> dict[str, int]:
        """Every follower's parts, each a joint source of the sync check of its own: "<follower>_<role>"."""
        return {f"{name}_{role}": ns for name, robot in self.robots.items()
                for role, ns in robot.capture_timestamps_ns().items()}

    @property
    def fault_lookback_ns(self) -> int:
        return max(robot.fault_lookback_ns for robot in self.robots.values())

    def active_faults(self) -> dict:
        return {f"{name}_{role}": fault for name, robot in self.robots.items()
                for role, fault in robot.active_faults().items()}

    def device_faults(self) -> dict[str, str]:
        return {part: fault.message for part, fault in self.active_faults().items()}

    def clear_faults(self) -> dict[str, str]:
        for robot in self.robots.values():
            robot.clear_faults()
        return self.device_faults()

    def device_health(self) -> dict[str, dict]:
        return {f"{name}_{role}": health for name, robot in self.robots.items()
                for role, health in robot.device_health().items()}

    def emergency_stop(self, engaged: bool = True) -> None:
        for robot in self.robots.values():
            robot.emergency_stop(engaged)

    @check_if_not_connected
    def disconnect(self) -> None:
        for robot in self.robots.values():
            robot.disconnect()
        self._world_devices = {}
        self.station.rig_bases = {}
        if self.config.live_view.enabled:
            self.station.stop_live_view()
