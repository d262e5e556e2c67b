"""teledex-doctor's probe of a Linker Arm A7: which of the seven motors answer, round trip, positions,
temperatures, enable state, and an arm answering on the other side's IDs."""

import time
from collections.abc import Iterable

import can

from ...can.identify import BusSignature
from ...can.port import CanPortConfig
from ..probe import REPLY_TIMEOUT_S, Report, check_socketcan, collect, open_bus, silent_device_fix
from . import protocol as ap
from .driver import OVER_TEMPERATURE_C

SEND_GAP_S = 0.0005  # socketcan's default tx queue holds 10 frames: do not burst 28 requests


def _ask(bus: can.BusABC, motor_ids: tuple[int, ...], registers: tuple[int, ...]) -> list[can.Message]:
    """Read requests to every motor; the replies (one-byte frames are requests, e.g. echoes, and are dropped)."""
    for motor_id in motor_ids:
        for register in registers:
            bus.send(can.Message(arbitration_id=motor_id, data=[register], is_extended_id=False))
            time.sleep(SEND_GAP_S)
    return [m for m in collect(bus, REPLY_TIMEOUT_S) if m.arbitration_id in motor_ids and len(m.data) > 1]


def probe_linker_a7(side: str, port: CanPortConfig, signatures: Iterable[BusSignature] = ()) -> Report:
    motor_ids = ap.motor_ids(side)
    report = Report(f"Linker Arm A7 ({side}, CAN IDs {motor_ids[0]}-{motor_ids[-1]}) on "
                    f"{port.interface}:{port.channel}")
    if not check_socketcan(port, report) or (bus := open_bus(port, report)) is None:
        return report
    other_side = "left" if side == "right" else "right"
    try:
        sent_s = time.time()  # python-can stamps received frames with the wall clock
        frames = _ask(bus, motor_ids, (ap.HANDSHAKE, ap.POSITION, ap.TEMPERATURE, ap.ENABLED))
        other = [] if frames else _ask(bus, ap.motor_ids(other_side), (ap.HANDSHAKE,))
    finally:
        bus.shutdown()
    if not frames:
        fix = "power the arm and release its e-stop; check the CAN cable and the 120 ohm termination"
        if other:
            fix = f"an A7 answers on the {other_side} IDs: set the arm's side to {other_side!r}"
        report.problem("no motor answers", silent_device_fix(port, ap.BUS_SIGNATURE.kind, fix, signatures))
        return report
    replies = {(m.arbitration_id, m.data[0]): bytes(m.data[1:]) for m in frames}
    report.facts.append(f"first reply after {(frames[0].timestamp - sent_s) * 1000:.1f} ms")
    silent = [m for m in motor_ids if (m, ap.HANDSHAKE) not in replies]
    if silent:
        report.problem(f"motors {silent} do not answer", "check the cable and connectors between the joints "
                       "upstream of the first silent motor, then power-cycle the arm")

    def floats(register: int) -> list[float | None]:
        return [round(ap.unpack_float(replies[m, register]), 3) if len(replies.get((m, register), b"")) >= 4
                else None for m in motor_ids]
    temperatures = floats(ap.TEMPERATURE)
    enabled = [replies[m, ap.ENABLED][0] == 1 if (m, ap.ENABLED) in replies else None for m in motor_ids]
    report.facts.append(f"positions (rad) {floats(ap.POSITION)}")
    report.facts.append(f"temperatures (C) {temperatures}")
    report.facts.append(f"motors enabled: {enabled} (the driver enables them at connect)")
    hot = [m for m, t in zip(motor_ids, temperatures) if t is not None and t >= OVER_TEMPERATURE_C]
    if hot:
        report.problem(f"motors {hot} at or above {OVER_TEMPERATURE_C:.0f} C", "let the arm cool with the "
                       "motors disabled; lighten the load or lower real.linker_a7.speed_rad_s")
    return report
