"""Software latency of the teleoperation chain: an XR packet's arrival on this machine -> the command leaving for
the bus (robot.send_action returned: safety filter applied, device command written), for each headset transport.

A sender thread streams XR states at --rate Hz over loopback (trigger held, controller moving, so IK runs on every
packet), through one of the sources:
- udp: one state per datagram;
- xrobotoolkit: the XRoboToolkit app's TCP framing ({"functionName":"Tracking","value":...} in 0x3F..0xA5 frames);
- webxr: one state per WebSocket message over TLS (our page's socket).
The chain: source -> parse -> state machine / stale guard -> relative arm + IK -> hand mapping -> output chain ->
teledex robot (backend fake: the device command returns at once, so this measures our software only).

Two loops:
- input-paced (a tick runs when new data arrives, as the teleoperation loop does): arrival -> command out;
- polled at --rate Hz (lerobot-record's loop): the input's age when its command leaves, which adds the wait for
  the next tick (up to one period) on top of the processing.
"capture" is measured from the sample's capture time as the teleop reports it (sender stamp + estimated clock
offset): it adds the transport (TLS, TCP) and is what the recorder writes as the input timestamp.

The figure depends on the machine's load: threads wait for a CPU. Run it on an otherwise idle machine.

Run: .venv/bin/python benchmarks/control_latency.py [--rate 100] [--seconds 10] [--sources udp xrobotoolkit webxr]
"""

import argparse
import json
import logging
import os
import socket
import ssl
import tempfile
import threading
import time

import numpy as np
from websockets.sync.client import connect

from lerobot_robot_teledex import Teledex, TeledexConfig
from lerobot_teleoperator_teledex import TeledexXR, TeledexXRConfig
from teledex_lerobot.clock import now_ns
from teledex_lerobot.inputs import encode_xr_state
from teledex_lerobot.inputs.xrobotoolkit import CMD_CONNECT, CMD_FUNCTION, HEADSET_HEAD, encode_frame

SOURCES = ("udp", "xrobotoolkit", "webxr")
HEADSET_CLOCK_AHEAD_NS = 1_700_000_000_000_000_000  # the sender's clock: Unix-like, unrelated to our monotonic one
PRESET = "piper_linkerhand_o6_single"


def free_port(kind: int) -> int:
    with socket.socket(socket.AF_INET, kind) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def state(k: int, rate_hz: float) -> bytes:
    phase = 2 * np.pi * k / rate_hz / 3.0
    pose = np.r_[0.35, -0.2 + 0.06 * np.sin(phase), 1.0 + 0.06 * (1 - np.cos(phase)), 0.0, 0.0, 0.0, 1.0]
    return encode_xr_state(timestamp_ns=now_ns() + HEADSET_CLOCK_AHEAD_NS,
                           controllers={"right": {"pose": pose, "trigger": float(k > 20), "grip": 0.5}})


def sender(source: str, port: int, certificate: str):
    """send(bytes), close() for one transport, as a headset would use it."""
    if source == "udp":
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        return lambda data: sock.sendto(data, ("127.0.0.1", port)), sock.close
    if source == "xrobotoolkit":
        sock = socket.create_connection(("127.0.0.1", port))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        # the app identifies first (its connect frame); the link is refused to a connection that does not
        sock.sendall(encode_frame(CMD_CONNECT, b"BENCHMARK|-1", int(time.time() * 1000), head=HEADSET_HEAD))

        def send(data: bytes) -> None:
            wrapper = json.dumps({"functionName": "Tracking", "value": data.decode()}).encode()
            sock.sendall(encode_frame(CMD_FUNCTION, wrapper, int(time.time() * 1000), head=HEADSET_HEAD))
        return send, sock.close
    client = connect(f"wss://127.0.0.1:{port}/ws", ssl=ssl.create_default_context(cafile=certificate)).__enter__()
    return (lambda data: client.send(data.decode())), client.close


def stream(source: str, port: int, certificate: str, rate_hz: float, stop: threading.Event) -> None:
    send, close = sender(source, port, certificate)
    k, started = 0, time.monotonic()
    while not stop.is_set():
        send(state(k, rate_hz))
        k += 1
        time.sleep(max(0.0, started + k / rate_hz - time.monotonic()))
    close()


def run(source: str, mode: str, rate_hz: float, seconds: float, certificate_dir: str):
    port = free_port(socket.SOCK_DGRAM if source == "udp" else socket.SOCK_STREAM)
    teleop = TeledexXR(TeledexXRConfig(preset=PRESET, source=source, port=port,
                                       certificate_dir=certificate_dir))
    robot = Teledex(TeledexConfig(backend="fake"))
    robot.config.cameras = {}
    robot.cameras = {}
    teleop.connect()
    robot.connect()
    teleop.press_key("L1")
    teleop.press_key("L2")
    stop = threading.Event()
    thread = threading.Thread(target=stream, args=(source, port, os.path.join(certificate_dir, "cert.pem"),
                                                   rate_hz, stop), daemon=True)
    thread.start()
    arrival, capture, in_loop, sequence = [], [], [], 0
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
            out_ns = now_ns()
            if teleop.frame is not None:
                arrival.append(out_ns - teleop.frame.received_ns)
                capture.append(out_ns - teleop.sample_capture_ns)
                in_loop.append(out_ns - tick_ns)
    finally:
        stop.set()
        thread.join()
        line = teleop.diagnostics.last_line
        teleop.disconnect()
        robot.disconnect()
    warm_up = int(rate_hz)  # the first second
    return [np.array(v[warm_up:]) / 1e6 for v in (arrival, capture, in_loop)], line


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rate", type=float, default=100.0)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--sources", nargs="+", choices=SOURCES, default=list(SOURCES))
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    print(f"XR packet -> command out, {args.rate:g} Hz, {args.seconds:g} s per loop (ms); load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print("(arrival: from the packet's arrival; capture: from the sender's stamp on our clock; in-loop: get_action +"
          " send_action only)")
    print(f"{'source':13} {'loop':12} {'measure':8} {'ticks':>6} {'p50':>7} {'p90':>7} {'p99':>7} {'max':>7}")
    lines = []
    with tempfile.TemporaryDirectory() as certificate_dir:
        for source in args.sources:
            for mode in ("input-paced", "polled"):
                measures, line = run(source, mode, args.rate, args.seconds, certificate_dir)
                lines.append(f"{source} {mode}: {line}")
                for name, ms in zip(("arrival", "capture", "in-loop"), measures):
                    print(f"{source:13} {mode:12} {name:8} {len(ms):6d} {np.percentile(ms, 50):7.2f} "
                          f"{np.percentile(ms, 90):7.2f} {np.percentile(ms, 99):7.2f} {ms.max():7.2f}", flush=True)
    print("\nLast diagnostics line of each loop:")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
