"""The world behind our robot classes: a real-time physics thread and one JointDevice per rig part.

The devices behave like the simulated ones (devices/joint_device.py): a command takes effect after latency_ms,
measurements are published at the part's feedback rate with noise, stamped with clock.now_ns at capture, and
read_nearest picks from the recent ones. So sync validation judges world recordings as it judges hardware.
`make_world_devices(rig, robot_config)` builds every part at once over one shared world.
"""

import logging
import threading

import numpy as np

from ..clock import now_ns
from ..devices.joint_device import JointDevice, JointState
from ..devices.simulated import DEFAULT_FEEDBACK_HZ, LatentJointDevice, SimDynamicsConfig
from ..rig import Rig
from .world import World, WorldConfig

logger = logging.getLogger(__name__)

_current_runner: "WorldRunner | None" = None


def current_runner() -> "WorldRunner":
    """The runner of the world the connected robot built (the world camera and the scripted expert use it)."""
    if _current_runner is None:
        raise RuntimeError("No MuJoCo world is running: connect a robot with --robot.backend=mujoco first (the "
                           "world camera and the world expert teleoperator need it).")
    return _current_runner


def current_world() -> World:
    return current_runner().world


class WorldRunner:
    """Steps the world in real time in its own thread; publishes measurements to the devices at their rates."""

    def __init__(self, world: World, dynamics: SimDynamicsConfig):
        self.world = world
        self.dynamics = dynamics
        self.devices: dict[str, "WorldJointDevice"] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.behind_s = 0.0  # how far physics lags the wall clock (a machine too slow for real time)

    def start(self) -> None:
        global _current_runner
        if self._thread is not None:
            return
        _current_runner = self
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="world-physics", daemon=True)
        self._thread.start()

    def reset_episode(self, seed: int | None = None) -> int:
        """Lay out a new episode (World.reset) with the robot at home; commands still in flight are dropped, so
        the robot stays home until the next command."""
        with self.world.lock:
            for device in self.devices.values():
                device.drop_pending()
            seed = self.world.reset(seed)
            for role, device in self.devices.items():
                device.publish(self.world.joint_positions(role), self.world.joint_velocities(role), now_ns())
        return seed

    def stop(self) -> None:
        global _current_runner
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2.0)
            self._thread = None
        if _current_runner is self:
            _current_runner = None

    def _run(self) -> None:
        world = self.world
        dt_ns = int(world.model.opt.timestep * 1e9)
        next_publish: dict[str, int] = {}  # parts connect one by one, while the thread already runs
        started_ns = now_ns()
        sim_ns = 0
        while not self._stop.is_set():
            wall_ns = now_ns() - started_ns
            if sim_ns > wall_ns:
                self._stop.wait((sim_ns - wall_ns) / 1e9)
                continue
            tick_ns = started_ns + sim_ns
            with world.lock:
                for device in self.devices.values():
                    device.apply_due(tick_ns)
                world.step(1)
                for role, device in self.devices.items():
                    if sim_ns >= next_publish.get(role, 0):
                        next_publish[role] = sim_ns + int(1e9 / device.feedback_hz)
                        device.publish(world.joint_positions(role), world.joint_velocities(role), tick_ns)
            sim_ns += dt_ns
            self.behind_s = (now_ns() - started_ns - sim_ns) / 1e9
            if self.behind_s > 0.5:  # never run a burst to catch up: drop the backlog and say so
                logger.warning("World physics is %.1f s behind real time; skipping ahead", self.behind_s)
                started_ns += int(self.behind_s * 1e9)


class WorldJointDevice(LatentJointDevice):
    """One rig part's servos in the shared world."""

    def __init__(self, runner: WorldRunner, role: str, dynamics: SimDynamicsConfig, feedback_hz: float):
        world = runner.world
        super().__init__(world.joint_positions(role), dynamics.latency_ms)
        self.runner, self.role, self.dynamics = runner, role, dynamics
        self.feedback_hz = dynamics.feedback_hz or feedback_hz
        self._rng = np.random.default_rng(dynamics.seed)

    def connect(self) -> None:
        self.runner.devices[self.role] = self
        self.runner.start()

    def disconnect(self) -> None:
        self.runner.devices.pop(self.role, None)
        if not self.runner.devices:
            self.runner.stop()

    def drop_pending(self) -> None:
        with self._lock:
            self._pending.clear()

    # ---- called by the physics thread, world lock held -----------------------------------------------------------

    def apply_due(self, tick_ns: int) -> None:
        with self._lock:
            target = self._take_due(tick_ns)
        if target is not None:
            self.runner.world.set_targets(self.role, target)

    def publish(self, positions: np.ndarray, velocities: np.ndarray, capture_ns: int) -> None:
        if self._rng.random() < self.dynamics.dropout_probability:
            return
        noise = self._rng.normal(0.0, self.dynamics.noise_std, self.dof) if self.dynamics.noise_std else 0.0
        state = JointState(positions + noise, velocities, capture_ns)
        with self._lock:
            self._publish(state)


def make_world_devices(rig: Rig, robot_config) -> dict[str, JointDevice]:
    """Every part of the rig at once, over one new world (robot_config: a TeledexRobotConfig with `world` and
    `sim` fields; the cameras it names become the world's cameras)."""
    world_config: WorldConfig = robot_config.world
    views = {name: getattr(camera, "view", "oblique") for name, camera in robot_config.cameras.items()}
    world = World(rig, world_config, views or None)
    runner = WorldRunner(world, robot_config.sim)
    return {role: WorldJointDevice(runner, role, robot_config.sim, DEFAULT_FEEDBACK_HZ[role])
            for role in rig.parts}
