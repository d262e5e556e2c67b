"""teledex-sim: run simulated CAN devices as their own process, for any program using the vendor SDKs.

The simulators sit on a python-can bus: `udp_multicast` (default) reaches other processes on this machine, with
the channel a multicast group (e.g. 239.74.163.1; needs `msgpack`); `virtual` only works inside one process.
Example, then point the SDK at the same group:
    teledex-sim --piper 239.74.163.1 --hand linkerhand_o6:right:239.74.163.2 --a7 right:239.74.163.3
    piper = C_PiperInterface_V2("239.74.163.1", judge_flag=False, can_auto_init=False)
    piper.CreateCanBus("239.74.163.1", bustype="udp_multicast"); piper.ConnectPort()
    hand = O6("right", "239.74.163.2", interface_type="udp_multicast")
Caveat: on udp_multicast every bus also receives its own frames. piper_sdk is unaffected (commands and feedback
use different IDs), but linkerbot's O6 then reads its own angle commands back as replies, linkerbot's A7 fails on
its own one-byte read requests (teledex-doctor and raw-frame clients still reach a simulated A7), and our L10/L20
driver filters its echoes. For linkerbot's A7 in another process use a vcan interface (`--interface socketcan
--a7 right:vcan0`, after `sudo ip link add dev vcan0 type vcan && sudo ip link set vcan0 up`), which does not echo.
"""

import argparse
import signal
import threading

from ..devices.a7_sim import A7SimConfig, A7Simulator
from ..devices.linkerhand_protocol import LAYOUTS
from ..devices.linkerhand_sim import LinkerHandSimConfig, LinkerHandSimulator
from ..devices.piper_sim import PiperSimConfig, PiperSimulator
from ..geometry.sides import SIDES


def _hand_spec(text: str) -> tuple[str, str, str]:
    parts = text.split(":", 2)
    if len(parts) != 3 or parts[0] not in LAYOUTS or parts[1] not in SIDES:
        raise argparse.ArgumentTypeError(f"expected MODEL:SIDE:CHANNEL with MODEL in {sorted(LAYOUTS)} and SIDE "
                                         f"right/left (got {text!r})")
    return parts[0], parts[1], parts[2]


def _a7_spec(text: str) -> tuple[str, str]:
    parts = text.split(":", 1)
    if len(parts) != 2 or parts[0] not in SIDES or not parts[1]:
        raise argparse.ArgumentTypeError(f"expected SIDE:CHANNEL with SIDE right/left (got {text!r})")
    return parts[0], parts[1]


def _describe(simulator) -> str:
    if isinstance(simulator, PiperSimulator):
        return f"Piper@{simulator.config.channel}"
    if isinstance(simulator, A7Simulator):
        return f"linker_a7-{simulator.config.side}@{simulator.config.channel}"
    return f"{simulator.config.model}-{simulator.config.side}@{simulator.config.channel}"


def build_simulators(args) -> list:
    simulators = []
    if args.piper:
        simulators.append(PiperSimulator(PiperSimConfig(interface=args.interface, channel=args.piper,
                                                        firmware=args.piper_firmware)))
    for model, side, channel in args.hand or []:
        simulators.append(LinkerHandSimulator(LinkerHandSimConfig(model=model, side=side, interface=args.interface,
                                                                  channel=channel)))
    for side, channel in args.a7 or []:
        simulators.append(A7Simulator(A7SimConfig(side=side, interface=args.interface, channel=channel)))
    return simulators


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="teledex-sim", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__.split("\n\n", 1)[1])
    parser.add_argument("--interface", default="udp_multicast", choices=("udp_multicast", "socketcan", "virtual"),
                        help="python-can interface (default: udp_multicast; socketcan for a vcan interface)")
    parser.add_argument("--piper", metavar="CHANNEL", help="run a simulated Agilex Piper on CHANNEL")
    parser.add_argument("--piper-firmware", default="S-V1.6-3", help="firmware string the Piper reports")
    parser.add_argument("--hand", metavar="MODEL:SIDE:CHANNEL", type=_hand_spec, action="append",
                        help="run a simulated LinkerHand (repeatable), e.g. linkerhand_o6:right:239.74.163.2")
    parser.add_argument("--a7", metavar="SIDE:CHANNEL", type=_a7_spec, action="append",
                        help="run a simulated Linker Arm A7 (repeatable), e.g. right:239.74.163.3")
    parser.add_argument("--duration-s", type=float, default=None, help="stop after this long (default: Ctrl-C)")
    args = parser.parse_args(argv)
    simulators = build_simulators(args)
    if not simulators:
        parser.error("nothing to simulate: give --piper, --hand and/or --a7")
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    for simulator in simulators:
        simulator.start()
    print(f"teledex-sim: {len(simulators)} device(s) on {args.interface}: "
          + ", ".join(_describe(s) for s in simulators), flush=True)
    try:
        stop.wait(args.duration_s)
    except KeyboardInterrupt:
        pass
    finally:
        for simulator in simulators:
            simulator.stop()


if __name__ == "__main__":
    main()
