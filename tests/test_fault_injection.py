"""Faults injected into one simulated source are flagged invalid on exactly the frames they affect."""

import time

from lerobot_robot_teledex import Teledex, TeledexConfig
from lerobot_robot_teledex.sync_validated import SyncValidatedRobot
from teledex_lerobot.clock import now_ns
from teledex_lerobot.devices.simulated import SimDynamicsConfig
from teledex_lerobot.sync import SyncPolicy

FAULT_START_S, FAULT_S, TOLERANCE_MS = 1.0, 1.0, 100.0


def record_frames(sim: SimDynamicsConfig, seconds: float = 3.0, fps: int = 25):
    robot = SyncValidatedRobot(Teledex(TeledexConfig(backend="sim", sim=sim)), SyncPolicy(tolerance_ms=TOLERANCE_MS))
    robot.connect()
    device = robot.robot.devices["hand"]
    frames = []
    try:
        start = time.monotonic()
        while time.monotonic() - start < seconds:
            robot.get_observation()
            packet = robot.validate({"input": now_ns()})
            elapsed_s = (packet.checked_ns - device._connected_ns) / 1e9
            frames.append((elapsed_s, packet))
            time.sleep(1 / fps)
    finally:
        robot.disconnect()
    return frames


def test_delayed_source_flagged_exactly_while_delayed():
    frames = record_frames(SimDynamicsConfig(fault_source="hand", fault_delay_ms=150, fault_start_s=FAULT_START_S,
                                             fault_duration_s=FAULT_S))
    end = FAULT_START_S + FAULT_S
    for elapsed, packet in frames:
        hand_lag_ms = (max(packet.timestamps_ns.values()) - packet.timestamps_ns["hand"]) / 1e6
        if elapsed < FAULT_START_S or elapsed > end + 0.05:
            assert packet.valid, (elapsed, packet)  # before the fault and once it has cleared
        elif FAULT_START_S + 0.15 <= elapsed <= end:
            assert not packet.valid and "hand" not in packet.stale_sources, (elapsed, packet)
        # at the onset the hand's best sample ages from 0 to 150 ms: invalid exactly once it passes the tolerance
        assert packet.valid == (hand_lag_ms <= TOLERANCE_MS), (elapsed, hand_lag_ms, packet)
    in_window = [p for elapsed, p in frames if FAULT_START_S + 0.15 <= elapsed <= end]
    assert len(in_window) >= 15  # the window was actually sampled


def test_frozen_source_flagged_until_it_resumes():
    frames = record_frames(SimDynamicsConfig(fault_source="arm", fault_freeze=True, fault_start_s=FAULT_START_S,
                                             fault_duration_s=FAULT_S))
    end = FAULT_START_S + FAULT_S
    for elapsed, packet in frames:
        if elapsed < FAULT_START_S or elapsed > end + 0.05:
            assert packet.valid, (elapsed, packet)
        elif FAULT_START_S + TOLERANCE_MS / 1e3 + 0.03 <= elapsed <= end:
            assert not packet.valid, (elapsed, packet)
