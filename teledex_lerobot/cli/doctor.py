"""teledex-doctor: probe the configured real devices and say what is wrong and how to fix it.

Checks, per device: the CAN interface exists, is up and runs at 1 Mbit/s (socketcan); the bus opens; the device
answers (Piper: feedback rate, firmware, enable state, arm status and error bits; Linker Arm A7: which of the seven
motors answer, round trip, positions, temperatures, enable state; LinkerHand: version, position and fault replies);
RealSense cameras: the configured serials are connected. Exits 1 if anything needs fixing.
    teledex-doctor --preset piper_linkerhand_o6_single --arm-channel can0 --hand-channel can1 --camera 123456789012
A device that does not answer is looked for among the others: a hand answering on the arm's channel means the
channels are swapped. Simulated devices: `--arm-interface teledex --hand-interface teledex` with teledex-sim running.
"""

import argparse
import struct
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import can

from ..devices import a7_protocol as ap
from ..devices import linkerhand_protocol as lp
from ..devices import piper_protocol as pp
from ..devices.a7_driver import OVER_TEMPERATURE_C as A7_OVER_TEMPERATURE_C
from ..devices.can.identify import identify, swapped_channel_hint
from ..devices.real_config import CAN_INTERFACES, CanPortConfig
from ..devices.real_factory import BUS_SIGNATURES
from ..presets import load_preset

LISTEN_S = 0.3
REPLY_TIMEOUT_S = 0.2
PIPER_FEEDBACK_HZ = 200.0
A7_SEND_GAP_S = 0.0005  # socketcan's default tx queue holds 10 frames: do not burst 28 requests


@dataclass
class Report:
    device: str
    facts: list[str] = field(default_factory=list)
    problems: list[tuple[str, str]] = field(default_factory=list)  # (what is wrong, how to fix it)

    def problem(self, what: str, fix: str) -> None:
        self.problems.append((what, fix))

    def render(self) -> str:
        lines = [f"[{'OK' if not self.problems else 'PROBLEM'}] {self.device}"]
        lines += [f"    {fact}" for fact in self.facts]
        lines += [f"    ! {what}\n      fix: {fix}" for what, fix in self.problems]
        return "\n".join(lines)


def check_socketcan(port: CanPortConfig, report: Report) -> bool:
    """Interface present, up, at the expected bitrate. Only for socketcan; other interfaces have no such state."""
    if port.interface != "socketcan":
        return True
    net = Path("/sys/class/net") / port.channel
    if not net.exists():
        report.problem(f"no CAN interface {port.channel!r}", "plug in the USB-CAN adapter; list interfaces with "
                       "`ip -br link show type can`; set the right --*-channel")
        return False
    if (net / "operstate").read_text().strip() not in ("up", "unknown"):
        report.problem(f"{port.channel} is down", f"sudo ip link set {port.channel} up type can bitrate {port.bitrate}")
        return False
    details = subprocess.run(["ip", "-details", "link", "show", port.channel], capture_output=True, text=True).stdout
    if f"bitrate {port.bitrate}" not in details:
        report.problem(f"{port.channel} is not at {port.bitrate} bit/s",
                       f"sudo ip link set {port.channel} down && sudo ip link set {port.channel} up type can "
                       f"bitrate {port.bitrate}")
    return True


def open_bus(port: CanPortConfig, report: Report) -> can.BusABC | None:
    try:
        return can.Bus(channel=port.channel, interface=port.interface)
    except Exception as error:
        fix = ("start `teledex-sim` with the simulated device on this channel" if port.interface == "teledex" else
               "check the interface name and that no other program holds the adapter (slcan/pcan)")
        report.problem(f"cannot open {port.interface}:{port.channel}: {error}", fix)
        return None


def silent_device_fix(port: CanPortConfig, own_kind: str, fix: str) -> str:
    """The fix for a device that does not answer: swap the channels when another known device answers there."""
    hint = swapped_channel_hint(own_kind, port.interface, port.channel, identify(port.interface, port.channel,
                                                                                  BUS_SIGNATURES))
    return f"{hint}Swap --arm-channel and --hand-channel." if hint else fix


def _collect(bus: can.BusABC, seconds: float) -> list[can.Message]:
    frames, deadline = [], time.monotonic() + seconds
    while (remaining := deadline - time.monotonic()) > 0:
        message = bus.recv(timeout=remaining)
        if message is not None:
            frames.append(message)
    return frames


def probe_piper(port: CanPortConfig) -> Report:
    report = Report(f"Agilex Piper on {port.interface}:{port.channel}")
    if not check_socketcan(port, report) or (bus := open_bus(port, report)) is None:
        return report
    try:
        bus.send(can.Message(arbitration_id=pp.FIRMWARE, data=b"\x01" + bytes(7), is_extended_id=False))
        frames = _collect(bus, LISTEN_S)
    finally:
        bus.shutdown()
    joints = [m for m in frames if m.arbitration_id == pp.JOINT_FEEDBACK[0]]
    rate_hz = len(joints) / LISTEN_S
    if not joints:
        report.problem("no joint feedback (0x2A5) from the arm", silent_device_fix(
            port, pp.BUS_SIGNATURE.kind, "power the arm (24 V), check the CAN cable, CAN-H/CAN-L and the 120 ohm "
            "termination; the arm must be the only Piper on this bus"))
        return report
    report.facts.append(f"joint feedback {rate_hz:.0f} Hz, {len(frames) / LISTEN_S:.0f} frames/s")
    if rate_hz < 0.5 * PIPER_FEEDBACK_HZ:
        report.problem(f"joint feedback at {rate_hz:.0f} Hz (expected ~{PIPER_FEEDBACK_HZ:.0f})",
                       "bus overloaded or lossy: check the bitrate, termination and other devices on the bus")
    firmware = b"".join(bytes(m.data) for m in frames if m.arbitration_id == pp.FIRMWARE and m.data[:1] != b"\x01")
    start = firmware.find(b"S-V")
    report.facts.append(f"firmware {firmware[start:start + 8].decode(errors='replace')}" if start >= 0
                        else "firmware: no reply to the version query")
    low_speed = {m.arbitration_id: m for m in frames if m.arbitration_id in pp.MOTOR_LOW_SPEED}
    enabled = [bool(low_speed[i].data[5] & (1 << pp.FOC_DRIVER_ENABLED_BIT)) if i in low_speed else None
               for i in pp.MOTOR_LOW_SPEED]
    report.facts.append(f"motors enabled: {enabled}")
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


def _ask_a7(bus: can.BusABC, motor_ids: tuple[int, ...], registers: tuple[int, ...]) -> list[can.Message]:
    """Read requests to every motor; the replies (one-byte frames are requests, e.g. echoes, and are dropped)."""
    for motor_id in motor_ids:
        for register in registers:
            bus.send(can.Message(arbitration_id=motor_id, data=[register], is_extended_id=False))
            time.sleep(A7_SEND_GAP_S)
    return [m for m in _collect(bus, REPLY_TIMEOUT_S) if m.arbitration_id in motor_ids and len(m.data) > 1]


def probe_linker_a7(side: str, port: CanPortConfig) -> Report:
    motor_ids = ap.motor_ids(side)
    report = Report(f"Linker Arm A7 ({side}, CAN IDs {motor_ids[0]}-{motor_ids[-1]}) on "
                    f"{port.interface}:{port.channel}")
    if not check_socketcan(port, report) or (bus := open_bus(port, report)) is None:
        return report
    other_side = "left" if side == "right" else "right"
    try:
        sent_s = time.time()  # python-can stamps received frames with the wall clock
        frames = _ask_a7(bus, motor_ids, (ap.HANDSHAKE, ap.POSITION, ap.TEMPERATURE, ap.ENABLED))
        other = [] if frames else _ask_a7(bus, ap.motor_ids(other_side), (ap.HANDSHAKE,))
    finally:
        bus.shutdown()
    if not frames:
        fix = "power the arm and release its e-stop; check the CAN cable and the 120 ohm termination"
        if other:
            fix = f"an A7 answers on the {other_side} IDs: set the arm's side to {other_side!r}"
        report.problem("no motor answers", silent_device_fix(port, ap.BUS_SIGNATURE.kind, fix))
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
    hot = [m for m, t in zip(motor_ids, temperatures) if t is not None and t >= A7_OVER_TEMPERATURE_C]
    if hot:
        report.problem(f"motors {hot} at or above {A7_OVER_TEMPERATURE_C:.0f} C", "let the arm cool with the "
                       "motors disabled; lighten the load or lower real.a7_speed_rad_s")
    return report


def probe_linkerhand(model: str, side: str, port: CanPortConfig) -> Report:
    layout = lp.layout_for(model)
    hand_id = layout.hand_id(side)
    report = Report(f"{model} ({side}, CAN ID {hand_id:#x}) on {port.interface}:{port.channel}")
    if not check_socketcan(port, report) or (bus := open_bus(port, report)) is None:
        return report
    try:
        requests = [lp.VERSION, layout.position_frames[0].cmd, *(b.cmd for b in layout.fault_frames)]
        for cmd in requests:
            bus.send(can.Message(arbitration_id=hand_id, data=bytes([cmd]), is_extended_id=False))
        replies = {m.data[0]: bytes(m.data[1:]) for m in _collect(bus, REPLY_TIMEOUT_S)
                   if m.arbitration_id == hand_id and len(m.data) > 1}
    finally:
        bus.shutdown()
    if not replies:
        other = lp.LEFT_HAND_ID if hand_id == lp.RIGHT_HAND_ID else lp.RIGHT_HAND_ID
        report.problem("the hand does not reply", silent_device_fix(
            port, lp.BUS_SIGNATURE.kind, f"power the hand; check the side setting (a {side} hand answers on "
            f"{hand_id:#x}, the other side on {other:#x}) and the CAN cable/termination"))
        return report
    if lp.VERSION in replies:
        report.facts.append(f"version bytes {list(replies[lp.VERSION])}")
    faults = [value for b in layout.fault_frames for value in replies.get(b.cmd, b"")]
    report.facts.append(f"fault codes {faults}")
    if any(faults):
        report.problem(f"motor faults {faults}", "free any blocked finger, let the hand cool, power-cycle it")
    return report


def probe_cameras(serials: list[str]) -> Report:
    report = Report(f"RealSense cameras {serials}")
    try:
        import pyrealsense2 as rs
    except ImportError as error:
        report.problem(f"pyrealsense2 does not import: {error}", "install libusb-1.0 (apt install libusb-1.0-0)")
        return report
    connected = {device.get_info(rs.camera_info.serial_number): device.get_info(rs.camera_info.name)
                 for device in rs.context().query_devices()}
    report.facts.append(f"connected: {connected or 'none'}")
    for serial in serials:
        if serial not in connected:
            report.problem(f"camera {serial} not found", "plug it into a USB 3 port; give serials as listed above "
                           "(names are not reliable in LeRobot 0.6: use serial_number_or_name=<serial>)")
    return report


def run(preset_name: str, arm: CanPortConfig, hand: CanPortConfig, cameras: list[str]) -> list[Report]:
    preset = load_preset(preset_name)
    reports = []
    if preset.arm is not None:
        if preset.arm.model == "piper":
            reports.append(probe_piper(arm))
        elif preset.arm.model == "linker_a7":
            reports.append(probe_linker_a7(preset.arm.side, arm))
        else:
            reports.append(Report(f"{preset.arm.model}", problems=[(
                "teledex-doctor has no probe for this arm yet", "use the vendor's tools")]))
    if preset.hand is not None:
        reports.append(probe_linkerhand(preset.hand.model, preset.hand.side, hand))
    if cameras:
        reports.append(probe_cameras(cameras))
    return reports


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="teledex-doctor", description=__doc__.split("\n\n")[0])
    parser.add_argument("--preset", default="piper_linkerhand_o6_single")
    parser.add_argument("--arm-interface", default="socketcan", choices=CAN_INTERFACES,
                        help="teledex: the loopback bus of teledex-sim")
    parser.add_argument("--arm-channel", default="can0")
    parser.add_argument("--hand-interface", default="socketcan", choices=CAN_INTERFACES)
    parser.add_argument("--hand-channel", default="can1")
    parser.add_argument("--camera", action="append", default=[], metavar="SERIAL", help="expected RealSense serial")
    args = parser.parse_args(argv)
    arm = CanPortConfig(args.arm_interface, args.arm_channel)
    hand = CanPortConfig(args.hand_interface, args.hand_channel)
    for what, port in (("--arm", arm), ("--hand", hand)):
        port.validate(what)  # warns when a bus reaches the network
    reports = run(args.preset, arm, hand, args.camera)
    for report in reports:
        print(report.render())
    sys.exit(1 if any(report.problems for report in reports) else 0)


if __name__ == "__main__":
    main()
