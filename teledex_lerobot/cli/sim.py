"""teledex-sim: simulated CAN devices in their own process, for any program using the vendor SDKs.

Starts the teledex loopback CAN bus (or joins the one already running) and puts each simulated device on its
channel (--device MODEL:SIDE:CHANNEL, any model of devices/registry.py). Any python-can program reaches them with
the interface name "teledex"; the frames travel over a Unix socket and never leave this machine:
    teledex-sim --device piper:right:can0 --device linkerhand_o6:right:can1 --device linker_a7:right:can2
    piper = C_PiperInterface_V2("can0", judge_flag=False, can_auto_init=False)
    piper.CreateCanBus("can0", bustype="teledex", judge_flag=False); piper.ConnectPort()
    hand = O6("right", "can1", interface_type="teledex")
    arm = A7("right", "can2", interface_type="teledex")
    --robot.real.arm.interface=teledex --robot.real.arm.channel=can0  (teledex-record, lerobot-record...)
The bus behaves like CAN: every other node on a channel receives a frame, the sender does not, channels are
isolated, opening a channel that no teledex-sim serves fails, and so does a second simulated device answering on
the CAN IDs of one already on its channel (exit code 2). `--channel NAME` serves a channel with no
simulated device on it. The first teledex-sim runs the bus: stopping or killing it pulls every cable at once.
`--interface socketcan` puts the devices on (v)can interfaces instead.

Real devices have processors of their own, which a busy host never delays; simulated ones share the host's. So
teledex-sim (and the bus it runs) raise their scheduling priority when allowed (nice -10: root or CAP_SYS_NICE),
and say so; at normal priority a heavily loaded host can stall them long enough to look like a device going silent.
`--normal-priority` keeps the default.
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import threading

from ..can import wire
from ..can.broker import query_stats, serve_channels
from ..devices.registry import device_model, real_models
from ..errors import DeviceError
from ..geometry.sides import SIDES


def _device_spec(text: str) -> tuple[str, str, str]:
    parts = text.split(":", 2)
    if len(parts) != 3 or parts[0] not in real_models() or parts[1] not in SIDES or not parts[2]:
        raise argparse.ArgumentTypeError(f"expected MODEL:SIDE:CHANNEL with MODEL in {real_models()} and SIDE "
                                         f"right/left (got {text!r})")
    model, side, channel = parts
    if device_model(model)[1].simulator is None:
        raise argparse.ArgumentTypeError(f"{model} has no wire-protocol simulator")
    return model, side, channel


def build_simulators(args) -> list:
    simulators = []
    for model, side, channel in args.device:
        make = device_model(model)[1].simulator
        assert make is not None  # _device_spec refused models without one
        simulators.append(make(side, args.interface, channel))
    return simulators


SIM_NICENESS = -10  # about ten times the CPU share of a normal process when both want it (Linux CFS weights)


def _raise_priority() -> str:
    try:
        os.nice(SIM_NICENESS)
    except PermissionError:
        return "normal priority (raising it needs root or CAP_SYS_NICE)"
    return f"priority raised (nice {os.nice(0)})"


def _start_bus(args) -> subprocess.Popen | None:
    """The broker process this teledex-sim runs (it stops when we close its stdin, or die), or None when another
    teledex-sim runs the bus already and we join it."""
    path = args.broker or wire.broker_path()
    os.environ[wire.BROKER_ENV] = path  # this process's simulators join the same bus
    broker = subprocess.Popen([sys.executable, "-m", "teledex_lerobot.can.broker", "--path", path,
                               *[f"--channel={channel}" for channel in args.channel or []]],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert broker.stdout is not None  # stdout=PIPE
    answer = json.loads(broker.stdout.readline() or "{}")
    if "listening" in answer:
        return broker
    broker.wait(timeout=10)
    if "already_running" not in answer:
        raise DeviceError(f"the loopback CAN bus did not start at {path} (its broker's error is above); give "
                          "--broker (or $" + wire.BROKER_ENV + ") a socket path in a folder you can write")
    serve_channels(args.channel or [], path)
    return None


def _stop_bus(broker: subprocess.Popen) -> None:
    stats = query_stats()
    print(f"teledex-sim: relayed {stats['frames_relayed']} frames, dropped {stats['frames_dropped']} (frames meant "
          "for nodes that did not read them)", flush=True)
    assert broker.stdin is not None  # stdin=PIPE
    broker.stdin.close()
    broker.wait(timeout=10)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="teledex-sim", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__.split("\n\n", 1)[1])
    parser.add_argument("--interface", default="teledex", choices=("teledex", "socketcan"),
                        help="teledex (default): the loopback CAN bus; socketcan: (v)can interfaces")
    parser.add_argument("--broker", metavar="PATH", default=None,
                        help=f"the loopback bus's socket (default ${wire.BROKER_ENV}, else {wire.broker_path()})")
    parser.add_argument("--device", metavar="MODEL:SIDE:CHANNEL", type=_device_spec, action="append", default=[],
                        help="run a simulated device (repeatable), e.g. linkerhand_o6:right:can1")
    parser.add_argument("--channel", metavar="NAME", action="append",
                        help="also serve this loopback channel with no device on it (repeatable)")
    parser.add_argument("--duration-s", type=float, default=None, help="stop after this long (default: Ctrl-C)")
    parser.add_argument("--normal-priority", action="store_true",
                        help="do not raise the simulators' scheduling priority")
    args = parser.parse_args(argv)
    if args.interface != "teledex" and (args.channel or args.broker):
        parser.error("--channel and --broker belong to the teledex loopback bus (--interface teledex)")
    simulators = build_simulators(args)
    if not simulators and not args.channel:
        parser.error("nothing to simulate: give --device and/or --channel")
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    priority = "normal priority" if args.normal_priority else _raise_priority()  # the bus inherits it
    try:
        broker = _start_bus(args) if args.interface == "teledex" else None
    except DeviceError as error:
        print(f"teledex-sim: error: {error}", file=sys.stderr, flush=True)
        sys.exit(2)
    exit_code = 0
    try:
        for simulator in simulators:
            simulator.start()
        if args.interface == "teledex":
            print(f"teledex-sim: loopback CAN bus at {wire.broker_path()} ({'started' if broker else 'joined'})",
                  flush=True)
        print(f"teledex-sim: {len(simulators)} device(s) on {args.interface}: "
              + ", ".join([f"{model}-{side}@{channel}" for model, side, channel in args.device]
                          + [f"channel {c}" for c in args.channel or []]) + f"; {priority}", flush=True)
        stop.wait(args.duration_s)
    except KeyboardInterrupt:
        pass
    except Exception as error:  # e.g. a channel the running broker refuses, a device already on it
        print(f"teledex-sim: {error}", file=sys.stderr, flush=True)
        exit_code = 2
    finally:
        for simulator in simulators:
            simulator.stop()
        if broker is not None:
            _stop_bus(broker)
    sys.exit(exit_code)


if __name__ == "__main__":
    main()
