"""Hand retargeting on real human motion and vendor hand files: ours against dex-retargeting 0.5.0, per hand.

    bash benchmarks/setup_dex_retargeting.sh            # once: dex-retargeting's own venv (.venv-dexretarget)
    .venv/bin/python benchmarks/retargeting.py [--hands allegro,leap] [--repeats 3] [--json out.json]

Data: dex-retargeting's example MediaPipe recording of a real right hand (621 frames, 30 Hz) and the dex-urdf hand
URDFs, read from a local checkout (tests/reference_assets.py says where; nothing fetched is committed). Without
them the benchmark says so and exits 0; without the dex-retargeting venv it runs our side only.

Hands: every right hand for which dex-retargeting ships an official teleop vector config. dex-retargeting runs that
config unchanged (its URDF, links, scale, filter, its own frame convention: the URDFs are rooted in its operator
frame and the recording is in it); its DexPilot config is run too, as published. Our side gets the same URDF and
the recording turned into our operator frame (one fixed rotation for every hand, `DEX_TO_OURS`), and no per-hand
settings except the config's scale (`hand_scale`), so that both aim at the same reference.

One evaluator scores every system: for each frame and each fingertip vector of the config (origin link -> tip link
of a human fingertip, 4/8/12/16/20), the distance between the robot vector, in the URDF root frame, and the human
vector times the config's `scaling_factor`; "tip mm" is the mean over vectors and frames.
- floor: the least mean tip error any retargeter can reach at that scale: per frame, bounded least squares on the
  tip vectors alone (scipy `least_squares`, trust-region reflective), started from the previous frame's floor
  solution, from dex-retargeting's and from our solution; the best of the three (so it is below both by
  construction). Per finger the least-squares and least-distance minimisers coincide; only hands whose fingers share
  joints (Shadow's wrist) can differ slightly.
- pinch: frames where the human thumb tip is within 10 mm of a fingertip; success = the robot's pair within 15 mm.
  Only pairs the hand can physically close are counted: a pair is reachable when bounded least squares on the
  pair's distance, from 5 starts across the joint range, brings it within 15 mm. The real recording pinches only
  the thumb and little finger, so pinches are also scored on our synthetic pinch stream (configs/streams/
  pinches.npz, every finger in turn: generated, not recorded; "synth pinch"), retargeted by every system alike.
- jerk: RMS of the third difference of the joint angles (rad/frame³) at equal filtering: our row with the config's
  low-pass filter against dex-retargeting's (which always runs with it).
- time: per-frame wall time of the retarget call, median and p99 over the repeat with the lowest median.
Rows: "ours" (no output filter: our default), "ours, filtered" (the config's low-pass alpha, as dex-retargeting),
"dex vector", "dex DexPilot", "floor". JSON to --json. Not part of CI: timings depend on the machine and its load.
"""

import argparse
import json
import logging
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
DEX_PYTHON = REPO / ".venv-dexretarget" / "bin" / "python"
HANDS = ("allegro", "leap", "inspire", "ability", "schunk_svh", "shadow")
FINGERTIPS = (4, 8, 12, 16, 20)
PINCH_HUMAN_M, PINCH_ROBOT_M = 0.010, 0.015


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hands", default=",".join(HANDS))
    parser.add_argument("--repeats", type=int, default=3, help="passes over the recording (timing samples)")
    parser.add_argument("--dex-python", default=str(DEX_PYTHON), help="'' = our side only")
    parser.add_argument("--json", default=str(REPO / "outputs/benchmarks/retargeting.json"))
    parser.add_argument("--dex-runner", default="", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


# ---- dex-retargeting side (runs in .venv-dexretarget; imports only numpy, yaml and dex_retargeting) ----------

def run_dex_retargeting(job_path: str) -> None:
    from dex_retargeting.retargeting_config import RetargetingConfig

    job = json.loads(Path(job_path).read_text())
    RetargetingConfig.set_default_urdf_dir(job["urdf_dir"])
    keypoints = np.load(job["keypoints"])
    results = {}
    for kind, config_path in job["configs"].items():
        retargeting = RetargetingConfig.load_from_file(config_path).build()
        indices = retargeting.optimizer.target_link_human_indices
        seconds, solutions = [], []
        for _ in range(job["repeats"]):
            retargeting = RetargetingConfig.load_from_file(config_path).build()  # fresh filter and warm start
            solutions = []
            for frame in keypoints:
                if retargeting.optimizer.retargeting_type == "POSITION":
                    reference = frame[indices]
                else:
                    reference = frame[indices[1]] - frame[indices[0]]
                start = time.perf_counter()
                qpos = retargeting.retarget(reference)
                seconds.append(time.perf_counter() - start)
                solutions.append(qpos)
        results[f"{kind}_seconds"] = np.array(seconds)
        results[f"{kind}_joints"] = np.array(solutions)
        results[f"{kind}_names"] = np.array(retargeting.joint_names)
    np.savez(job["output"], **results)


def dex_retargeting(python: str, assets, configs: dict, keypoints_dex: np.ndarray, repeats: int) -> dict:
    """{kind: (seconds, joints (N, m), joint names)} from dex-retargeting's own runs of `configs`."""
    with tempfile.TemporaryDirectory() as folder:
        keypoints_path, output = Path(folder) / "keypoints.npy", Path(folder) / "out.npz"
        np.save(keypoints_path, keypoints_dex)
        job = Path(folder) / "job.json"
        job.write_text(json.dumps({"urdf_dir": str(assets.DEX_URDF_HANDS), "keypoints": str(keypoints_path),
                                   "configs": {k: str(v) for k, v in configs.items()}, "repeats": repeats,
                                   "output": str(output)}))
        # (its vendored URDF loader prints a line per absent mesh: kept out of the table, shown on failure)
        run = subprocess.run([python, __file__, "--dex-runner", str(job)], capture_output=True, text=True)
        if run.returncode != 0:
            raise RuntimeError(f"dex-retargeting runner failed:\n{run.stdout[-3000:]}{run.stderr[-3000:]}")
        data = np.load(output)
        return {kind: (data[f"{kind}_seconds"], data[f"{kind}_joints"], [str(n) for n in data[f"{kind}_names"]])
                for kind in configs}


# ---- the one evaluator -------------------------------------------------------------------------------------

class Evaluator:
    """A config's fingertip vectors on our kinematic model of its URDF (root frame), against the scaled human."""

    def __init__(self, model, config: dict, keypoints_dex: np.ndarray):
        self.model = model
        self.scale = float(config.get("scaling_factor", 1.0))
        origins, tasks = config["target_origin_link_names"], config["target_task_link_names"]
        human_origin, human_task = config["target_link_human_indices"]
        rows = [i for i, h in enumerate(human_task) if h in FINGERTIPS]
        self.origins = [origins[i] for i in rows]
        self.tasks = [tasks[i] for i in rows]
        self.human_tasks = [human_task[i] for i in rows]
        self.targets = self.scale * (keypoints_dex[:, self.human_tasks] - keypoints_dex[:, [human_origin[i]
                                                                                              for i in rows]])
        self.frames = list(dict.fromkeys(self.origins + self.tasks))
        self._origin_rows = [self.frames.index(f) for f in self.origins]
        self._task_rows = [self.frames.index(f) for f in self.tasks]

    def vectors(self, q: np.ndarray) -> np.ndarray:
        positions = self.model.frame_positions(q, self.frames)
        return positions[self._task_rows] - positions[self._origin_rows]

    def tip_errors(self, joints: np.ndarray) -> np.ndarray:
        """(N, F) distances, metres."""
        return np.array([np.linalg.norm(self.vectors(q) - target, axis=1)
                         for q, target in zip(joints, self.targets)])

    def tip_positions(self, q: np.ndarray) -> dict[int, np.ndarray]:
        """Robot tip positions (root frame) by human fingertip index."""
        positions = self.model.frame_positions(q, self.tasks)
        return dict(zip(self.human_tasks, positions))


def actuated(model, names: list[str], joints: np.ndarray) -> np.ndarray:
    """dex-retargeting's full joint vectors (its order) -> our actuated joint vectors."""
    columns = [names.index(name) for name in model.joint_names]
    return joints[:, columns]


def floor(evaluator: Evaluator, starts: list[np.ndarray]) -> np.ndarray:
    """Per-frame least tip error (see the module docstring); returns the floor joint vectors (N, n)."""
    from scipy.optimize import least_squares

    model = evaluator.model
    lower, upper = model.lower, model.upper
    inside = lambda q: np.clip(q, lower + 1e-9, upper - 1e-9)  # noqa: E731
    solutions, previous = [], inside(np.zeros(len(lower)))
    for frame, target in enumerate(evaluator.targets):
        best, best_cost = None, np.inf
        for start in [previous] + [s[frame] for s in starts]:
            result = least_squares(lambda q: (evaluator.vectors(q) - target).ravel(), inside(start),
                                   bounds=(lower, upper), xtol=1e-10, ftol=1e-10, max_nfev=200)
            cost = np.linalg.norm(evaluator.vectors(result.x) - target, axis=1).mean()
            if cost < best_cost:
                best, best_cost = result.x, cost
        solutions.append(best)
        previous = best
    return np.array(solutions)


def reachable_pairs(evaluator: Evaluator) -> dict[int, bool]:
    """Human fingertip index -> whether the robot can bring that finger's tip within 15 mm of the thumb tip."""
    from scipy.optimize import least_squares

    model = evaluator.model
    if 4 not in evaluator.human_tasks:
        return {}
    thumb = evaluator.tasks[evaluator.human_tasks.index(4)]
    reachable = {}
    for human, tip in zip(evaluator.human_tasks, evaluator.tasks):
        if human == 4:
            continue
        best = np.inf
        for fraction in (0.0, 0.25, 0.5, 0.75, 1.0):
            start = np.clip(model.lower + fraction * (model.upper - model.lower), model.lower + 1e-9,
                            model.upper - 1e-9)
            result = least_squares(lambda q: np.subtract(*model.frame_positions(q, [tip, thumb])), start,
                                   bounds=(model.lower, model.upper), max_nfev=300)
            best = min(best, float(np.linalg.norm(np.subtract(*model.frame_positions(result.x, [tip, thumb])))))
        reachable[human] = best < PINCH_ROBOT_M
    return reachable


def score(evaluator: Evaluator, keypoints_dex, joints, seconds, reachable) -> dict:
    errors = evaluator.tip_errors(joints)
    result = {"tip_error_mm": float(1e3 * errors.mean()),
              "jerk_rad": float(np.sqrt(np.mean(np.diff(joints, 3, axis=0) ** 2)))}
    successes = attempts = 0
    for frame, q in enumerate(joints):
        tips = None
        for human, ok in reachable.items():
            if ok and np.linalg.norm(keypoints_dex[frame, human] - keypoints_dex[frame, 4]) < PINCH_HUMAN_M:
                tips = evaluator.tip_positions(q) if tips is None else tips
                attempts += 1
                successes += np.linalg.norm(tips[human] - tips[4]) < PINCH_ROBOT_M
    result["pinch_attempts"] = attempts
    result["pinch_success"] = float(successes / attempts) if attempts else float("nan")
    if seconds is not None and seconds.size:
        milliseconds = 1e3 * seconds.reshape(-1, len(joints))
        best = milliseconds[np.argmin(np.median(milliseconds, axis=1))]
        result |= {"median_ms": float(np.median(best)), "p99_ms": float(np.percentile(best, 99))}
    return result


# ---- our side -----------------------------------------------------------------------------------------------

def run_ours(urdf: Path, keypoints: np.ndarray, scale: float, alpha: float, repeats: int):
    from teledex_lerobot.retargeting import build_retargeter

    retargeter = build_retargeter(str(urdf), "teledex", "right", {"hand_scale": scale, "low_pass_alpha": alpha})
    seconds = []
    for _ in range(repeats):
        retargeter.reset()
        joints = []
        for frame in keypoints:
            start = time.perf_counter()
            joints.append(retargeter.retarget(frame))
            seconds.append(time.perf_counter() - start)
    return np.array(seconds), np.array(joints), retargeter


def main(argv=None) -> None:
    args = parse_args(argv)
    if args.dex_runner:
        run_dex_retargeting(args.dex_runner)
        return
    sys.path.insert(0, str(REPO / "tests"))
    import reference_assets as assets
    import yaml

    from teledex_lerobot.kinematics import KinematicModel

    logging.basicConfig(level=logging.ERROR)
    if not assets.available():
        print(f"skipped: {assets.MISSING}")
        return
    dex_python = args.dex_python if args.dex_python and Path(args.dex_python).is_file() else ""
    if not dex_python:
        print(f"dex-retargeting skipped: no interpreter at {args.dex_python or '(none given)'}; create it with "
              "`bash benchmarks/setup_dex_retargeting.sh`")
    keypoints_dex = assets.human_recording()
    keypoints = keypoints_dex @ assets.DEX_TO_OURS.T
    from teledex_lerobot.operator.stream import OperatorStream
    from teledex_lerobot.paths import STREAMS_DIR

    pinch_keypoints = OperatorStream.load(STREAMS_DIR / "pinches.npz").hand_keypoints_m[::2].astype(float)
    pinch_keypoints_dex = pinch_keypoints @ assets.DEX_TO_OURS
    print(f"{len(keypoints)} frames of real MediaPipe motion (dex-retargeting example/profiling), "
          f"{args.repeats} repeats; tip errors against the human tips x the config's scaling_factor")
    results = {}
    for hand in args.hands.split(","):
        configs = {"vector": assets.DEX_TELEOP_CONFIGS / f"{hand}_hand_right.yml",
                   "dexpilot": assets.DEX_TELEOP_CONFIGS / f"{hand}_hand_right_dexpilot.yml"}
        config = yaml.safe_load(configs["vector"].read_text())["retargeting"]
        urdf = assets.DEX_URDF_HANDS / config["urdf_path"]
        model = KinematicModel.from_urdf(urdf)
        evaluator = Evaluator(model, config, keypoints_dex)
        alpha = float(config.get("low_pass_alpha", 1.0))
        runs = {"ours": run_ours(urdf, keypoints, evaluator.scale, 1.0, args.repeats)[:2],
                f"ours, filtered (alpha {alpha:g})": run_ours(urdf, keypoints, evaluator.scale, alpha, 1)[:2]}
        if dex_python:
            for kind, (seconds, joints, names) in dex_retargeting(dex_python, assets, configs, keypoints_dex,
                                                                  args.repeats).items():
                runs[f"dex {kind}"] = (seconds, actuated(model, names, joints))
        starts = [runs["ours"][1]] + ([runs["dex vector"][1]] if "dex vector" in runs else [])
        runs["floor"] = (None, floor(evaluator, starts))
        reachable = reachable_pairs(evaluator)
        rows = {name: score(evaluator, keypoints_dex, joints, seconds, reachable)
                for name, (seconds, joints) in runs.items()}
        # Pinches: the real recording has thumb-little finger pinches only; the synthetic pinch stream has all four.
        pinch_evaluator = Evaluator(model, config, pinch_keypoints_dex)
        pinch_runs = {"ours": run_ours(urdf, pinch_keypoints, evaluator.scale, 1.0, 1)[1],
                      f"ours, filtered (alpha {alpha:g})": run_ours(urdf, pinch_keypoints, evaluator.scale, alpha,
                                                                    1)[1]}
        if dex_python:
            for kind, (_, joints, names) in dex_retargeting(dex_python, assets, configs, pinch_keypoints_dex,
                                                            1).items():
                pinch_runs[f"dex {kind}"] = actuated(model, names, joints)
        for name, joints in pinch_runs.items():
            synthetic = score(pinch_evaluator, pinch_keypoints_dex, joints, None, reachable)
            rows[name] |= {"synthetic_pinch_success": synthetic["pinch_success"],
                           "synthetic_pinch_attempts": synthetic["pinch_attempts"]}
        results[hand] = {"urdf": config["urdf_path"], "dof": len(model.joint_names), "scale": evaluator.scale,
                         "low_pass_alpha": alpha, "reachable_pinches": {str(k): v for k, v in reachable.items()},
                         "rows": rows}
        print_hand(hand, results[hand])
    print_summary(results)
    output = Path(args.json)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(results, indent=2))
    print(f"written {output}")


def print_hand(hand: str, result: dict) -> None:
    reachable = [k for k, v in result["reachable_pinches"].items() if v]
    print(f"\n{hand}: {result['urdf']}, {result['dof']} DoF, scale {result['scale']:g}, "
          f"reachable thumb pinches with {reachable or 'none'}")
    print(f"  {'system':28s}{'tip mm':>9s}{'pinch ok':>10s}{'(frames)':>9s}{'synth pinch':>12s}{'(frames)':>9s}"
          f"{'jerk rad':>10s}{'median ms':>11s}{'p99 ms':>9s}")
    for name, row in result["rows"].items():
        print(f"  {name:28s}{row['tip_error_mm']:9.2f}{row['pinch_success']:10.2f}{row['pinch_attempts']:9d}"
              f"{row.get('synthetic_pinch_success', float('nan')):12.2f}{row.get('synthetic_pinch_attempts', 0):9d}"
              f"{row['jerk_rad']:10.4f}{row.get('median_ms', float('nan')):11.3f}{row.get('p99_ms', float('nan')):9.3f}")


def print_summary(results: dict) -> None:
    hands = [h for h, r in results.items() if "dex vector" in r["rows"]]
    if not hands:
        return
    print(f"\n{'hand':12s}{'ours mm':>9s}{'dex mm':>9s}{'floor mm':>10s}{'ours/dex':>10s}{'excess ratio':>14s}"
          f"{'speed-up':>10s}")
    for hand in hands:
        rows = results[hand]["rows"]
        ours, dex, low = (rows[k]["tip_error_mm"] for k in ("ours", "dex vector", "floor"))
        speedup = rows["dex vector"]["median_ms"] / rows["ours"]["median_ms"]
        print(f"{hand:12s}{ours:9.2f}{dex:9.2f}{low:10.2f}{ours / dex:10.3f}{(ours - low) / (dex - low):14.3f}"
              f"{speedup:10.1f}")
    ratios = [results[h]["rows"]["ours"]["tip_error_mm"] / results[h]["rows"]["dex vector"]["tip_error_mm"]
              for h in hands]
    print(f"mean ours/dex tip error: {np.mean(ratios):.3f} (excess ratio = (ours - floor) / (dex - floor))")


if __name__ == "__main__":
    main()
