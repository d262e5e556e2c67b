"""CAN frame latency: python-can's in-process `virtual` bus next to the teledex loopback bus between processes, and
how fast our drivers notice a cable pull (killing teledex-sim).

Latency: a sender puts its clock.now_ns() (the system-wide monotonic clock) in each frame's 8 data bytes; the
receiver, in another process for the teledex bus (in another thread for virtual, which cannot cross processes),
subtracts it on arrival. Frames go out at --rate_hz. Rows:
  virtual            sender and receiver threads of one process
  teledex idle       benchmark -> teledex-sim's broker -> receiver process; the broker serves nothing else
  teledex loaded     the same while teledex-sim also runs a Piper (3040 frames/s, read by piper_sdk in a third
                     process) and an O6 polled by linkerbot there: a recording session's traffic through the broker
Cable pull: teledex-sim runs a Piper, an O6 and an A7; our three drivers connect (production 50 ms feedback timeout,
10 ms watchdog); teledex-sim is killed (SIGKILL); each driver's fault detection time minus the kill time.
    .venv/bin/python benchmarks/can_latency.py [--frames 5000] [--rate_hz 1000] [--pulls 5]
"""

import argparse
import json
import logging
import os
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from importlib.metadata import version
from pathlib import Path

import can
import numpy as np

from teledex_lerobot.clock import now_ns
from teledex_lerobot.devices.registry import build_part_device
from teledex_lerobot.devices.simulated import SimDynamicsConfig
from teledex_lerobot.presets import PartSpec
from teledex_lerobot.rig import RigPart

sys.path.insert(0, str(Path(__file__).parent.parent / "tests"))  # the tests' device harness
from device_harness import (  # noqa: E402
    TeledexSimProcess,
    bus_config,
    rearm_until_healthy,
    unique_channel,
    wait_for_fault,
)

SESSION_LOAD = """
import sys, time, warnings
warnings.simplefilter("ignore")
from linkerbot.hand.o6 import O6
from piper_sdk import C_PiperInterface_V2
piper = C_PiperInterface_V2("arm", judge_flag=False, can_auto_init=False)
piper.CreateCanBus("arm", bustype="teledex", judge_flag=False)
piper.ConnectPort()
hand = O6("right", "hand", interface_type="teledex")
while piper.GetArmJointMsgs().time_stamp == 0 or hand.angle.get_snapshot() is None:
    time.sleep(0.01)
print("loading", flush=True)
sys.stdin.read()  # until the benchmark closes our stdin
"""

RECEIVER = """
import json, sys, can
from teledex_lerobot.clock import now_ns
bus = can.Bus(interface="teledex", channel=sys.argv[1])
print("ready", flush=True)
latencies = []
while len(latencies) < int(sys.argv[2]) and (message := bus.recv(timeout=5.0)) is not None:
    latencies.append(now_ns() - int.from_bytes(message.data, "little"))
bus.shutdown()
print(json.dumps(latencies), flush=True)
"""


def _send_frames(bus: can.BusABC, frames: int, rate_hz: float) -> None:
    period_ns = int(1e9 / rate_hz)
    next_ns = now_ns()
    for _ in range(frames):
        time.sleep(max(0.0, (next_ns - now_ns()) * 1e-9))  # no busy wait: the virtual receiver shares our GIL
        bus.send(can.Message(arbitration_id=0x100, data=now_ns().to_bytes(8, "little"), is_extended_id=False))
        next_ns += period_ns


def virtual_latencies(frames: int, rate_hz: float) -> np.ndarray:
    channel = unique_channel("latency")
    sender, receiver = can.Bus(interface="virtual", channel=channel), can.Bus(interface="virtual", channel=channel)
    latencies = []

    def receive():
        while len(latencies) < frames and (message := receiver.recv(timeout=5.0)) is not None:
            latencies.append(now_ns() - int.from_bytes(message.data, "little"))
    thread = threading.Thread(target=receive)
    thread.start()
    _send_frames(sender, frames, rate_hz)
    thread.join()
    sender.shutdown()
    receiver.shutdown()
    return np.asarray(latencies) / 1e6


def teledex_latencies(frames: int, rate_hz: float) -> np.ndarray:
    """Through the broker of the teledex-sim running now (with channel "bench"), to a receiver process."""
    receiver = subprocess.Popen([sys.executable, "-c", RECEIVER, "bench", str(frames)], stdout=subprocess.PIPE,
                                text=True)
    assert receiver.stdout.readline().strip() == "ready"
    sender = can.Bus(interface="teledex", channel="bench")
    _send_frames(sender, frames, rate_hz)
    sender.shutdown()
    latencies = json.loads(receiver.stdout.readline())
    receiver.wait(timeout=10)
    return np.asarray(latencies) / 1e6


def _session_load() -> subprocess.Popen:
    """Another process in which piper_sdk reads the simulated Piper's feedback (3040 frames/s) and linkerbot polls
    the simulated O6, as during a recording."""
    load = subprocess.Popen([sys.executable, "-c", SESSION_LOAD], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)
    assert load.stdout.readline().strip() == "loading"
    return load


def cable_pull_detection_ms(pulls: int) -> dict[str, list[float]]:
    parts = {"piper": RigPart("arm", PartSpec("piper", "right", None, {"joint2": 1.0, "joint3": -1.0})),
             "linkerhand_o6": RigPart("hand", PartSpec("linkerhand_o6", "right")),
             "linker_a7": RigPart("arm", PartSpec("linker_a7", "right"))}
    channels = {"piper": "arm", "linkerhand_o6": "hand", "linker_a7": "a7"}
    detection = {name: [] for name in parts}
    for _ in range(pulls):
        sim = TeledexSimProcess("--device", "piper:right:arm", "--device", "linkerhand_o6:right:hand",
                                "--device", "linker_a7:right:a7")
        devices = {}
        try:
            for name, part in parts.items():
                config = bus_config(arm_channel=channels[name], hand_channel=channels[name], strict=True,
                                    interface="teledex")
                devices[name] = build_part_device("real", part, SimDynamicsConfig(), config)
                devices[name].connect()
            assert all(rearm_until_healthy(d, 5.0) for d in devices.values()), "drivers not healthy before the pull"
            killed_ns = now_ns()
            sim.kill()
            for device in devices.values():
                wait_for_fault(device, lambda fault: fault.detected_ns >= killed_ns, 2.0)
            for name, device in devices.items():
                fault = device.fault()
                detected = fault is not None and fault.detected_ns >= killed_ns
                detection[name].append((fault.detected_ns - killed_ns) / 1e6 if detected else float("nan"))
        finally:
            for device in devices.values():
                device.disconnect()
            sim.stop()
    return detection


def _row(name: str, values_ms, lost: int = 0) -> str:
    data = np.asarray(values_ms, dtype=float)
    finite = data[np.isfinite(data)]
    return (f"{name:<18}{len(finite):>7}{np.median(finite):>9.3f}{np.percentile(finite, 99):>9.3f}"
            f"{finite.max():>9.3f}{lost + np.count_nonzero(~np.isfinite(data)):>7}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=5000)
    parser.add_argument("--rate_hz", type=float, default=1000.0)
    parser.add_argument("--pulls", type=int, default=5)
    args = parser.parse_args()
    warnings.filterwarnings("ignore", message=".*bustype.*")  # piper_sdk's python-can call
    logging.disable(logging.ERROR)  # the drivers log each fault the cable pulls cause
    os.environ.setdefault("TELEDEX_CAN_BROKER", os.path.join(tempfile.mkdtemp(prefix="tdx-bench-"), "can.sock"))

    rows = [("virtual", virtual_latencies(args.frames, args.rate_hz))]
    with TeledexSimProcess("--channel", "bench"):
        rows.append(("teledex idle", teledex_latencies(args.frames, args.rate_hz)))
    with TeledexSimProcess("--channel", "bench", "--device", "piper:right:arm", "--device",
                           "linkerhand_o6:right:hand"):
        load = _session_load()
        try:
            rows.append(("teledex loaded", teledex_latencies(args.frames, args.rate_hz)))
        finally:
            load.stdin.close()
            load.wait(timeout=10)
    print(f"CAN frame latency, send -> received (ms): python-can {version('python-can')}, {args.frames} frames at "
          f"{args.rate_hz:.0f} Hz, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    print(f"{'bus':<18}{'frames':>7}{'p50':>9}{'p99':>9}{'max':>9}{'lost':>7}")
    for name, latencies in rows:
        print(_row(name, latencies, args.frames - len(latencies)))

    detection = cable_pull_detection_ms(args.pulls)
    print(f"\nCable pull (teledex-sim killed) -> driver fault (ms): feedback timeout 50 ms, watchdog 10 ms, "
          f"{args.pulls} pulls")
    print(f"{'driver':<18}{'pulls':>7}{'p50':>9}{'p99':>9}{'max':>9}{'missed':>7}")
    for name, values in detection.items():
        print(_row(name, values))


if __name__ == "__main__":
    main()
