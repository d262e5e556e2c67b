"""teledex-doctor's probe of an Agilex Piper: feedback rate, firmware, enable state, arm status and error bits."""

import struct
from collections.abc import Iterable

import can

from ...can.identify import BusSignature
from ...can.port import CanPortConfig
from ..probe import LISTEN_S, Report, check_socketcan, collect, open_bus, silent_device_fix
from . import protocol as pp

FEEDBACK_HZ = 200.0


def probe_piper(side: str, port: CanPortConfig, signatures: Iterable[BusSignature] = ()) -> Report:
    report = Report(f"Agilex Piper on {port.interface}:{port.channel}")
    if not check_socketcan(port, report) or (bus := open_bus(port, report)) is None:
        return report
    try:
        bus.send(can.Message(arbitration_id=pp.FIRMWARE, data=b"\x01" + bytes(7), is_extended_id=False))
        frames = collect(bus, LISTEN_S)
    finally:
        bus.shutdown()
    joints = [m for m in frames if m.arbitration_id == pp.JOINT_FEEDBACK[0]]
    rate_hz = len(joints) / LISTEN_S
    if not joints:
        report.problem("no joint feedback (0x2A5) from the arm", silent_device_fix(
            port, pp.BUS_SIGNATURE.kind, "power the arm (24 V), check the CAN cable, CAN-H/CAN-L and the 120 ohm "
            "termination; the arm must be the only Piper on this bus", signatures))
        return report
    report.facts.append(f"joint feedback {rate_hz:.0f} Hz, {len(frames) / LISTEN_S:.0f} frames/s")
    if rate_hz < 0.5 * FEEDBACK_HZ:
        report.problem(f"joint feedback at {rate_hz:.0f} Hz (expected ~{FEEDBACK_HZ:.0f})",
                       "bus overloaded or lossy: check the bitrate, termination and other devices on the bus")
    firmware = b"".join(bytes(m.data) for m in frames if m.arbitration_id == pp.FIRMWARE and m.data[:1] != b"\x01")
    start = firmware.find(b"S-V")
    report.facts.append(f"firmware {firmware[start:start + 8].decode(errors='replace')}" if start >= 0
                        else "firmware: no reply to the version query")
    low_speed = {m.arbitration_id: m for m in frames if m.arbitration_id in pp.MOTOR_LOW_SPEED}
    enabled = [bool(low_speed[i].data[5] & (1 << pp.FOC_DRIVER_ENABLED_BIT)) if i in low_speed else None
               for i in pp.MOTOR_LOW_SPEED]
    report.facts.append(f"motors enabled: {enabled}")
    for joint, can_id in enumerate(pp.MOTOR_LOW_SPEED, start=1):
        bits = pp.bit_names(low_speed[can_id].data[5], pp.FOC_FAULT_BITS) if can_id in low_speed else []
        if bits:
            report.problem(f"joint {joint} motor driver reports: {', '.join(bits)}",
                           "let the arm cool / free the joint, check the 24 V supply; power-cycle the arm")
    status = next((m for m in reversed(frames) if m.arbitration_id == pp.STATUS), None)
    if status is not None:
        arm_status, err_code = status.data[1], struct.unpack(">H", bytes(status.data[6:8]))[0]
        report.facts.append(f"control mode {status.data[0]}, move mode {status.data[2]}, "
                            f"arm status {pp.ARM_STATUS_NAMES.get(arm_status, arm_status)}")
        if arm_status == pp.ARM_STATUS_ESTOP:
            report.problem("the arm is in emergency stop", "release the e-stop; then resume (0x150 byte0 = 2, "
                           "piper.EmergencyStop(2)) and re-enable")
        elif arm_status != pp.ARM_STATUS_NORMAL:
            report.problem(f"arm status: {pp.ARM_STATUS_NAMES.get(arm_status, arm_status)}",
                           "clear the cause, reset the arm (piper.ResetPiper()) and re-enable")
        if err_code:
            report.problem(f"joint error bits {err_code:#06x} (high byte: angle limit j1-6; low byte: comm error)",
                           "move the joint back inside its limits (teach mode), check the joint cables, power-cycle")
    return report
