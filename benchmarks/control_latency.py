"""Software latency of the teleoperation chain: an XR packet's arrival on this machine -> the command leaving for
the bus (robot.send_action returned: safety filter applied, device command written).

A sender thread streams XR state datagrams over UDP loopback at --rate Hz (trigger held, controller moving, so IK
runs on every packet). The chain: UDP source -> parse -> state machine / stale guard -> relative arm + IK -> hand
mapping -> output chain -> teledex robot (backend fake: the device command returns at once, so this measures our
software only).

Two loops:
- input-paced (seed 002: a tick runs when new data arrives): latency = arrival -> command out;
- polled at --rate Hz (lerobot-record's loop): the input's age when its command leaves, which adds the wait for
  the next tick (up to one period) on top of the processing.

The figure depends on the machine's load: threads wait for a CPU. Run it on an otherwise idle machine.

Run: .venv/bin/python benchmarks/control_latency.py [--rate 100] [--seconds 10]
"""

import argparse
import logging
import socket
import threading
import time

import numpy as np

from lerobot_robot_teledex import Teledex, TeledexConfig
from lerobot_teleoperator_teledex import TeledexXR, TeledexXRConfig
from teledex_lerobot.clock import now_ns
from teledex_lerobot.inputs import encode_xr_state

PRESET = "piper_linkerhand_o6_single"


def stream(port: int, rate_hz: float, stop: threading.Event) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        k, started = 0, time.monotonic()
        while not stop.is_set():
            phase = 2 * np.pi * k / rate_hz / 3.0
            pose = np.r_[0.35, -0.2 + 0.06 * np.sin(phase), 1.0 + 0.06 * (1 - np.cos(phase)), 0.0, 0.0, 0.0, 1.0]
            sock.sendto(encode_xr_state(controllers={"right": {"pose": pose, "trigger": float(k > 20), "grip": 0.5}}),
                        ("127.0.0.1", port))
            k += 1
            time.sleep(max(0.0, started + k / rate_hz - time.monotonic()))


def run(mode: str, rate_hz: float, seconds: float) -> tuple[np.ndarray, np.ndarray, str]:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    teleop = TeledexXR(TeledexXRConfig(preset=PRESET, host="127.0.0.1", port=port))
    robot = Teledex(TeledexConfig(backend="fake"))
    robot.config.cameras = {}
    robot.cameras = {}
    teleop.connect()
    robot.connect()
    teleop.press_key("L1")
    teleop.press_key("L2")
    stop = threading.Event()
    sender = threading.Thread(target=stream, args=(port, rate_hz, stop), daemon=True)
    sender.start()
    latencies, in_loop, sequence = [], [], 0
    deadline = time.monotonic() + seconds
    next_tick = time.monotonic()
    try:
        while time.monotonic() < deadline:
            if mode == "input-paced":
                if not teleop.receiver.wait_newer(sequence, timeout_s=0.5):
                    continue
                sequence = teleop.receiver.sequence
            else:
                next_tick += 1.0 / rate_hz
                time.sleep(max(0.0, next_tick - time.monotonic()))
            tick_ns = now_ns()
            robot.send_action(teleop.get_action())
            if teleop.sample_capture_ns is not None:
                latencies.append(now_ns() - teleop.sample_capture_ns)
                in_loop.append(now_ns() - tick_ns)
    finally:
        stop.set()
        sender.join()
        line = teleop.diagnostics.last_line
        teleop.disconnect()
        robot.disconnect()
    warm_up = int(rate_hz)  # the first second
    return np.array(latencies[warm_up:]) / 1e6, np.array(in_loop[warm_up:]) / 1e6, line


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rate", type=float, default=100.0)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    print(f"XR packet arrival -> command out, {args.rate:g} Hz, {args.seconds:g} s per loop (ms)")
    print("(in-loop = get_action + send_action only; the rest is parsing and thread wake-up, or the poll wait)")
    print(f"{'loop':14} {'measure':10} {'ticks':>6} {'p50':>7} {'p90':>7} {'p99':>7} {'max':>7}")
    lines = []
    for mode in ("input-paced", "polled"):
        total, in_loop, line = run(mode, args.rate, args.seconds)
        lines.append(f"{mode}: {line}")
        for measure, ms in (("arrival", total), ("in-loop", in_loop)):
            print(f"{mode:14} {measure:10} {len(ms):6d} {np.percentile(ms, 50):7.2f} {np.percentile(ms, 90):7.2f} "
                  f"{np.percentile(ms, 99):7.2f} {ms.max():7.2f}")
    print("\nLast diagnostics line of each loop:")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
