"""How soon each real driver latches an error the device itself reports (an error bit, a motor-driver status, an
over-temperature, a motor fault code), against its wire-protocol simulator in this process: the time from the
simulator raising it to the driver's fault (DeviceFault.detected_ns), per driver, repeated, with --load busy
processes beside it. The requirement is 100 ms; the drivers learn these flags from frames that arrive at 20-200 Hz.
The tests (tests/test_real_*.py) check that the right fault is latched with the right message; this measures speed.
    .venv/bin/python benchmarks/fault_flags.py [--repeats 20] [--load 0]
"""

import argparse
import logging
import os
import sys
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
from fault_timeouts import start_load, stop_load  # beside this file
from piper_sdk import C_PiperInterface_V2

from teledex_lerobot.clock import now_ns
from teledex_lerobot.devices import device_fault as df
from teledex_lerobot.devices.agilex.config import PiperConfig
from teledex_lerobot.devices.agilex.simulator import PiperSimConfig, PiperSimulator
from teledex_lerobot.devices.linker_a7.simulator import A7SimConfig, A7Simulator
from teledex_lerobot.devices.linkerhand.config import LinkerHandConfig
from teledex_lerobot.devices.linkerhand.simulator import LinkerHandSimConfig, LinkerHandSimulator
from teledex_lerobot.devices.registry import build_part_device
from teledex_lerobot.devices.simulated import SimDynamicsConfig
from teledex_lerobot.presets import PartSpec
from teledex_lerobot.rig import RigPart

sys.path.insert(0, str(Path(__file__).parent.parent / "tests"))  # the tests' device harness
from device_harness import bus_config, rearm_until_healthy, unique_channel, wait_for_fault  # noqa: E402

REQUIREMENT_MS = 100.0


def piper_rig():
    C_PiperInterface_V2._instances.clear()
    channel = unique_channel("piper")
    sim = PiperSimulator(PiperSimConfig(channel=channel, initial_positions=(0.0, 0.5, -0.5, 0, 0, 0, 0.0))).start()
    config = bus_config(arm_channel=channel, strict=True, agilex=PiperConfig(speed_percent=100))
    return sim, build_part_device("real", RigPart("arm", PartSpec("piper", "right")), SimDynamicsConfig(), config)


def a7_rig():
    channel = unique_channel("a7")
    sim = A7Simulator(A7SimConfig(side="right", channel=channel, initial_positions=(0.4, 0, 0, 1.2, 0, 0, 0))).start()
    config = bus_config(arm_channel=channel, strict=True)
    return sim, build_part_device("real", RigPart("arm", PartSpec("linker_a7", "right")), SimDynamicsConfig(), config)


def hand_rig(model: str):
    def build():
        channel = unique_channel(model)
        sim = LinkerHandSimulator(LinkerHandSimConfig(model=model, side="right", channel=channel)).start()
        config = bus_config(hand_channel=channel, strict=True, linkerhand=LinkerHandConfig(tactile=True))
        return sim, build_part_device("real", RigPart("hand", PartSpec(model, "right")), SimDynamicsConfig(), config)
    return build


# (driver, the flag, the rig, raise it, clear it)
CASES: list[tuple[str, str, Callable, Callable, Callable]] = [
    ("piper", "joint 3 communication error", piper_rig,
     lambda sim: sim.set_joint_error(3, "comm"), lambda sim: sim.clear_joint_errors()),
    ("piper", "joint 4 driver: collision", piper_rig,
     lambda sim: sim.set_motor_status(4, 1 << 4), lambda sim: sim.set_motor_status(4, 0)),
    ("linker_a7", "motor 53 over-temperature", a7_rig,
     lambda sim: sim.set_temperature(2, 82.0), lambda sim: sim.set_temperature(2, 40.0)),
    *[(model, "motor 1 over-current", hand_rig(model),
       lambda sim: sim.set_motor_fault(1, 8), lambda sim: sim.set_motor_fault(1, 0))
      for model in ("linkerhand_o6", "linkerhand_l10", "linkerhand_l20")],
]


def detection_ms(build: Callable, raise_flag: Callable, clear_flag: Callable, repeats: int) -> list[float]:
    """Per repeat: ms from raising the flag to the driver's JOINT_ERROR fault (nan: none within 2 s)."""
    sim, device = build()
    device.connect()
    times = []
    try:
        for _ in range(repeats):
            if not rearm_until_healthy(device, 2.0):
                times.append(float("nan"))
                continue
            raised_at = now_ns()
            raise_flag(sim)
            found = wait_for_fault(device, lambda f: f.kind == df.JOINT_ERROR and f.detected_ns >= raised_at, 2.0)
            times.append((device.fault().detected_ns - raised_at) / 1e6 if found else float("nan"))
            clear_flag(sim)
    finally:
        device.disconnect()
        sim.stop()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--load", type=int, default=0, help="busy processes beside the drivers (0: none)")
    args = parser.parse_args()
    warnings.filterwarnings("ignore", message=".*bustype.*")  # piper_sdk's python-can call
    logging.disable(logging.ERROR)  # the drivers log every fault they latch
    load = start_load(args.load)
    try:
        rows = []
        for driver, flag, build, raise_flag, clear_flag in CASES:
            print(f"{driver}: {flag} x {args.repeats}", flush=True)
            rows.append((driver, flag, np.asarray(detection_ms(build, raise_flag, clear_flag, args.repeats))))
    finally:
        stop_load(load)
    print(f"\nError flags raised by the simulators: time to the driver's fault (ms), {args.repeats} each, {args.load} "
          f"busy processes, {os.cpu_count()} CPUs, load average at the end {os.getloadavg()[0]:.1f}; "
          f"requirement {REQUIREMENT_MS:g} ms")
    print(f"{'driver':<16}{'flag':<30}{'n':>4}{'p50':>8}{'p95':>8}{'max':>8}{'missed':>8}{'over':>6}")
    for driver, flag, data in rows:
        finite = data[np.isfinite(data)]
        p50, p95, worst = np.percentile(finite, [50, 95, 100]) if len(finite) else (np.nan,) * 3  # all missed
        print(f"{driver:<16}{flag:<30}{len(finite):>4}{p50:>8.1f}{p95:>8.1f}{worst:>8.1f}"
              f"{np.count_nonzero(~np.isfinite(data)):>8}{np.count_nonzero(finite > REQUIREMENT_MS):>6}")


if __name__ == "__main__":
    main()
