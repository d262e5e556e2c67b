"""Faults injected into one simulated source are flagged invalid on exactly the frames they affect.

Judged on the recorded timestamps, not on this machine's scheduling: every packet's verdict must follow from its own
timestamps (spread within the tolerance, every source fresh), and inside the fault window the faulted source's
recorded sample must lag by the injected delay (so the verdict there is "invalid" whatever the load). A loaded machine
may delay a healthy source too; such a frame is then rightly invalid, and nothing here forbids it.
"""

import time

from lerobot_robot_teledex import Teledex, TeledexConfig
from lerobot_robot_teledex.sync_validated import SyncValidatedRobot
from teledex_lerobot.clock import now_ns
from teledex_lerobot.devices.simulated import SimDynamicsConfig
from teledex_lerobot.sync import SyncPolicy

FAULT_START_S, FAULT_S, TOLERANCE_MS, DELAY_MS = 1.0, 1.0, 100.0, 150.0
POLICY = SyncPolicy(tolerance_ms=TOLERANCE_MS)


def record_frames(sim: SimDynamicsConfig, fps: int = 25, min_in_window: int = 8):
    """(seconds since the faulted device connected, packet) at ~fps, until the fault window is over and at least
    `min_in_window` frames fell inside it (a loaded machine records fewer per second; this waits for them)."""
    robot = SyncValidatedRobot(Teledex(TeledexConfig(backend="sim", sim=sim)), POLICY)
    robot.connect()
    device = robot.robot.devices[sim.fault_source]
    frames = []
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            robot.get_observation()
            packet = robot.validate({"input": now_ns()})
            elapsed_s = (packet.checked_ns - device._connected_ns) / 1e9
            frames.append((elapsed_s, packet))
            inside = sum(FAULT_START_S + 0.2 <= e <= FAULT_START_S + FAULT_S for e, _ in frames)
            if elapsed_s > FAULT_START_S + FAULT_S + 0.5 and inside >= min_in_window:
                break
            time.sleep(1 / fps)
    finally:
        robot.disconnect()
    return frames


def assert_verdicts_follow_from_timestamps(frames):
    for elapsed, packet in frames:
        stamps = [t for t in packet.timestamps_ns.values() if t is not None]
        spread_ms = (max(stamps) - min(stamps)) / 1e6
        fresh = all(t is not None and (packet.checked_ns - t) / 1e6 <= POLICY.max_age_ms
                    for t in packet.timestamps_ns.values())
        assert packet.valid == (spread_ms <= TOLERANCE_MS and fresh), (elapsed, spread_ms, packet)


def test_delayed_source_flagged_while_delayed():
    frames = record_frames(SimDynamicsConfig(fault_source="hand", fault_delay_ms=DELAY_MS, fault_start_s=FAULT_START_S,
                                             fault_duration_s=FAULT_S))
    assert_verdicts_follow_from_timestamps(frames)
    # once the delay has built up (past the onset), the hand's recorded sample is at least DELAY_MS old: invalid
    in_window = [(e, p) for e, p in frames if FAULT_START_S + DELAY_MS / 1e3 + 0.05 <= e <= FAULT_START_S + FAULT_S]
    assert len(in_window) >= 5
    for elapsed, packet in in_window:
        assert (packet.checked_ns - packet.timestamps_ns["hand"]) / 1e6 >= DELAY_MS, (elapsed, packet)
        assert not packet.valid and "hand" not in packet.stale_sources, (elapsed, packet)  # late, not stale
    # after the fault the hand reports promptly again: some frame after it is valid
    assert any(p.valid for e, p in frames if e > FAULT_START_S + FAULT_S + 0.1)


def test_frozen_source_flagged_until_it_resumes():
    frames = record_frames(SimDynamicsConfig(fault_source="arm", fault_freeze=True, fault_start_s=FAULT_START_S,
                                             fault_duration_s=FAULT_S))
    assert_verdicts_follow_from_timestamps(frames)
    frozen = [(e, p) for e, p in frames if FAULT_START_S + TOLERANCE_MS / 1e3 + 0.05 <= e <= FAULT_START_S + FAULT_S]
    assert len(frozen) >= 5
    for elapsed, packet in frozen:  # the arm's last sample predates the freeze: it only ages
        assert (packet.checked_ns - packet.timestamps_ns["arm"]) / 1e9 >= elapsed - FAULT_START_S - 0.02, elapsed
        assert not packet.valid, (elapsed, packet)
    assert any(p.valid for e, p in frames if e > FAULT_START_S + FAULT_S + 0.1)
