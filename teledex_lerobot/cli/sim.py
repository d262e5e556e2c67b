"""teledex-sim: run simulated CAN devices as their own process, for any program using the vendor SDKs.

The simulators sit on a python-can bus: `udp_multicast` (default) reaches other processes on this machine, with
the channel a multicast group (e.g. 239.74.163.1; needs `msgpack`); `virtual` only works inside one process.
Example, then point the SDK at the same group:
    teledex-sim --piper 239.74.163.1 --hand linkerhand_o6:right:239.74.163.2
    piper = C_PiperInterface_V2("239.74.163.1", judge_flag=False, can_auto_init=False)
    piper.CreateCanBus("239.74.163.1", bustype="udp_multicast"); piper.ConnectPort()
    hand = O6("right", "239.74.163.2", interface_type="udp_multicast")
Caveat: on udp_multicast every bus also receives its own frames. piper_sdk is unaffected (commands and feedback
use different IDs), but linkerbot's O6 then reads its own angle commands back as replies, and our L10/L20 driver
filters its echoes.
"""

import argparse
import signal
import threading

from ..devices.linkerhand_protocol import LAYOUTS
from ..devices.linkerhand_sim import LinkerHandSimConfig, LinkerHandSimulator
from ..devices.piper_sim import PiperSimConfig, PiperSimulator


def _hand_spec(text: str) -> tuple[str, str, str]:
    parts = text.split(":", 2)
    if len(parts) != 3 or parts[0] not in LAYOUTS or parts[1] not in ("right", "left"):
        raise argparse.ArgumentTypeError(f"expected MODEL:SIDE:CHANNEL with MODEL in {sorted(LAYOUTS)} and SIDE "
                                         f"right/left (got {text!r})")
    return parts[0], parts[1], parts[2]


def build_simulators(args) -> list:
    simulators = []
    if args.piper:
        simulators.append(PiperSimulator(PiperSimConfig(interface=args.interface, channel=args.piper,
                                                        firmware=args.piper_firmware)))
    for model, side, channel in args.hand or []:
        simulators.append(LinkerHandSimulator(LinkerHandSimConfig(model=model, side=side, interface=args.interface,
                                                                  channel=channel)))
    return simulators


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="teledex-sim", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__.split("\n\n", 1)[1])
    parser.add_argument("--interface", default="udp_multicast", choices=("udp_multicast", "virtual"),
                        help="python-can interface (default: udp_multicast)")
    parser.add_argument("--piper", metavar="CHANNEL", help="run a simulated Agilex Piper on CHANNEL")
    parser.add_argument("--piper-firmware", default="S-V1.6-3", help="firmware string the Piper reports")
    parser.add_argument("--hand", metavar="MODEL:SIDE:CHANNEL", type=_hand_spec, action="append",
                        help="run a simulated LinkerHand (repeatable), e.g. linkerhand_o6:right:239.74.163.2")
    parser.add_argument("--duration-s", type=float, default=None, help="stop after this long (default: Ctrl-C)")
    args = parser.parse_args(argv)
    simulators = build_simulators(args)
    if not simulators:
        parser.error("nothing to simulate: give --piper and/or --hand")
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    for simulator in simulators:
        simulator.start()
    print(f"teledex-sim: {len(simulators)} device(s) on {args.interface}: "
          + ", ".join(f"Piper@{args.piper}" if isinstance(s, PiperSimulator) else
                      f"{s.config.model}-{s.config.side}@{s.config.channel}" for s in simulators), flush=True)
    try:
        stop.wait(args.duration_s)
    except KeyboardInterrupt:
        pass
    finally:
        for simulator in simulators:
            simulator.stop()


if __name__ == "__main__":
    main()
