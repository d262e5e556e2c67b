"""The recording loop: one control tick reads the robot, asks the input for an action, sends it, and hands one
RecordedFrame to every sink; episodes end on the timer or a key, and are committed as a pair (storage/sink.py
commit_pair). RecordingSession runs it; recording/recorder.py builds the robot, the input and the sinks it is given.

The robot is a capabilities.RecordableRobot: get_observation(), send_action(action) -> sent action, validate(extra
stamps) -> SyncPacket, its faults, its episodes and its world's clock (SyncValidatedRobot, in
lerobot_robot_teledex.sync_validated, answers it around any LeRobot robot); the input is any object with
get_action(). What else an input can do is a protocol in capabilities.py (an input told of each episode's start, one
that says when its sample was captured, ...). The robot's live view, when it shows one, is handed over too: each
frame's sync check and the episodes' start and end are drawn in it.

Device faults are part of the data: every frame records whether a device was in fault (its action is then the target
the hardware held, and the frame is never sync-valid), each episode's metadata lists the faults, and the progress
line always shows the fault state. Cameras are devices: one lost or stalled is in fault like an arm (its stream has
no capture time then). A fault is detected after its cause (a silence once the feedback timeout has passed, a
camera's stall once its limit has): frames reach the sinks LOOKBACK_NS late, or the robot's fault_lookback_ns if
longer, so those recorded since the cause are marked too. When a fault latches during an episode, the fault policy
decides: STOP (the default) ends the episode there and saves it marked; RERECORD drops it; KEEP_AND_MARK records
on, every frame in fault marked. No episode starts on a device in fault:
the operator is told and re-arms with the `a` key once the cause is gone (the control loop keeps running meanwhile,
recording nothing); without a keyboard the session ends. A session that ends with a fault unresolved says so
(unresolved_faults), for a non-zero exit.
"""

import contextlib
import math
import signal
import threading
import time
from collections import deque
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime

import numpy as np

from ..capabilities import (
    CapturedInput,
    CorrectedInput,
    EpisodeAwareInput,
    EpisodeTimedInput,
    FaultShowingInput,
    RecordableRobot,
)
from ..storage.frame import FrameLayout, RecordedFrame, source_stamps
from ..storage.sink import EpisodeHeader, EpisodeSink, commit_pair
from ..storage.sync_rule import stored_policy
from ..sync import SyncPacket, SyncPolicy, TimingPolicy, sync_metrics, timing_metrics, validate_timestamps
from ..sync.metrics import lagging_source

INPUT_SOURCE = "input"
STOP, RERECORD, KEEP_AND_MARK = "stop", "rerecord", "keep-and-mark"
FAULT_POLICIES = (STOP, RERECORD, KEEP_AND_MARK)
# Frames wait this long before the sinks take them: a fault is detected after its cause (a silence only once the
# feedback timeout has passed), and the frames recorded since the cause are marked as in fault too.
LOOKBACK_NS = 500_000_000
# Keeping successes only, a session gives up after this many attempts per episode asked for (a task the input
# cannot solve must not record forever).
MAX_ATTEMPTS_PER_EPISODE = 5
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)  # the command's stops (cli/errors.py)


# The operator's verdict on an episode under review (--confirm_episodes), by key.
REVIEW_KEYS = {"k": "kept", "enter": "kept", "right": "kept", "n": "kept", "d": "discarded", "r": "re-record",
               "left": "re-record", "q": "kept", "esc": "kept"}


class RecordingEvents:
    """Key presses, turned into the flags the loop reads."""

    def __init__(self):
        self.end_episode = self.rerecord = self.discard = self.stop = self.start = self.rearm = False
        self.success: bool | None = None
        self.reviewing = False  # an episode's summary is shown and waits for the operator's verdict
        self.verdict: str | None = None

    def on_key(self, name: str) -> bool:
        """Set the flag of a recording key; False for keys that are not recording keys."""
        key = name.lower()
        if self.reviewing and key in REVIEW_KEYS:
            self.verdict = REVIEW_KEYS[key]
            self.stop = self.stop or key in ("q", "esc")  # keep this one, then stop
            return True
        if key in ("right", "n"):
            self.end_episode = True
        elif key in ("left", "r"):
            self.rerecord = self.end_episode = True
        elif key == "d":
            self.discard = self.end_episode = True
        elif key in ("s", "f"):
            self.success = key == "s"
            print(f"Episode marked a {'success' if self.success else 'failure'}")
        elif key == "space":
            self.start = True
        elif key == "a":
            self.rearm = True
        elif key in ("esc", "q"):
            self.stop = self.end_episode = True
        else:
            return False
        return True

    def next_episode(self) -> None:
        self.end_episode = self.rerecord = self.discard = self.start = False
        self.success = None
        self.reviewing, self.verdict = False, None


@dataclass
class EpisodeLog:
    """What the loop keeps about the episode in progress: enough for the progress line and metadata.json, computed
    with the same functions the report uses."""

    source_names: tuple[str, ...]
    frame_ns: list = field(default_factory=list)
    valid: list = field(default_factory=list)
    max_diff_ms: list = field(default_factory=list)
    stamps: list = field(default_factory=list)
    faults: dict = field(default_factory=dict)  # part -> {"message", "first_frame", "frames"}
    stopped_by_fault: bool = False  # the fault policy ended the episode when a fault latched
    outcome: dict = field(default_factory=dict)  # a judged episode: its outcome at the last frame
    interrupted: KeyboardInterrupt | None = None  # Ctrl-C or SIGTERM ended the episode

    def add(self, frame: RecordedFrame) -> None:
        index = len(self.frame_ns)
        self.frame_ns.append(frame.frame_ns)
        self.valid.append(frame.packet.valid)
        self.max_diff_ms.append(frame.packet.max_diff_ms)
        self.stamps.append(source_stamps([frame], self.source_names)[0])
        for part, message in frame.faults.items():
            entry = self.faults.setdefault(part, {"message": message, "first_frame": index, "frames": 0})
            entry["frames"] += 1

    def __len__(self) -> int:
        return len(self.frame_ns)

    @property
    def first_fault_frame(self) -> int | None:
        return min((fault["first_frame"] for fault in self.faults.values()), default=None)

    def sync(self, last: int | None = None) -> dict:
        window = slice(-last, None) if last else slice(None)
        return sync_metrics(np.array(self.valid[window], dtype=bool), np.array(self.max_diff_ms[window]),
                            list(self.source_names),
                            np.array(self.stamps[window], dtype=np.int64).reshape(-1, len(self.source_names)))

    def timing(self, fps: int) -> dict:
        return timing_metrics(np.array(self.frame_ns, dtype=np.int64), fps)


@dataclass
class EpisodePlan:
    num_episodes: int
    episode_time_s: float
    reset_time_s: float
    task: str
    wait_for_start: bool = False
    # Show each episode's summary and wait for the operator's verdict: keep (k/enter), discard (d), re-record (r).
    confirm: bool = False
    # A robot that judges its episodes: end each this long after success (None: at the time limit) ...
    settle_s: float | None = None
    # ... and save only those that succeeded (failures are dropped and another layout is tried).
    successes_only: bool = False


class RecordingSession:
    def __init__(self, robot: RecordableRobot, teleop, layout: FrameLayout, lerobot: EpisodeSink,
                 native: EpisodeSink | None, first_index: int, metadata: dict, sync_policy: SyncPolicy,
                 timing_policy: TimingPolicy, events: RecordingEvents | None = None, session_id: str | None = None,
                 fault_policy: str = STOP, keyboard: bool = False, live_view=None):
        self.robot = robot
        self.live_view = live_view  # the robot's (viewer.live_view.LiveView), else None
        self.teleop = teleop
        self.layout = layout
        self.lerobot = lerobot
        self.native = native
        self.next_index = first_index
        self.metadata = metadata  # hardware, cameras, collection settings: the same for every episode
        self.sync_policy = sync_policy
        self.timing_policy = timing_policy
        self.events = events or RecordingEvents()
        self.session_id = session_id
        self.fault_policy = fault_policy
        self.keyboard = keyboard  # the operator has keys to press (re-arm after a fault); without, no key waits
        self.saved_uuids: list[str] = []
        self.unresolved_faults: dict[str, str] = {}  # at the end of run(): faults nobody cleared
        # Every attempt lays out a new scene (a simulated world: layout seed = world seed + this), kept or not: a
        # dropped attempt is not tried again on the same layout, which in lockstep would fail the same way.
        self.next_layout = first_index
        self.lockstep = robot.lockstep
        # frames wait this long before the sinks take them (LOOKBACK_NS)
        self.lookback_ns = max(LOOKBACK_NS, robot.fault_lookback_ns)

    def run(self, plan: EpisodePlan) -> int:
        attempts = 0
        while len(self.saved_uuids) < plan.num_episodes and not self.events.stop:
            if plan.successes_only and attempts >= MAX_ATTEMPTS_PER_EPISODE * plan.num_episodes:
                print(f"Stopping: {attempts} attempts gave {len(self.saved_uuids)} successful episode(s) of "
                      f"{plan.num_episodes}; the input does not solve the task often enough to keep successes only",
                      flush=True)
                break
            attempts += 1
            self.events.next_episode()
            if not self._rearmed():
                break
            if plan.wait_for_start:
                print("Press space to start the episode")
                self._drive(None, stop=lambda: self.events.start or self.events.stop)
                if self.events.stop or not self._rearmed():  # a fault may latch while the operator gets ready
                    break
            # the robot starts the episode (a simulated world lays out its scene, the robot at home); an input told
            # of it restarts from where the robot now is
            if self.robot.start_episode(self.next_layout) and isinstance(self.teleop, EpisodeAwareInput):
                self.teleop.start_episode()
            self.next_layout += 1
            header = EpisodeHeader.new(self.next_index, plan.task)
            print(f"Recording episode {header.index} ({len(self.saved_uuids) + 1}/{plan.num_episodes})", flush=True)
            if self.live_view is not None:
                self.live_view.start_episode(header.index, plan.episode_time_s)
            if isinstance(self.teleop, EpisodeTimedInput):
                self.teleop.episode_started(plan.episode_time_s)
            sinks = [s for s in (self.lerobot, self.native) if s is not None]
            for sink in sinks:
                sink.begin(header)
            try:
                log = self._drive(header, duration_s=plan.episode_time_s, settle_s=plan.settle_s)
            except BaseException:
                for sink in sinks:
                    sink.abort()
                if self.live_view is not None:
                    self.live_view.end_episode("interrupted")
                raise
            if log.interrupted is not None:
                self._end_interrupted(header, log, sinks, log.interrupted)
                raise log.interrupted
            verdict = self._keep(log, plan)
            review = None
            if verdict is None and plan.confirm:
                review = self._review(header, log)
                verdict = None if review["decision"] == "kept" else review["decision"]
            if verdict is not None:
                for sink in sinks:
                    sink.abort()
                print(f"Episode {header.index} {verdict}", flush=True)
                if self.live_view is not None:
                    self.live_view.end_episode(verdict)
                continue
            commit_pair(self.lerobot, self.native, self._episode_metadata(header, log, review))
            if self.live_view is not None:
                self.live_view.end_episode("saved" + (f", stopped by a device fault ({', '.join(log.faults)})"
                                                      if log.stopped_by_fault else ""))
            self.saved_uuids.append(header.episode_uuid)
            self.next_index += 1
            self._print_saved(header, log)
            if len(self.saved_uuids) < plan.num_episodes and not self.events.stop and plan.reset_time_s > 0 \
                    and not self._faults():
                print(f"Reset the environment ({plan.reset_time_s:g} s)", flush=True)
                self._drive(None, duration_s=plan.reset_time_s)
        self.unresolved_faults = self._faults()
        return len(self.saved_uuids)

    def _end_interrupted(self, header: EpisodeHeader, log: EpisodeLog, sinks: list[EpisodeSink],
                         interrupt: KeyboardInterrupt) -> None:
        """Ctrl-C or SIGTERM mid-episode, by the fault policy's rules: the episode so far is saved and marked
        ("interrupted" in its metadata), or dropped with --fault_policy=rerecord (or when it has under 2 frames)."""
        if self.fault_policy == RERECORD or len(log) < 2:
            for sink in sinks:
                sink.abort()
            print(f"Episode {header.index}: interrupted after {len(log)} frames, dropped", flush=True)
            return
        metadata = self._episode_metadata(header, log)
        metadata["interrupted"] = {"signal": _signal_name(interrupt), "frames": len(log)}
        commit_pair(self.lerobot, self.native, metadata)
        self.saved_uuids.append(header.episode_uuid)
        self.next_index += 1
        print(f"Episode {header.index}: interrupted after {len(log)} frames, saved and marked", flush=True)

    def summary(self, log: EpisodeLog) -> dict:
        """What the operator judges an episode by: duration, sync success, dropped ticks, faults."""
        sync, timing = log.sync(), log.timing(self.layout.fps)
        return {"duration_s": self._duration_s(log),
                "sync_success_rate": sync["sync_success_rate"], "dropped_ticks": timing["dropped_ticks"],
                "frames_stored": timing["frames_stored"], "faults": sorted(log.faults)}

    def _duration_s(self, log: EpisodeLog) -> float:
        return round((log.frame_ns[-1] - log.frame_ns[0]) / 1e9 + 1 / self.layout.fps, 3)

    def _review(self, header: EpisodeHeader, log: EpisodeLog) -> dict:
        """Show the episode's summary and hold the robot under control until the operator keeps, discards or
        re-records it."""
        summary = self.summary(log)
        print(f"Episode {header.index}: {summary['duration_s']:.1f} s, sync ok "
              f"{100 * summary['sync_success_rate']:.1f}%, {summary['dropped_ticks']} dropped ticks, faults: "
              f"{', '.join(summary['faults']) or 'none'}.\n"
              "  Keep it? k / enter = keep, d = discard, r = re-record", flush=True)
        self.events.reviewing, self.events.end_episode = True, False  # the key that ended the episode is spent
        self._drive(None, stop=lambda: self.events.verdict is not None)
        self.events.reviewing = False
        if self.events.verdict == "re-record":
            self.events.rerecord = True
        return {"decision": self.events.verdict, "summary": summary}

    def _faults(self) -> dict[str, str]:
        return self.robot.device_faults()

    def _not_measured(self, faults: dict[str, str]) -> dict[str, None]:
        """The sources with no live measurement: a part or camera in fault reports no capture time (a camera: nor its
        depth stream, LeRobot's `<camera>_depth`), so no frame recorded in fault is sync-valid. A robot with one
        joint source for all its parts loses it to any part's fault."""
        streams = [s for s in self.layout.cameras
                   if s in faults or (s in self.layout.depth_streams and s.removesuffix("_depth") in faults)]
        parts = faults.keys() - self.layout.cameras.keys()
        joints = [s for s in self.layout.source_names if s not in self.layout.cameras and s != INPUT_SOURCE]
        return dict.fromkeys(streams + (([s for s in joints if s in parts] or joints) if parts else []))

    def _rearmed(self) -> bool:
        """Whether the devices are healthy (at once, or after the operator re-armed them); False ends the session."""
        faults = self._faults()
        if not faults:
            return True
        print("DEVICE FAULT: " + "; ".join(f"{part}: {message}" for part, message in faults.items()), flush=True)
        if not self.keyboard:
            print("No keyboard to re-arm with: ending the session.", flush=True)
            return False
        while faults:
            print("Fix the cause, then press 'a' to re-arm the devices ('q' ends the session).", flush=True)
            self.events.rearm = False
            self._drive(None, stop=lambda: self.events.rearm or self.events.stop)
            if self.events.stop:
                return False
            faults = self.robot.clear_faults()
            if faults:
                print("Still in fault: " + "; ".join(f"{part}: {message}" for part, message in faults.items()),
                      flush=True)
        print("Re-armed: the devices are healthy.", flush=True)
        return True

    def _keep(self, log: EpisodeLog, plan: EpisodePlan) -> str | None:
        """Why the episode is not saved, or None to save it."""
        if log.stopped_by_fault and self.fault_policy == RERECORD:
            return f"stopped by a device fault from frame {log.first_fault_frame}: dropped, to be re-recorded"
        if self.events.discard:
            return "discarded"
        if self.events.rerecord:
            return "dropped for re-recording"
        if len(log) < 2:
            # LeRobot 0.6.1 writes a one-frame episode's statistics as integers (its single-sample path keeps the
            # dtype) and every other episode's as floats: datasets then cannot read meta/episodes at all
            return (f"had {len(log)} frame(s); not saved (an episode needs at least 2: LeRobot 0.6.1 stores a "
                    "one-frame episode's statistics in a form that makes the whole dataset unreadable)")
        if plan.successes_only and self.layout.judged and not log.outcome.get("success"):
            return (f"failed (furthest stage: {log.outcome.get('stage')}): dropped, keeping successes only; "
                    "the next attempt has a new layout")
        timing = log.timing(self.layout.fps)
        if self.timing_policy.on_exceed == "rerecord" and not self.timing_policy.within(timing):
            return (f"dropped {timing['dropped_ticks']} of {timing['frames_expected']} control ticks (more than "
                    f"{100 * self.timing_policy.max_dropped_fraction:g}%): re-recording it")
        return None

    def _drive(self, header: EpisodeHeader | None, duration_s: float = float("inf"), stop=None,
               settle_s: float | None = None) -> EpisodeLog:
        """The control loop. With no header nothing is recorded (reset or waiting); with one, every frame goes to
        every sink, and a judged episode ends settle_s after its success. In real time the schedule never catches up
        in a burst: a tick that overran pushes the next one back, and the frame after it shows the gap in its
        interval. In lockstep each tick advances the world one control period and nothing waits."""
        period_ns = round(1e9 / self.layout.fps)
        log = EpisodeLog(self.layout.source_names)
        sinks = [s for s in (self.lerobot, self.native) if s is not None] if header is not None else []
        pending: deque[RecordedFrame] = deque()  # frames not yet handed to the sinks (LOOKBACK_NS)
        in_fault: set[str] = set()
        started = next_tick = time.perf_counter()
        next_report = started + 1.0
        ticks, success_tick = 0, None
        settle_ticks = None if settle_s is None else round(settle_s * self.layout.fps)
        elapsed_s = (lambda: ticks * period_ns / 1e9) if self.lockstep else (lambda: time.perf_counter() - started)
        try:
            while elapsed_s() < duration_s and not self.events.end_episode and not (stop is not None and stop()):
                if success_tick is not None and settle_ticks is not None and ticks - success_tick > settle_ticks:
                    break
                observation, recorded, faults, packet, outcome = self._tick()
                if header is not None:  # recording: sinks take the frames
                    if faults.keys() - in_fault:
                        self._mark_since_cause(pending, {p: m for p, m in faults.items() if p not in in_fault})
                    in_fault = set(faults)
                    succeeded = bool(outcome and outcome["success"])
                    pending.append(RecordedFrame.from_observation(self.layout, observation, recorded, packet, faults,
                                                                  success=succeeded))
                    if succeeded and success_tick is None:
                        success_tick = ticks
                    log.outcome = outcome or {}
                    self._hand_over(pending, sinks, log, until_ns=pending[-1].frame_ns - self.lookback_ns)
                    if faults and self.fault_policy != KEEP_AND_MARK:
                        log.stopped_by_fault = True
                        break
                    if time.perf_counter() >= next_report:
                        next_report += 1.0
                        self._print_progress(header, log, elapsed_s())
                ticks += 1
                if self.lockstep:
                    self.robot.advance(period_ns)
                    continue
                next_tick = max(next_tick + period_ns / 1e9, time.perf_counter() - period_ns / 2e9)
                time.sleep(max(0.0, next_tick - time.perf_counter()))
        except KeyboardInterrupt as interrupt:  # Ctrl-C or SIGTERM (cli/errors.py): the episode ends here
            if header is None:
                raise
            log.interrupted = interrupt
        while pending:
            try:
                self._hand_over(pending, sinks, log)
            except KeyboardInterrupt as interrupt:  # a stop meanwhile: the episode ends here all the same
                log.interrupted = log.interrupted or interrupt
        if header is not None and log.stopped_by_fault:
            print(f"Episode {header.index}: stopped by a device fault ({', '.join(log.faults)}), its frames marked "
                  f"from frame {log.first_fault_frame}", flush=True)
        return log

    def _tick(self) -> tuple[dict, dict, dict[str, str], SyncPacket, dict | None]:
        """One control tick: observe, ask the input, send. (observation, the action to record, faults, sync packet,
        the robot's outcome so far)."""
        observation = self.robot.get_observation()
        outcome = self.robot.episode_outcome() if self.layout.judged else None
        action = self.teleop.get_action()
        input_ns = self._input_capture_ns()
        executed = self.teleop.executed_action(action) if isinstance(self.teleop, CorrectedInput) else action
        sent = self.robot.send_action(executed)
        # Read once, after the send: a device that latched during this tick held its target (the action stored),
        # and the frame's fault flag, its sync check and the fault policy all see the same faults.
        faults = self._faults()
        packet = self.robot.validate({INPUT_SOURCE: input_ns, **self._not_measured(faults)})
        if self.live_view is not None:
            self.live_view.sync(packet)
        if isinstance(self.teleop, FaultShowingInput):  # shown to the operator (the headset's status panel)
            self.teleop.report_robot_faults(faults)
        # the label is what the input asked for; the robot executed `sent` (the same unless perturbed)
        return observation, sent if executed is action else action, faults, packet, outcome

    def _input_capture_ns(self) -> int | None:
        """When the input's sample behind this tick's action was captured. An input that has never received a sample
        has none (the frame is not sync-valid: a silent source is never "now"); one that does not say when (LeRobot's
        own teleoperators) reads its device inside get_action, so its sample is this tick's."""
        if isinstance(self.teleop, CapturedInput):
            return self.teleop.sample_capture_ns
        return self.robot.clock.now_ns()

    def _hand_over(self, pending: deque, sinks: list[EpisodeSink], log: EpisodeLog, until_ns: float = math.inf) -> None:
        """The sinks take the pending frames recorded before until_ns, each whole: a frame half-handed to them would
        lose the episode, so Ctrl-C and SIGTERM take effect once they are stored."""
        if not pending or pending[0].frame_ns >= until_ns:  # most ticks: nothing due (no handlers swapped)
            return
        with _stops_deferred():
            while pending and pending[0].frame_ns < until_ns:
                frame = pending.popleft()
                for sink in sinks:
                    sink.add(frame)
                log.add(frame)

    def _mark_since_cause(self, pending: deque, new_faults: dict[str, str]) -> None:
        """Frames recorded after a new fault's cause began (as far as the robot can tell: active_faults()) and before
        it was detected are in fault too: marked, and no longer sync-valid."""
        active = self.robot.active_faults()
        since = {part: active[part].since_ns for part in new_faults
                 if part in active and active[part].since_ns is not None}
        for i, frame in enumerate(pending):
            caused = {part: message for part, message in new_faults.items()
                      if part in since and frame.frame_ns > since[part]}
            if caused.keys() - frame.faults.keys():
                faults = {**frame.faults, **caused}
                stamps = {**frame.packet.timestamps_ns, **self._not_measured(faults)}
                pending[i] = replace(frame, faults=faults, packet=validate_timestamps(
                    stamps, frame.packet.checked_ns, self.sync_policy))

    def _print_progress(self, header: EpisodeHeader, log: EpisodeLog, elapsed_s: float) -> None:
        if not len(log):  # frames reach the log LOOKBACK_NS late; a slow first tick (planning) can come first
            return
        timing = log.timing(self.layout.fps)
        sync = log.sync()
        recent = log.sync(last=self.layout.fps)  # the last second: who is behind right now
        lagging = lagging_source(recent)
        now_faults = self._faults()  # the state now, whatever the episode has seen
        faults = "  devices ok" if not now_faults else "".join(f"\n  FAULT {part}: {message}"
                                                                for part, message in now_faults.items())
        print(f"  episode {header.index}  {elapsed_s:5.1f} s  stored {timing['frames_stored']}/"
              f"{timing['frames_expected']} frames ({timing['dropped_ticks']} dropped ticks)  "
              f"sync ok {100 * sync['sync_success_rate']:5.1f}%"
              + (f"  lagging: {lagging[0]} {lagging[1]:.1f} ms" if lagging and lagging[1] > 0 else "") + faults,
              flush=True)

    def _print_saved(self, header: EpisodeHeader, log: EpisodeLog) -> None:
        sync, timing = log.sync(), log.timing(self.layout.fps)
        within = "" if self.timing_policy.within(timing) else "  TIMING BELOW POLICY (marked in metadata)"
        if log.outcome:
            within += (f", succeeded at {log.outcome['success_tick'] / self.layout.fps:.1f} s" if log.outcome["success"]
                       else f", FAILED (furthest stage: {log.outcome['stage']})")
        if log.faults:
            within += (f"  DEVICE FAULT from frame {log.first_fault_frame}"
                       f"{' (the episode stopped when it latched)' if log.stopped_by_fault else ''}, marked in both "
                       "formats")
        print(f"Saved episode {header.index} ({header.episode_uuid}): {timing['frames_stored']}/"
              f"{timing['frames_expected']} frames at {timing['achieved_hz']} Hz ({timing['dropped_ticks']} dropped "
              "ticks), sync ok "
              f"{100 * sync['sync_success_rate']:.2f}%, mean sync error {sync['mean_sync_error_ms'] or 0:.1f} ms"
              f"{within}", flush=True)

    def _episode_metadata(self, header: EpisodeHeader, log: EpisodeLog, review: dict | None = None) -> dict:
        timing = log.timing(self.layout.fps)
        return {
            **self.metadata,
            "episode": {"task_name": header.task, "episode_id": f"episode_{header.index:06d}",
                        "episode_uuid": header.episode_uuid, "session_id": self.session_id,
                        "duration_s": self._duration_s(log), "timesteps": len(log),
                        # the operator's s / f key wins over the robot's judgement (None: nobody judged it)
                        "success": self.events.success if self.events.success is not None
                        else log.outcome.get("success"),
                        "recorded_utc": datetime.now(UTC).isoformat()},
            "outcome": log.outcome or None,  # a judged episode: success, furthest stage, the tick of each stage
            "world": self.robot.world_episode(),
            "clock": "lockstep" if self.lockstep else "real_time",
            "sync": {"policy": stored_policy(self.sync_policy), **log.sync()},  # its rule's version too
            "timing": {**timing, "policy": asdict(self.timing_policy),
                       "within_policy": self.timing_policy.within(timing)},
            "faults": log.faults,
            "review": review,  # the operator's verdict on the episode's summary, with --confirm_episodes
            "fault_policy": {"policy": self.fault_policy, "stopped_by_fault": log.stopped_by_fault},
            "lerobot": {**self.metadata.get("lerobot", {}), "episode_index": header.index},
        }


@contextlib.contextmanager
def _stops_deferred():
    """Ctrl-C and SIGTERM arriving in the block take effect after it (re-raised then), as the handlers in place
    say. Python runs signal handlers in the main thread only: elsewhere nothing can interrupt the block."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    handlers = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS}
    try:
        for signum in STOP_SIGNALS:
            signal.signal(signum, lambda signum, _frame: caught.append(signum))
        yield
    finally:
        for signum, handler in handlers.items():
            signal.signal(signum, handler)
        if caught:
            signal.raise_signal(caught[0])


def _signal_name(interrupt: KeyboardInterrupt) -> str:
    """SIGTERM when the command's handler said so (cli/errors.py Interrupted), else Ctrl-C's SIGINT."""
    signum = getattr(interrupt, "signum", signal.SIGINT)
    return signal.Signals(signum).name
