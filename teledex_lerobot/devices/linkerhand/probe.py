"""teledex-doctor's probe of a LinkerHand (O6, L10, L20): its identity (a different model than expected is a
problem), position and fault replies."""

from collections.abc import Iterable

import can

from ...can.identify import BusSignature
from ...can.port import CanPortConfig
from ..probe import REPLY_TIMEOUT_S, Report, check_socketcan, collect, open_bus, silent_device_fix
from . import protocol as lp
from .identity import model_mismatch, parse_identity, wrong_model_fix


def probe_linkerhand(model: str, side: str, port: CanPortConfig,
                     signatures: Iterable[BusSignature] = ()) -> Report:
    layout = lp.layout_for(model)
    hand_id = layout.hand_id(side)
    report = Report(f"{model} ({side}, CAN ID {hand_id:#x}) on {port.interface}:{port.channel}")
    if not check_socketcan(port, report) or (bus := open_bus(port, report)) is None:
        return report
    try:
        requests = [lp.VERSION, lp.SERIAL, layout.position_frames[0].cmd, *(b.cmd for b in layout.fault_frames)]
        for cmd in requests:
            bus.send(can.Message(arbitration_id=hand_id, data=bytes([cmd]), is_extended_id=False))
        frames = [m for m in collect(bus, REPLY_TIMEOUT_S) if m.arbitration_id == hand_id and len(m.data) > 1]
    finally:
        bus.shutdown()
    replies = {m.data[0]: bytes(m.data[1:]) for m in frames}
    if not replies:
        other = lp.LEFT_HAND_ID if hand_id == lp.RIGHT_HAND_ID else lp.RIGHT_HAND_ID
        report.problem("the hand does not reply", silent_device_fix(
            port, lp.BUS_SIGNATURE.kind, f"power the hand; check the side setting (a {side} hand answers on "
            f"{hand_id:#x}, the other side on {other:#x}) and the CAN cable/termination", signatures))
        return report
    identity = parse_identity(frames, hand_id)
    report.facts.append(f"identity: {identity.describe()}")
    mismatch = model_mismatch(model, identity)
    if mismatch is not None:
        report.problem(f"wrong hand model: {mismatch}", wrong_model_fix(model, identity))
    faults = [value for b in layout.fault_frames for value in replies.get(b.cmd, b"")]
    report.facts.append(f"fault codes {faults}")
    if any(faults):
        report.problem(f"motor faults {faults}", "free any blocked finger, let the hand cool, power-cycle it")
    return report
