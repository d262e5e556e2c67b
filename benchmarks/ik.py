"""IK solve time and convergence on the arms we ship, warm-started near the answer as in teleoperation.

Run: .venv/bin/python benchmarks/ik.py [--solves 500]
"""

import argparse
import time

import numpy as np

from teledex_lerobot.kinematics import KinematicModel, linker_a7_urdf_path, solve_ik, urdf_path

ARMS = {"piper (tcp)": (urdf_path("piper"), "tcp"), "linker_a7 (wrist)": (linker_a7_urdf_path("right"),
                                                                           "Right_Wrist_Roll_Link")}


def measure(model: KinematicModel, frame: str, start_noise_rad: float, solves: int, rng) -> dict:
    durations, converged = [], 0
    for _ in range(solves):
        q_true = rng.uniform(model.lower, model.upper)
        q_init = model.clip(q_true + rng.normal(0.0, start_noise_rad, q_true.size))
        target = model.frame_pose(q_true, frame)
        start = time.perf_counter()
        result = solve_ik(model, frame, target, q_init)
        durations.append(time.perf_counter() - start)
        converged += result.converged
    ms = np.array(durations) * 1e3
    return {"median": np.median(ms), "p90": np.percentile(ms, 90), "p99": np.percentile(ms, 99),
            "converged": 100 * converged / solves}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--solves", type=int, default=500)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print(f"{'arm':20s} {'start noise':>11s} {'median ms':>10s} {'p90 ms':>8s} {'p99 ms':>8s} {'converged':>10s}")
    for name, (path, frame) in ARMS.items():
        model = KinematicModel.from_urdf(path)
        for noise in (0.02, 0.1, 0.3):
            r = measure(model, frame, noise, args.solves, rng)
            print(f"{name:20s} {noise:>9.2f} rad {r['median']:10.3f} {r['p90']:8.3f} {r['p99']:8.3f} "
                  f"{r['converged']:9.1f}%")


if __name__ == "__main__":
    main()
