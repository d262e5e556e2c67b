"""IK as the teleoperation control chain uses it (the arm's mount frame, with the control config's IK settings).

1. Reachable targets: random poses of the mount frame (FK of random in-limit configurations), solved warm-started
   from a configuration `--start-noise` rad away, as in a teleoperation loop: accuracy and solve time.
2. Unreachable targets: a target far out of reach, re-solved every tick from the previous solution (what the
   controller does while the operator holds it there): the error settles, and the joints stop moving without
   oscillating (no sign changes of the per-tick joint motion once settled).

Run: .venv/bin/python benchmarks/ik_control.py [--solves 500] [--start-noise 0.1]
"""

import argparse
import time

import numpy as np

from teledex_lerobot.control.config import RelativeArmConfig
from teledex_lerobot.kinematics import solve_ik
from teledex_lerobot.presets import load_preset
from teledex_lerobot.rig import Rig

PRESETS = ("piper_linkerhand_o6_single", "linker_a7_linkerhand_l10_single")


def reachable(part, solves: int, start_noise_rad: float, rng) -> dict:
    model, frame, config = part.model, part.mount_frame, RelativeArmConfig()
    durations, position_errors, orientation_errors, within = [], [], [], 0
    margin = 0.05 * (model.upper - model.lower)
    for _ in range(solves):
        q_true = rng.uniform(model.lower + margin, model.upper - margin)
        q_init = model.clip(q_true + rng.normal(0.0, start_noise_rad, q_true.size))
        target = model.frame_pose(q_true, frame)
        started = time.perf_counter()
        result = solve_ik(model, frame, target, q_init, max_iters=config.ik_max_iterations,
                          orientation_weight=config.ik_orientation_weight_m_per_rad)
        durations.append(time.perf_counter() - started)
        position_errors.append(result.position_error_m)
        orientation_errors.append(result.orientation_error_rad)
        within += result.position_error_m <= 1e-3 and result.orientation_error_rad <= 1e-2
    ms = np.array(durations) * 1e3
    return {"within": 100 * within / solves, "p99_pos_mm": 1e3 * np.percentile(position_errors, 99),
            "p99_rot_mrad": 1e3 * np.percentile(orientation_errors, 99), "median_ms": np.median(ms),
            "p99_ms": np.percentile(ms, 99)}


def unreachable(part, ticks: int, rng) -> dict:
    model, frame, config = part.model, part.mount_frame, RelativeArmConfig()
    q = part.home_full.copy()
    home_pose = model.frame_pose(q, frame)
    target = home_pose.copy()
    direction = rng.normal(size=3)
    target[:3, 3] += 1.5 * direction / np.linalg.norm(direction)  # 1.5 m away: out of reach
    history, errors, durations = [q], [], []
    for _ in range(ticks):
        started = time.perf_counter()
        result = solve_ik(model, frame, target, q, max_iters=config.ik_max_iterations,
                          orientation_weight=config.ik_orientation_weight_m_per_rad)
        durations.append(time.perf_counter() - started)
        q = result.q
        history.append(q)
        errors.append(result.position_error_m)
    steps = np.diff(np.array(history), axis=0)
    settled = steps[5:]
    moving, signs = np.abs(settled) > 1e-6, np.sign(settled)
    sign_changes = int(np.sum((signs[1:] != signs[:-1]) & moving[1:] & moving[:-1]))
    return {"first_err_m": errors[0], "final_err_m": errors[-1], "err_change_last_m": abs(errors[-1] - errors[-2]),
            "max_step_after_5_rad": float(np.abs(settled).max(initial=0.0)), "sign_changes": sign_changes,
            "median_ms": 1e3 * np.median(durations)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--solves", type=int, default=500)
    parser.add_argument("--start-noise", type=float, default=0.1, help="rad, warm-start distance from the answer")
    parser.add_argument("--ticks", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    print(f"Reachable targets ({args.solves} per arm, warm start {args.start_noise} rad away; "
          "success = within 1 mm and 0.01 rad)")
    print(f"{'arm (mount frame)':34} {'success %':>9} {'p99 pos mm':>10} {'p99 rot mrad':>12} {'median ms':>9} "
          f"{'p99 ms':>7}")
    arms = [Rig.from_preset(load_preset(name)).parts["arm"] for name in PRESETS]
    for part in arms:
        r = reachable(part, args.solves, args.start_noise, rng)
        print(f"{part.spec.model + ' (' + part.mount_frame + ')':34} {r['within']:9.1f} {r['p99_pos_mm']:10.3f} "
              f"{r['p99_rot_mrad']:12.2f} {r['median_ms']:9.2f} {r['p99_ms']:7.2f}")
    print(f"\nUnreachable target 1.5 m away, re-solved from the previous solution for {args.ticks} ticks")
    print(f"{'arm':34} {'err 1st m':>9} {'err last m':>10} {'Δerr last m':>11} {'max |Δq| after 5 ticks':>22} "
          f"{'sign changes':>12}")
    for part in arms:
        u = unreachable(part, args.ticks, rng)
        print(f"{part.spec.model:34} {u['first_err_m']:9.4f} {u['final_err_m']:10.4f} {u['err_change_last_m']:11.2e} "
              f"{u['max_step_after_5_rad']:22.2e} {u['sign_changes']:12d}")


if __name__ == "__main__":
    main()
