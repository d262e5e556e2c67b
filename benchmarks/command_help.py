"""Wall time of `--help` for every teledex-* command (the best of --repeat runs: the least the machine's load added).

Run: .venv/bin/python benchmarks/command_help.py [--repeat 3]
"""

import argparse
import subprocess
import sys
import time
import tomllib
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    scripts = sorted(tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())["project"]["scripts"])
    print(f"{'command':<28} {'best s':>7} {'median s':>9}  exit")
    slow = 0
    for script in scripts:
        times, code = [], 0
        for _ in range(args.repeat):
            start = time.perf_counter()
            code = subprocess.run([Path(sys.executable).with_name(script), "--help"], capture_output=True).returncode
            times.append(time.perf_counter() - start)
        times.sort()
        slow += times[0] >= 1.0
        print(f"{script:<28} {times[0]:>7.2f} {times[len(times) // 2]:>9.2f}  {code}")
    print(f"{len(scripts) - slow}/{len(scripts)} commands print their help in under a second")
    return 0


if __name__ == "__main__":
    sys.exit(main())
