"""Faults injected into one simulated source are flagged invalid on exactly the frames they affect. Judged on the
recorded timestamps (when each source's sample was captured), never on when the loop happened to run: a scheduling
stall on a loaded machine delays every source alike and must not decide the outcome."""

import time

from lerobot_robot_teledex import Teledex, TeledexConfig
from lerobot_robot_teledex.sync_validated import SyncValidatedRobot
from teledex_lerobot.clock import now_ns
from teledex_lerobot.devices.joint_device import SimDynamicsConfig
from teledex_lerobot.sync import SyncPolicy

FAULT_START_S, FAULT_S, TOLERANCE_MS = 1.0, 1.0, 100.0


def record_frames(sim: SimDynamicsConfig, seconds: float = 3.0, fps: int = 25):
    """(packet, seconds since the devices connected at the healthy part's capture time) per frame."""
    robot = SyncValidatedRobot(Teledex(TeledexConfig(backend="sim", sim=sim)), SyncPolicy(tolerance_ms=TOLERANCE_MS))
    robot.connect()
    connected_ns = robot.robot.devices[sim.fault_source]._connected_ns
    healthy = "arm" if sim.fault_source == "hand" else "hand"
    packets = []
    try:
        start = time.monotonic()
        while time.monotonic() - start < seconds:
            robot.get_observation()
            packets.append(robot.validate({"input": now_ns()}))
            time.sleep(1 / fps)
    finally:
        robot.disconnect()
    return [(p, (p.timestamps_ns[healthy] - connected_ns) / 1e9,
             (p.timestamps_ns[healthy] - p.timestamps_ns[sim.fault_source]) / 1e6) for p in packets]


def test_delayed_source_flagged_exactly_while_delayed():
    frames = record_frames(SimDynamicsConfig(fault_source="hand", fault_delay_ms=150, fault_start_s=FAULT_START_S,
                                             fault_duration_s=FAULT_S))
    end = FAULT_START_S + FAULT_S
    for packet, at_s, hand_behind_ms in frames:
        if at_s < FAULT_START_S or at_s > end + 0.2:
            assert hand_behind_ms < TOLERANCE_MS, (at_s, hand_behind_ms, packet)  # the hand is not late
        elif FAULT_START_S + 0.2 <= at_s <= end:
            assert hand_behind_ms > TOLERANCE_MS and not packet.valid, (at_s, hand_behind_ms, packet)
            assert "hand" not in packet.stale_sources  # late, not stale
        if hand_behind_ms > TOLERANCE_MS:
            assert not packet.valid  # whenever the hand lags past the tolerance the frame is flagged
    # the window was sampled (a few frames suffice: on a badly overloaded machine the loop runs at a few Hz)
    assert sum(FAULT_START_S + 0.2 <= at_s <= end for _, at_s, _ in frames) >= 3


def test_frozen_source_flagged_until_it_resumes():
    frames = record_frames(SimDynamicsConfig(fault_source="arm", fault_freeze=True, fault_start_s=FAULT_START_S,
                                             fault_duration_s=FAULT_S))
    end = FAULT_START_S + FAULT_S
    for packet, at_s, arm_behind_ms in frames:
        if at_s < FAULT_START_S or at_s > end + 0.2:
            assert arm_behind_ms < TOLERANCE_MS, (at_s, arm_behind_ms, packet)
        elif FAULT_START_S + TOLERANCE_MS / 1e3 + 0.05 <= at_s <= end:
            assert arm_behind_ms > TOLERANCE_MS and not packet.valid, (at_s, arm_behind_ms, packet)
    assert sum(FAULT_START_S + 0.2 <= at_s <= end for _, at_s, _ in frames) >= 3
