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
import sys

from ..can.port import CAN_INTERFACES, CanPortConfig
from ..devices.probe import Report
from ..devices.realsense.probe import probe_cameras
from ..devices.registry import bus_signatures, find_device_model
from ..presets import load_preset
from .errors import run_command


def probe_part(spec, port: CanPortConfig) -> Report:
    """spec: a presets.PartSpec; the probe its model registers, given every vendor's bus signatures (to name the
    device heard instead of a silent one)."""
    found = find_device_model(spec.model)
    probe = found[1].probe if found is not None else None
    if probe is None:
        return Report(spec.model, problems=[("teledex-doctor has no probe for this device", "use the vendor's tools")])
    report = probe(spec.side, port, bus_signatures())
    if not isinstance(report, Report):  # the vendor's registered probe is wrong: its author's bug
        raise TypeError(f"{spec.model}'s doctor probe returned {type(report).__name__}, not a devices.probe.Report")
    return report


def run(preset_name: str, arm: CanPortConfig, hand: CanPortConfig, cameras: list[str]) -> list[Report]:
    preset = load_preset(preset_name)
    reports = [probe_part(spec, port) for spec, port in ((preset.arm, arm), (preset.hand, hand)) if spec is not None]
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
    run_command("teledex-doctor", _check, parser.parse_args(argv))


def _check(args: argparse.Namespace) -> None:
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
