"""One follower rig's teleoperation tick: state machine -> pose plausibility -> strategy -> stale-input protection ->
output chain.

The controller starts from the robot's measured pose and never commands a pose nobody asked for: until the first
measured pose is known it refuses to step, and Emergency (the start state, and whenever entered) holds the robot
where it is measured to be. ZeroPos ramps to the rig's home pose; Down ramps to the rest pose (every joint at 0,
within the soft limits); Teleoperation follows the strategy. Ramps and teleoperation both pass the output chain, so
every command respects the soft limits and the velocity limit, whatever the loop rate. After the robot was reset
for a new episode (`start_episode`), the next tick holds where it is then measured and re-anchors there: nothing
drives it back toward where the last episode ended.

Poses are checked first (pose_gate): an implausible one is dropped and counted, so the arm holds and re-anchors on
the next plausible one instead of following it.

Stale-input protection: with no fresh frame for `stale_timeout_ms` (by the sample's capture time on this machine's
clock, so a backlog of late packets reads as stale too), the last command sent is held. When fresh frames return,
relative control resumes by itself, with no re-press: after a blip (up to `resume_follow_ms`: Wi-Fi gaps of a few
hundred ms are common, and so are a loaded PC's late frames) from the same anchors, so the arm goes where the
operator's hand went meanwhile, within the output chain's speed limits, and no motion is lost; after a longer gap
(the operator may have put their hand anywhere) re-anchored: the operator's pose then meets the arm's pose then, so
the arm does not move, and without the dead zone, which would swallow the first 1.5 cm of the motion the operator is
in the middle of. Entering Teleoperation asks for
every trigger (and the anchor input, if that is a grip) to be released first, so a trigger held while switching
cannot move the arm. `activity` says what the arm is doing, for the operator's status.
"""

import logging
from collections.abc import Callable

import numpy as np

from ..errors import UserError
from ..inputs.frame import OperatorFrame
from ..rig import Rig
from .config import ControlConfig
from .output_chain import OutputChain
from .pose_gate import PoseGate
from .state_machine import TeleopState, TeleopStateMachine
from .strategy import RigStrategy

logger = logging.getLogger(__name__)


class RigController:
    def __init__(self, rig: Rig, config: ControlConfig, state_machine: TeleopStateMachine | None = None,
                 name: str = ""):
        self.rig = rig
        self.config = config
        self.name = name or rig.name
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
        self.pose_gate = PoseGate(config.pose_bounds)
        self.stale = True  # until the first fresh frame
        self.require_release = True
        self.stale_events = 0
        self.activity = "waiting for the robot's pose"  # what the arm does, in words for the operator
        self.last_ik_s = 0.0
        self._seen_state: TeleopState | None = None
        self._last_tick_ns: int | None = None
        self._stale_since_ns: int | None = None
        self._new_episode = False
        self._sender_id: int | None = None

    def seed(self, q_by_role: dict[str, np.ndarray]) -> None:
        """Hold the robot's measured pose: it becomes the last command, the filters restart there and the arm
        re-anchors from it."""
        for role, chain in self.chains.items():
            chain.hold_at(q_by_role[role])
        self.seeded = True
        self.strategy.reset()
        self.require_release = True

    def start_episode(self) -> None:
        """The robot has been reset for a new episode (a world lays it out at home): the next tick holds where it is
        then measured, and the arm re-anchors there. The state and the operator's engagement are kept."""
        self._new_episode = True

    @property
    def implausible_poses(self) -> int:
        """Operator poses dropped as implausible (pose_bounds), one per pose per frame."""
        return self.pose_gate.rejected

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
        the first command, on entering Emergency, after a new episode's reset, and when a grasp lets go."""
        dt_s = 0.0 if self._last_tick_ns is None else (now_ns - self._last_tick_ns) / 1e9
        self._last_tick_ns = now_ns
        self.last_ik_s = 0.0
        state = self.state_machine.state
        entering = state != self._seen_state
        if entering or not self.seeded or self._new_episode:
            if state == TeleopState.EMERGENCY or not self.seeded or self._new_episode:
                self._hold_measured(measured())
            self.strategy.reset()
            if entering:
                self._seen_state = state
                self.require_release = True
            self._hold()
        frame = self.pose_gate(frame)
        if frame is not None and frame.sender_id != self._sender_id:
            self._sender_id = frame.sender_id
            self.strategy.reset()  # another sender (a new connection, another device): the arm re-anchors to it
        self._update_staleness(frame, now_ns)
        if state == TeleopState.EMERGENCY:
            self.activity = "holding (Emergency)"
            return self._hold()
        if state == TeleopState.ZERO_POS:
            self.activity = "going to the zero pose"
            return self._shape(self.home, dt_s)
        if state == TeleopState.DOWN:
            self.activity = "going to the rest pose"
            return self._shape(self.rest, dt_s)
        if self.stale:
            self.activity = "holding: input stale (follows again when it returns)"
            return self._hold()
        assert frame is not None  # fresh input is a frame
        threshold = self.config.strategy.anchor_threshold
        if self.require_release and frame.triggers_released(threshold) and not self.strategy.anchor_pressed(frame):
            self.require_release = False
        targets = self.strategy.targets(frame, self.last_sent, arm_enabled=not self.require_release,
                                        dt_s=min(max(dt_s, 0.0), self.config.output.max_tick_s), measured=measured)
        self.last_ik_s = self.strategy.last_ik_s
        self.activity = self._teleoperation_activity(frame)
        return self._shape(targets, dt_s)

    def _hold_measured(self, pose: dict[str, np.ndarray] | None) -> None:
        """Make the robot's measured pose the last command (Emergency without one holds the last command)."""
        if pose is None:
            if not self.seeded or self._new_episode:
                raise UserError(f"{self.name}: the robot's measured pose is unknown, and the teleoperator never "
                                "commands a pose nobody asked for: drive a TeleDex robot (it publishes its pose), or "
                                "pass the robot's observation to the teleoperator's send_feedback()")
            return
        for role, chain in self.chains.items():
            chain.hold_at(pose[role])
        self.seeded = True
        self._new_episode = False

    def _update_staleness(self, frame: OperatorFrame | None, now_ns: int) -> None:
        fresh = False
        if frame is not None:
            assert frame.capture_ns is not None  # None only as the frame's constructor argument ("the arrival time")
            fresh = now_ns - frame.capture_ns <= self.config.stale_timeout_ms * 1e6
        if fresh == (not self.stale):
            return
        if not fresh:
            self.stale_events += 1
            self._stale_since_ns = now_ns
            logger.warning("%s: no fresh input for %.0f ms: holding the last command; following resumes when the "
                           "input returns", self.name, self.config.stale_timeout_ms)
        elif self._stale_since_ns is not None:
            gap_ms = (now_ns - self._stale_since_ns) / 1e6 + self.config.stale_timeout_ms
            if gap_ms <= self.config.resume_follow_ms:  # a blip: the arm goes where the operator went meanwhile
                logger.info("%s: input back after %.0f ms: following on", self.name, gap_ms)
            else:
                logger.info("%s: input back after %.0f ms: re-anchored where the arm is", self.name, gap_ms)
                # the next engaged frame anchors afresh: the operator's pose now meets the arm's pose now, and the
                # motion goes on from there with no dead zone to cross again
                self.strategy.reset(resuming=True)
        self.stale = not fresh

    def _teleoperation_activity(self, frame: OperatorFrame) -> str:
        if self.strategy.arm_control is None:
            return "following"
        source, anchor = self.config.strategy.arm_pose_source, self.config.strategy.anchor_input
        if source not in frame.poses:
            why = frame.invalid_devices.get(source, "").split(":", 1)[0]  # the kind (the values are logged)
            return f"holding: {source} {why}" if why else f"holding: no {source} in the input"
        if self.require_release:
            return "release every trigger to engage the arm"
        if not self.strategy.engaged(frame):
            return f"disengaged (hold {anchor} to move the arm)"
        return "following"

    def _hold(self) -> dict[str, np.ndarray]:
        return {role: chain.hold() for role, chain in self.chains.items()}

    def _shape(self, targets: dict[str, np.ndarray], dt_s: float) -> dict[str, np.ndarray]:
        return {role: chain(targets[role], dt_s) for role, chain in self.chains.items()}
