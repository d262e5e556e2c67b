"""Run the timing-sensitive tests again and again while busy processes keep every core loaded, and print a table.

A test that judges what the code controls (an injected clock, recorded timestamps) passes on a loaded machine; one that
judges the scheduler fails here by chance.

Run: .venv/bin/python benchmarks/tests_under_load.py [--runs 20 --load 2] [test files...]
"""

import argparse
import multiprocessing
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "tests"))
from load import busy_cores  # noqa: E402 (test-only helper: the load generator)

TIMING_SENSITIVE = ["tests/devices/test_fault_injection.py", "tests/inputs/test_teleop_inputs.py",
                    "tests/inputs/test_replay_teleop.py", "tests/recording/test_frame_pacing.py",
                    "tests/control/test_control_property.py"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tests", nargs="*", default=TIMING_SENSITIVE)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--load", type=int, default=multiprocessing.cpu_count(), help="busy processes (default: one "
                        "per core)")
    args = parser.parse_args()
    print(f"{len(args.tests)} test files, {args.runs} runs, {args.load} busy processes")
    print(f"{'run':>4} {'result':>8} {'wall s':>7}  summary")
    failed_runs = 0
    with busy_cores(args.load):
        for run in range(1, args.runs + 1):
            start = time.monotonic()
            result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args.tests],
                                    capture_output=True, text=True)
            summary = (result.stdout.strip().splitlines() or ["(no output)"])[-1]
            failed_runs += result.returncode != 0
            print(f"{run:>4} {'pass' if result.returncode == 0 else 'FAIL':>8} {time.monotonic() - start:>7.1f}  "
                  f"{summary}", flush=True)
            if result.returncode != 0:
                print("\n".join(line for line in result.stdout.splitlines() if line.startswith("FAILED")))
    print(f"{args.runs - failed_runs}/{args.runs} runs passed")
    return 1 if failed_runs else 0


if __name__ == "__main__":
    sys.exit(main())
