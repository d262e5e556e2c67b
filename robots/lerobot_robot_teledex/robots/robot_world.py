"""backend=mujoco: the MuJoCo world a TeleDex robot's devices share, as the robot holds it (`robot.world`).

The robot drives its parts through their joint devices whatever the backend; what only a simulated world does is
here: it lays out each episode (reset_episode), judges it once per observation (episode_outcome), runs in lockstep
when its clock says so (advance), describes the episode for its metadata (world_episode), gives the scene's object
poses as observations, and, under lerobot-replay, lays out the replayed episode's own scene and says how the replay
went (replay_layout.py). It answers capabilities.SimulatedWorld, which the recording asks of a robot's world.

In a world of several rigs (teledex_followers, backend=mujoco) each follower holds one for its rig (`rig_name`); the
first lays out and judges the episodes (`lays_out`), the others only run on the world's clock and draw their rig.
"""

from collections.abc import Mapping
from dataclasses import asdict
from functools import cached_property

import numpy as np
from lerobot.utils.errors import DeviceNotConnectedError

from teledex_lerobot.clock import MONOTONIC, Clock
from teledex_lerobot.devices.joint_device import JointDevice
from teledex_lerobot.errors import ConfigError
from teledex_lerobot.station import DrawnObject, Station
from teledex_lerobot.world.devices import WorldJointDevice, WorldRunner
from teledex_lerobot.world.episode import EpisodeOutcome
from teledex_lerobot.world.world import WorldConfig, object_state_names

from .replay_layout import ReplayedEpisode, replayed_episode


class RobotWorld:
    def __init__(self, config: WorldConfig, rig_name: str = "", lays_out: bool = True):
        self.config = config
        self.rig_name = rig_name  # its rig's name in the world ("" in a world of one)
        self.lays_out = lays_out
        self.runner: WorldRunner | None = None  # while the robot is connected
        self.outcome: EpisodeOutcome | None = None  # how the episode is going, judged once per observation
        self._replaying: ReplayedEpisode | None = None  # lerobot-replay of a world episode (replay_layout.py)

    def __str__(self) -> str:
        return f"the MuJoCo world ({self.config.task})"

    @cached_property  # read by every observation; naming them builds the task
    def environment_state_keys(self) -> list[str]:
        """With world.observe_objects: the task's object poses (observation values about the scene, not the robot:
        teledex-record writes them to observation.environment_state)."""
        return object_state_names(self.config.task, self.config.observe_relations) if self.config.observe_objects \
            else []

    @property
    def running(self) -> WorldRunner:
        """The runner stepping the world, while the robot is connected."""
        if self.runner is None:
            raise DeviceNotConnectedError(f"{self} is not running: connect the robot first (robot.connect())")
        return self.runner

    @property
    def clock(self) -> Clock:
        """The world's clock (a lockstep world's own), else the machine's."""
        return self.runner.clock if self.runner is not None else MONOTONIC

    @property
    def lockstep(self) -> bool:
        """Nothing moves until advance() is called (--robot.world.clock=lockstep)."""
        return self.runner is not None and self.runner.lockstep

    def connect(self, devices: Mapping[str, JointDevice], station: Station) -> None:
        """The robot's devices connected: run the world they share, and put it in the robot's station (for the world
        expert teleoperator). Under lerobot-replay, lay out the replayed episode's scene."""
        runner = next(d.runner for d in devices.values() if isinstance(d, WorldJointDevice))
        self.runner = runner
        station.world_runner = runner
        if not self.lays_out:
            return
        # in the frame of the rig that lays out (the first: the frame a drawing of several rigs is in)
        station.table_top_z_m = -float(runner.world.base_pose(self.rig_name)[2, 3])
        self.outcome = EpisodeOutcome(runner.world)
        self._replaying = replayed_episode()
        if self._replaying is not None:
            runner.reset_episode(self._replaying.seed)
            print(f"Replaying episode {self._replaying.index} of {self._replaying.root} in its own layout (seed "
                  f"{self._replaying.seed})", flush=True)

    def disconnect(self, station: Station) -> None:
        """Say how a replay went, and take the world out of the station."""
        if self._replaying is not None and self.outcome is not None:
            outcome = self.outcome.as_dict()
            print(f"Replay of episode {self._replaying.index}: {'succeeded' if outcome['success'] else 'failed'} "
                  f"(furthest stage: {outcome['stage']})", flush=True)
        self._replaying = None
        if self.runner is not None and station.world_runner is self.runner:
            station.world_runner = None
            station.table_top_z_m = None
        self.runner, self.outcome = None, None

    def reset_episode(self, episode_index: int | None = None) -> int:
        """Lay out episode `episode_index`'s scene (layout seed = world.seed + episode_index; None: the next one) with
        the robot at home, and judge the new episode from its start; returns the layout seed."""
        if not self.lays_out:
            raise RuntimeError(f"{self}: the episodes of a world of several rigs are laid out by its first rig's")
        runner = self.running
        seed = runner.reset_episode(None if episode_index is None else self.config.seed + episode_index)
        self.outcome = EpisodeOutcome(runner.world)
        return seed

    def advance(self, duration_ns: int) -> None:
        """Lockstep: step the world by duration_ns (one control period, called by the recorder once per tick)."""
        if not self.lockstep:
            raise ConfigError(f"{self} does not run in lockstep, its time passes by itself: advance() needs "
                              "--robot.world.clock=lockstep")
        self.running.advance(duration_ns)

    def judge(self) -> None:
        """Judge the episode at this instant (once per observation)."""
        runner = self.running
        if self.outcome is not None:
            with runner.world.lock:
                self.outcome.update()

    def episode_outcome(self) -> dict | None:
        """Whether the task succeeded and the stages it reached so far; None while the robot is not connected."""
        return None if self.outcome is None else self.outcome.as_dict()

    def world_episode(self) -> dict | None:
        """What laid out this episode (task, seed, clock, the randomised values, a station's timing where one was
        given), for its metadata; None while the robot is not connected."""
        if self.runner is None:
            return None
        timing = self.runner.world.config.timing
        return {**self.runner.world.episode_description(), "clock": "lockstep" if self.lockstep else "real_time",
                **({"timing": asdict(timing)} if timing.active else {})}

    def object_state(self) -> dict[str, float]:
        """The task's object poses by environment_state_keys ({} unless world.observe_objects)."""
        keys = self.environment_state_keys
        if not keys:
            return {}
        world = self.running.world
        with world.lock:
            return dict(zip(keys, world.object_state().tolist(), strict=True))

    def drawn_objects(self, hand: bool) -> tuple[dict[str, DrawnObject], frozenset[str]]:
        """For an operator's display: the task's objects in the rig's base frame (the frame its kinematics draws the
        robot in), and the hand's links touching something (none without a hand)."""
        world = self.running.world
        with world.lock:
            from_world = np.linalg.inv(world.base_pose(self.rig_name))
            objects = {name: DrawnObject(from_world @ world.body_pose(name), *box)
                       for name, box in world.task.drawn_boxes.items()}
            touching = world.hand_links_touching(self.rig_name) if hand else frozenset()
        return objects, touching
