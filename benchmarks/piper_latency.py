"""Command-to-feedback latency through the Piper simulator and the unmodified piper_sdk, on the virtual bus.

For each trial the driver commands a small joint1 step (through MotionCtrl_2 + JointCtrl, as in recording) and we
time three things on clock.now_ns():
  on_bus       command() -> the simulated arm has decoded the JointCtrl frames (SDK send path + bus)
  first_motion command() -> the first feedback read through the SDK that shows joint1 moving
  settled      command() -> feedback within one device unit (0.001 deg) of the target
and, separately, the age of a measurement when read (now - capture_ns, the frame's receive time). The simulator
publishes feedback at the Piper's 200 Hz, so first_motion includes up to one 5 ms feedback period; the simulated
joints track their setpoint almost at once (1 ms time constant), so settled adds only the firmware's
speed-limited trajectory (3 rad/s at 100 %: 3.3 ms for the 0.01 rad step). Prints a table; run:
    .venv/bin/python benchmarks/piper_latency.py [--trials 200]
"""

import argparse
import sys
import time
from importlib.metadata import version
from pathlib import Path

import numpy as np
from piper_sdk import C_PiperInterface_V2

from teledex_lerobot.clock import now_ns
from teledex_lerobot.devices.agilex import protocol as pp
from teledex_lerobot.devices.agilex.config import PiperConfig
from teledex_lerobot.devices.agilex.simulator import PiperSimConfig, PiperSimulator
from teledex_lerobot.devices.registry import build_part_device
from teledex_lerobot.devices.simulated import SimDynamicsConfig
from teledex_lerobot.presets import PartSpec
from teledex_lerobot.rig import RigPart

sys.path.insert(0, str(Path(__file__).parent.parent / "tests"))  # the tests' device harness
from device_harness import bus_config, unique_channel  # noqa: E402

STEP_RAD = 0.01
TIMEOUT_NS = 1_000_000_000


def _wait_ns(predicate, start_ns: int) -> float:
    while not predicate():
        if now_ns() - start_ns > TIMEOUT_NS:
            return float("nan")
        time.sleep(0.0001)
    return (now_ns() - start_ns) / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=200)
    args = parser.parse_args()

    C_PiperInterface_V2._instances.clear()
    channel = unique_channel("bench")
    part = RigPart("arm", PartSpec("piper", "right", None, {"joint2": 1.0, "joint3": -1.0}))
    # near-instant joint dynamics, so the figures are the SDK, the bus, the 200 Hz feedback and the firmware's
    # speed-limited trajectory (3 rad/s at 100 %: 3.3 ms for the step), not a motor model
    dynamics = SimDynamicsConfig(feedback_hz=1000.0, time_constant_s=0.001, noise_std=0.0, latency_ms=0.0)
    sim = PiperSimulator(PiperSimConfig(channel=channel, initial_positions=tuple(part.home_full),
                                        dynamics=dynamics)).start()
    config = bus_config(arm_channel=channel, agilex=PiperConfig(speed_percent=100))
    device = build_part_device("real", part, SimDynamicsConfig(), config)
    device.connect()
    results: dict[str, list[float]] = {"on_bus": [], "first_motion": [], "settled": [], "measurement_age": []}
    try:
        target = device.read().positions.copy()
        for trial in range(args.trials):
            start_q = device.read().positions[0]
            target[0] = start_q + (STEP_RAD if trial % 2 == 0 else -STEP_RAD)
            start = now_ns()
            device.command(target)
            results["on_bus"].append(_wait_ns(lambda: abs(sim.target()[0] - target[0]) < 1e-5, start))
            results["first_motion"].append(_wait_ns(lambda: abs(device.read().positions[0] - start_q) > 1e-5, start))
            results["settled"].append(_wait_ns(
                lambda: abs(device.read().positions[0] - target[0]) <= 1 / pp.MILLIDEG_PER_RAD, start))
            time.sleep(np.random.default_rng(trial).uniform(0, 0.005))
            results["measurement_age"].append((now_ns() - device.read().capture_ns) / 1e6)
    finally:
        device.disconnect()
        sim.stop()
        C_PiperInterface_V2._instances.clear()

    print(f"Piper command-to-feedback latency: piper_sdk {version('piper_sdk')}, python-can {version('python-can')} "
          f"virtual bus, {args.trials} trials of {STEP_RAD} rad steps; milliseconds")
    print(f"{'quantity':<16}{'median':>9}{'p90':>9}{'p99':>9}{'max':>9}{'timeouts':>10}")
    for name, values in results.items():
        data = np.asarray(values)
        finite = data[np.isfinite(data)]
        print(f"{name:<16}{np.median(finite):9.2f}{np.percentile(finite, 90):9.2f}{np.percentile(finite, 99):9.2f}"
              f"{finite.max():9.2f}{np.count_nonzero(~np.isfinite(data)):10d}")
    print(f"simulator sent {sim.frames_sent} frames")


if __name__ == "__main__":
    main()
