"""One follower rig's teleoperation tick: state machine -> strategy -> stale-input protection -> output chain.

The controller starts from the robot's measured pose and never commands a pose nobody asked for: until the first
measured pose is known it refuses to step, and Emergency (the start state, and whenever entered) holds the robot
where it is measured to be. ZeroPos ramps to the rig's home pose; Down ramps to the rest pose (every joint at 0,
within the soft limits); Teleoperation follows the strategy. Ramps and teleoperation both pass the output chain, so
every command respects the soft limits and the velocity limit, whatever the loop rate.

Stale-input protection: with no fresh frame for `stale_timeout_ms` (by the sample's capture time on this machine's
clock, so a backlog of late packets reads as stale too), the last command sent is
held, the anchors are cleared, and the arm cannot re-anchor until a fresh frame shows every trigger (and the anchor
input, if that is a grip) released. Entering Teleoperation asks for the same release, so a trigger held while
switching cannot jump the arm.
"""

import logging
from collections.abc import Callable

import numpy as np

from ..inputs.frame import OperatorFrame
from ..rig import Rig
from .config import ControlConfig
from .output_chain import OutputChain
from .state_machine import TeleopState, TeleopStateMachine
from .strategy import RigStrategy

logger = logging.getLogger(__name__)


class RigController:
    def __init__(self, rig: Rig, config: ControlConfig, state_machine: TeleopStateMachine | None = None,
                 name: str = ""):
        self.rig = rig
        self.config = config
        self.name = name or "+".join(part.spec.model for part in rig.parts.values())
        self.state_machine = state_machine or TeleopStateMachine()
        self.strategy = RigStrategy(rig, config.strategy, config.relative_arm)
        # the home pose stands in until seed() puts the measured pose there; step() refuses to run before
        self.chains = {role: OutputChain(part.lower, part.upper, part.home, config.output)
                       for role, part in rig.parts.items()}
        self.seeded = False
        self.home = {role: np.clip(part.home, self.chains[role].soft_lower, self.chains[role].soft_upper)
                     for role, part in rig.parts.items()}
        self.rest = {role: np.clip(np.zeros(len(part.joints)), self.chains[role].soft_lower,
                                   self.chains[role].soft_upper) for role, part in rig.parts.items()}
        self.stale = True  # until the first fresh frame
        self.require_release = True
        self.stale_events = 0
        self.last_ik_s = 0.0
        self._seen_state: TeleopState | None = None
        self._last_tick_ns: int | None = None

    def seed(self, q_by_role: dict[str, np.ndarray]) -> None:
        """Hold the robot's measured pose: it becomes the last command, the filters restart there and the arm
        re-anchors from it."""
        for role, chain in self.chains.items():
            chain.hold_at(q_by_role[role])
        self.seeded = True
        self.strategy.reset()
        self.require_release = True

    @property
    def last_sent(self) -> dict[str, np.ndarray]:
        return {role: chain.last_sent.copy() for role, chain in self.chains.items()}

    def at(self, pose: dict[str, np.ndarray], tolerance_rad: float) -> bool:
        return all(np.max(np.abs(chain.last_sent - pose[role]), initial=0.0) <= tolerance_rad
                   for role, chain in self.chains.items())

    def step(self, frame: OperatorFrame | None, now_ns: int,
             measured: Callable[[], dict[str, np.ndarray] | None]) -> dict[str, np.ndarray]:
        """The commands of this tick per role; `frame` is the newest input frame (None before the first);
        `measured` gives the robot's measured pose per role (None while unknown), read only when needed: before
        the first command and on entering Emergency."""
        dt_s = 0.0 if self._last_tick_ns is None else (now_ns - self._last_tick_ns) / 1e9
        self._last_tick_ns = now_ns
        self.last_ik_s = 0.0
        state = self.state_machine.state
        if state != self._seen_state or not self.seeded:
            pose = measured() if (state == TeleopState.EMERGENCY or not self.seeded) else None
            if pose is not None:
                self.seed(pose)
            elif not self.seeded:
                raise RuntimeError(f"{self.name}: the robot's measured pose is unknown, and the teleoperator never "
                                   "commands a pose nobody asked for. Drive a TeleDex robot (it publishes its "
                                   "pose) or pass the robot's observation to the teleoperator's send_feedback().")
            self._seen_state = state
            self.strategy.reset()
            self.require_release = True
            self._hold()
        self._update_staleness(frame, now_ns)
        if state == TeleopState.EMERGENCY or (state == TeleopState.TELEOPERATION and self.stale):
            return self._hold()
        if state == TeleopState.ZERO_POS:
            return self._shape(self.home, dt_s)
        if state == TeleopState.DOWN:
            return self._shape(self.rest, dt_s)
        threshold = self.config.strategy.anchor_threshold
        if self.require_release and frame.triggers_released(threshold) and not self.strategy.anchor_pressed(frame):
            self.require_release = False
        targets = self.strategy.targets(frame, self.last_sent, arm_enabled=not self.require_release)
        self.last_ik_s = self.strategy.last_ik_s
        return self._shape(targets, dt_s)

    def _update_staleness(self, frame: OperatorFrame | None, now_ns: int) -> None:
        fresh = frame is not None and (now_ns - frame.capture_ns) <= self.config.stale_timeout_ms * 1e6
        if not fresh and not self.stale:
            self.stale_events += 1
            logger.warning("%s: no fresh input for %.0f ms: holding the last command, anchors cleared; release "
                           "every trigger to resume", self.name, self.config.stale_timeout_ms)
            self.strategy.reset()
            self.require_release = True
        self.stale = not fresh

    def _hold(self) -> dict[str, np.ndarray]:
        return {role: chain.hold() for role, chain in self.chains.items()}

    def _shape(self, targets: dict[str, np.ndarray], dt_s: float) -> dict[str, np.ndarray]:
        return {role: chain(targets[role], dt_s) for role, chain in self.chains.items()}
