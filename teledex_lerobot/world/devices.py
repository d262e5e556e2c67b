"""The world behind our robot classes: the physics, stepped in real time by its own thread or in lockstep by the
recorder, and one JointDevice per rig part.

The devices behave like the simulated ones (devices/joint_device.py): a command takes effect after latency_ms,
measurements are published at the part's feedback rate with noise, stamped at capture on the runner's clock, and
read_nearest picks from the recent ones. So sync validation judges world recordings as it judges hardware.
`make_world_devices(rig, robot_config)` builds every part at once over one shared world
(`make_shared_world_devices`: every part of several rigs, teledex_followers' followers), each registered with the
runner as it is built: the physics thread, which starts when the first part connects and stops when the last
disconnects, iterates parts that never change under it. The robot that connects them puts their runner in its
station (teledex_lerobot/station.py), where its teleoperators find it.

Clocks (--robot.world.clock): real_time, the physics thread keeps pace with the wall clock (a person drives); lockstep,
nothing moves until the recorder calls `advance(duration_ns)`, which steps the physics exactly that long on a
LockstepClock (a script or a policy drives). auto is real time unless the recorder resolves it (teledex-record picks
lockstep for a scripted teleoperator).
"""

import logging
import threading
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..clock import MONOTONIC, Clock, LockstepClock
from ..devices.joint_device import JointDevice, JointState
from ..devices.simulated import DEFAULT_FEEDBACK_HZ, LatentJointDevice, SimDynamicsConfig
from ..rig import Rig
from .station_timing import Transport
from .world import LOCKSTEP, PlacedRig, World, WorldConfig, part_key

logger = logging.getLogger(__name__)

class WorldRunner:
    """Steps the world, in real time in its own thread or in lockstep when advanced; publishes measurements to the
    devices at their rates, stamped on `clock`."""

    def __init__(self, world: World, lockstep: bool = False):
        self.world = world
        self.lockstep = lockstep
        self._lockstep_clock = LockstepClock() if lockstep else None  # what advance() moves
        self.clock: Clock = self._lockstep_clock or MONOTONIC
        # every part, registered as it is built (before the physics thread can run); the connected ones keep it running
        self.devices: dict[str, WorldJointDevice] = {}
        self._connected: set[str] = set()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._started = False
        self._next_publish_ns: dict[str, int] = {}  # per part, on the clock
        self.behind_s = 0.0  # how far physics lags the wall clock (a machine too slow for real time)
        self.resets = 0  # episodes laid out: what a device keeps from before the last one is stale

    def register(self, device: "WorldJointDevice") -> None:
        if self._started:
            raise RuntimeError(f"part {device.role!r} registered with a running world: build every part first")
        self.devices[device.role] = device

    def connected(self, role: str) -> None:
        """A part connected: the world runs from the first."""
        self._connected.add(role)
        self.start()

    def disconnected(self, role: str) -> None:
        """A part disconnected: the world stops with the last."""
        self._connected.discard(role)
        if not self._connected:
            self.stop()

    def start(self) -> None:
        if self._started:
            return
        self._started = True
        if not self.lockstep:
            self._stop.clear()
            self._thread = threading.Thread(target=self._run, name="world-physics", daemon=True)
            self._thread.start()

    def reset_episode(self, seed: int | None = None) -> int:
        """Lay out a new episode (World.reset) with the robot at home. Commands still in flight and measurements
        from before are forgotten: the robot stays home until the next command, and nothing captured before the
        reset can reach an observation of the new episode."""
        with self.world.lock:
            seed = self.world.reset(seed)
            self.resets += 1
            now = self.clock.now_ns()
            for role, device in self.devices.items():
                device.forget_history()
                device.publish(self.world.joint_positions(role), self.world.joint_velocities(role), now,
                               at_once=True)
                self._next_publish_ns[role] = now + device.feedback_period_ns
        return seed

    def advance(self, duration_ns: int) -> None:
        """Lockstep: step the physics by duration_ns (whole physics steps), the clock with it."""
        clock = self._lockstep_clock
        if clock is None:
            raise RuntimeError("advance() is for a lockstep world; a real-time world steps itself")
        dt_ns = int(round(self.world.model.opt.timestep * 1e9))
        with self.world.lock:
            for _ in range(max(1, round(duration_ns / dt_ns))):
                self._physics_step(clock.now_ns(), dt_ns)
                clock.advance(dt_ns)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2.0)
            self._thread = None
        self._started = False

    def _physics_step(self, tick_ns: int, dt_ns: int) -> None:
        """One physics step from tick_ns: commands due by then take effect; a part whose feedback is due publishes
        its state at the step's end (world lock held)."""
        world = self.world
        for device in self.devices.values():
            device.apply_due(tick_ns)
        world.step(1)
        for role, device in self.devices.items():
            if tick_ns + dt_ns >= self._next_publish_ns.setdefault(role, tick_ns):
                self._next_publish_ns[role] += device.feedback_period_ns
                device.publish(world.joint_positions(role), world.joint_velocities(role), tick_ns + dt_ns)
            device.deliver(tick_ns + dt_ns)

    def _run(self) -> None:
        dt_ns = int(round(self.world.model.opt.timestep * 1e9))
        started_ns = self.clock.now_ns()
        sim_ns = 0
        while not self._stop.is_set():
            wall_ns = self.clock.now_ns() - started_ns
            if sim_ns > wall_ns:
                self._stop.wait((sim_ns - wall_ns) / 1e9)
                continue
            with self.world.lock:
                self._physics_step(started_ns + sim_ns, dt_ns)
            sim_ns += dt_ns
            self.behind_s = (self.clock.now_ns() - started_ns - sim_ns) / 1e9
            if self.behind_s > 0.5:  # never run a burst to catch up: drop the backlog and say so
                logger.warning("World physics is %.1f s behind real time; skipping ahead", self.behind_s)
                started_ns += int(self.behind_s * 1e9)
                self._next_publish_ns = {role: started_ns + sim_ns for role in self._next_publish_ns}


class WorldJointDevice(LatentJointDevice):
    """One rig part's servos in the shared world; `role` is the part's key in the world (world.part_key)."""

    def __init__(self, runner: WorldRunner, role: str, dynamics: SimDynamicsConfig, feedback_hz: float):
        world = runner.world
        super().__init__(world.joint_positions(role), dynamics.latency_ms, runner.clock)
        self.runner, self.role, self.dynamics = runner, role, dynamics
        self.feedback_hz = dynamics.feedback_hz or feedback_hz
        self.feedback_period_ns = int(round(1e9 / self.feedback_hz))
        # a lockstep run is deterministic per seed: its noise too, unless a seed is given
        seed = dynamics.seed if dynamics.seed is not None or not runner.lockstep else 0
        self._rng = np.random.default_rng(seed)
        timing = world.config.timing  # a station's bus delivers each measurement some ms after its capture
        self._bus = Transport(timing.joint_latency_ms, timing.joint_jitter_ms, 0.0, timing.seed, role) \
            if timing.joint_latency_ms or timing.joint_jitter_ms else None
        runner.register(self)

    def connect(self) -> None:
        self.runner.connected(self.role)

    def disconnect(self) -> None:
        self.runner.disconnected(self.role)

    # ---- called by the physics thread, world lock held -----------------------------------------------------------

    def apply_due(self, tick_ns: int) -> None:
        with self._lock:
            target = self._take_due(tick_ns)
        if target is not None:
            self.runner.world.set_targets(self.role, target)

    def publish(self, positions: np.ndarray, velocities: np.ndarray, capture_ns: int, at_once: bool = False) -> None:
        """A measurement captured at capture_ns: readable now, or when the station's bus delivers it (`at_once`: the
        state an episode starts from)."""
        if self._rng.random() < self.dynamics.dropout_probability:
            return
        noise = self._rng.normal(0.0, self.dynamics.noise_std, self.dof) if self.dynamics.noise_std else 0.0
        state = JointState(positions + noise, velocities, capture_ns)
        if self._bus is not None and not at_once:
            self._bus.send(state, capture_ns)
            return
        with self._lock:
            self._publish(state)

    def deliver(self, now_ns: int) -> None:
        """The measurements the station's bus has delivered by now_ns become readable."""
        if self._bus is None:
            return
        arrived = self._bus.arrived(now_ns)
        with self._lock:
            for state in arrived:
                self._publish(state)

    def forget_history(self) -> None:
        super().forget_history()
        if self._bus is not None:
            self._bus.clear()


def make_world_devices(rig: Rig, robot_config) -> dict[str, JointDevice]:
    """Every part of the rig at once, over one new world (robot_config: a TeledexRobotConfig with `world` and
    `sim` fields; the cameras it names become the world's cameras)."""
    world_config: WorldConfig = robot_config.world
    views = {name: getattr(camera, "view", "oblique") for name, camera in robot_config.cameras.items()}
    baselines = {name: getattr(camera, "stereo_baseline_m", 0.0) for name, camera in robot_config.cameras.items()}
    world = World(rig, world_config, views or None, baselines)
    runner = WorldRunner(world, lockstep=world_config.clock == LOCKSTEP)
    return {role: WorldJointDevice(runner, role, robot_config.sim, DEFAULT_FEEDBACK_HZ[role])
            for role in rig.parts}


def make_shared_world_devices(rigs: Mapping[str, PlacedRig], robot_configs: Mapping[str, Any],
                              world_config: WorldConfig) -> dict[str, dict[str, JointDevice]]:
    """Every part of several rigs over one new world, by rig name then role (robot_configs: each rig's
    TeledexRobotConfig, whose `sim` its parts take and whose cameras become the world's: "<rig>_<camera>", a wrist
    camera on that rig's hand)."""
    views: dict[str, str] = {}
    baselines: dict[str, float] = {}
    camera_rigs: dict[str, str] = {}
    for rig_name, robot_config in robot_configs.items():
        for camera_name, camera in robot_config.cameras.items():
            name = f"{rig_name}_{camera_name}"
            view = getattr(camera, "view", "oblique")
            views[name] = view
            baselines[name] = getattr(camera, "stereo_baseline_m", 0.0)
            camera_rigs[name] = rig_name
    world = World(rigs, world_config, views or None, baselines, camera_rigs)
    runner = WorldRunner(world, lockstep=world_config.clock == LOCKSTEP)
    return {rig_name: {role: WorldJointDevice(runner, part_key(rig_name, role), robot_configs[rig_name].sim,
                                              DEFAULT_FEEDBACK_HZ[role])
                       for role in placed.rig.parts}
            for rig_name, placed in rigs.items()}
