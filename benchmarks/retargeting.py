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
  tip vectors alone (scipy `least_squares`, trust-region reflective, analytic Jacobian), started from the previous
  frame's floor solution, from dex-retargeting's and from our solution; the best of the three. Per finger the
  least-squares and least-distance minimisers coincide. It is computed over the finger joints (below the palm
  link); where the URDF also has wrist joints above the palm (Shadow: WRJ1, WRJ2, which dex-retargeting moves to
  turn the palm and we hold, the arm's job), "floor incl. wrist" is the floor with them free too.
- excess ratio: (ours - floor) / (dex vector - floor); below 0.5 = less than half dex-retargeting's excess.
- jerk: RMS of the third difference of the joint angles (rad/frame^3), every joint of the model.
- frontier: error against jerk as each system's smoothing varies, dex-retargeting's other settings unchanged:
  dex-retargeting's low_pass_alpha from 0.1 to 1 (its filter acts on its output only, so its whole sweep is its
  unfiltered run through its one-stage filter; checked against its own run at its config's alpha), and ours: the
  output filter's alpha at our default order, for our default smoothness_weight and a third and three times it, and
  a one-stage filter like dex-retargeting's. "ours at their jerk": our error at dex-retargeting's default jerk, on
  our default-smoothness frontier (interpolated in log jerk). One PNG per hand (--plots).
- pinch: frames where the human thumb tip is within 10 mm of a fingertip; success = the robot's pair within 15 mm.
  Only pairs the hand can physically close are counted: a pair is reachable when bounded least squares on the
  pair's distance, from 5 starts across the joint range, brings it within 15 mm. The real recording pinches only
  the thumb and little finger, so pinches are also scored on our synthetic pinch stream (configs/streams/
  pinches.npz, every finger in turn: generated, not recorded), retargeted by every system alike; "pooled" counts
  both.
- time: per-frame wall time (perf_counter) and CPU time of the calling thread (thread_time) of the retarget call,
  median and p99 over the repeat with the lowest median. On a machine shared with other work the CPU time is the
  steadier figure; neither is free of the other work (caches, a shared core).
Rows: "ours" (our defaults), "ours, dex's filter" (our defaults with dex-retargeting's one-stage output filter
at its config's low_pass_alpha: equal filtering), "dex vector", "dex DexPilot", "floor". JSON to --json. Not part of
CI: timings depend on the machine and its load.
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
DEX_ALPHAS = (0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.7, 1.0)
OUR_ALPHAS = (0.1, 0.15, 0.2, 0.3, 0.4, 0.45, 0.5, 0.55, 0.6, 0.7, 0.8, 1.0)
SMOOTHNESS_FACTORS = (1 / 3, 1.0, 3.0)
EQUAL_FILTER = "ours, dex's filter"  # our defaults with dex-retargeting's output filter (its config's alpha)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hands", default=",".join(HANDS))
    parser.add_argument("--repeats", type=int, default=3, help="passes over the recording (timing samples)")
    parser.add_argument("--dex-python", default=str(DEX_PYTHON), help="'' = our side only")
    parser.add_argument("--json", default=str(REPO / "outputs/benchmarks/retargeting.json"))
    parser.add_argument("--plots", default=str(REPO / "outputs/benchmarks"), help="folder of the frontier PNGs")
    parser.add_argument("--dex-runner", default="", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


# ---- dex-retargeting side (runs in .venv-dexretarget; imports only numpy, yaml and dex_retargeting) ----------

def run_dex_retargeting(job_path: str) -> None:
    from dex_retargeting.retargeting_config import RetargetingConfig

    job = json.loads(Path(job_path).read_text())
    RetargetingConfig.set_default_urdf_dir(job["urdf_dir"])
    keypoints = np.load(job["keypoints"])
    results = {}
    for name, run in job["runs"].items():
        override = {"low_pass_alpha": run["alpha"]} if run["alpha"] is not None else None
        wall, cpu, solutions = [], [], []
        for _ in range(run["repeats"]):
            retargeting = RetargetingConfig.load_from_file(run["config"], override).build()  # fresh filter, start
            indices = retargeting.optimizer.target_link_human_indices
            solutions = []
            for frame in keypoints:
                if retargeting.optimizer.retargeting_type == "POSITION":
                    reference = frame[indices]
                else:
                    reference = frame[indices[1]] - frame[indices[0]]
                start, start_cpu = time.perf_counter(), time.thread_time()
                qpos = retargeting.retarget(reference)
                cpu.append(time.thread_time() - start_cpu)
                wall.append(time.perf_counter() - start)
                solutions.append(qpos)
        results |= {f"{name}_wall": np.array(wall), f"{name}_cpu": np.array(cpu),
                    f"{name}_joints": np.array(solutions), f"{name}_names": np.array(retargeting.joint_names)}
    np.savez(job["output"], **results)


def dex_retargeting(python: str, assets, runs: dict, keypoints_dex: np.ndarray) -> dict:
    """{name: Run} from dex-retargeting's own runs; `runs` = {name: (config path, alpha or None, repeats)}."""
    with tempfile.TemporaryDirectory() as folder:
        keypoints_path, output = Path(folder) / "keypoints.npy", Path(folder) / "out.npz"
        np.save(keypoints_path, keypoints_dex)
        job = Path(folder) / "job.json"
        job.write_text(json.dumps({
            "urdf_dir": str(assets.DEX_URDF_HANDS), "keypoints": str(keypoints_path), "output": str(output),
            "runs": {name: {"config": str(config), "alpha": alpha, "repeats": repeats}
                     for name, (config, alpha, repeats) in runs.items()}}))
        # (its vendored URDF loader prints a line per absent mesh: kept out of the table, shown on failure)
        run = subprocess.run([python, __file__, "--dex-runner", str(job)], capture_output=True, text=True)
        if run.returncode != 0:
            raise RuntimeError(f"dex-retargeting runner failed:\n{run.stdout[-3000:]}{run.stderr[-3000:]}")
        data = np.load(output)
        return {name: Run(data[f"{name}_joints"], data[f"{name}_wall"], data[f"{name}_cpu"],
                          [str(n) for n in data[f"{name}_names"]]) for name in runs}


class Run:
    def __init__(self, joints, wall=None, cpu=None, names=None):
        self.joints, self.wall, self.cpu, self.names = joints, wall, cpu, names


# ---- the one evaluator -------------------------------------------------------------------------------------

class Evaluator:
    """A config's fingertip vectors on our kinematic model of its URDF (root frame), against the scaled human."""

    def __init__(self, model, config: dict, keypoints_dex: np.ndarray):
        from teledex_lerobot.retargeting.keypoint_kinematics import KeypointKinematics

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
        frames = list(dict.fromkeys(self.origins + self.tasks))
        self._kinematics = KeypointKinematics(model, frames)  # URDF root frame
        self._origin_rows = [frames.index(f) for f in self.origins]
        self._task_rows = [frames.index(f) for f in self.tasks]

    def vectors(self, q: np.ndarray) -> np.ndarray:
        positions = self._kinematics.positions(q)
        return positions[self._task_rows] - positions[self._origin_rows]

    def vectors_and_jacobian(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        positions, jacobians = self._kinematics.positions_and_jacobians(q)
        return (positions[self._task_rows] - positions[self._origin_rows],
                jacobians[self._task_rows] - jacobians[self._origin_rows])

    def tip_errors(self, joints: np.ndarray) -> np.ndarray:
        """(N, F) distances, metres."""
        return np.array([np.linalg.norm(self.vectors(q) - target, axis=1)
                         for q, target in zip(joints, self.targets)])

    def error_mm(self, joints: np.ndarray) -> float:
        return float(1e3 * self.tip_errors(joints).mean())

    def tip_positions(self, q: np.ndarray) -> dict[int, np.ndarray]:
        """Robot tip positions (root frame) by human fingertip index."""
        positions = self._kinematics.positions(q)
        return dict(zip(self.human_tasks, positions[self._task_rows]))


def jerk(joints: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.diff(joints, 3, axis=0) ** 2)))


def actuated(model, names: list[str], joints: np.ndarray) -> np.ndarray:
    """dex-retargeting's full joint vectors (its order) -> our actuated joint vectors."""
    columns = [names.index(name) for name in model.joint_names]
    return joints[:, columns]


def floor(evaluator: Evaluator, starts: list[np.ndarray], free: np.ndarray) -> np.ndarray:
    """Per-frame least tip error over the joints `free` (the others held at zero, clipped into the limits);
    returns the floor joint vectors (N, n). See the module docstring."""
    from scipy.optimize import least_squares

    model = evaluator.model
    lower, upper = model.lower[free], model.upper[free]
    held = np.clip(np.zeros(len(model.lower)), model.lower, model.upper)
    inside = lambda z: np.clip(z, lower + 1e-9, upper - 1e-9)  # noqa: E731

    def full(z):
        q = held.copy()
        q[free] = z
        return q

    solutions, previous = [], inside(held[free])
    for frame, target in enumerate(evaluator.targets):
        def residual(z):
            return (evaluator.vectors(full(z)) - target).ravel()

        def jacobian(z):
            return evaluator.vectors_and_jacobian(full(z))[1].reshape(-1, len(model.lower))[:, free]

        best, best_cost = None, np.inf
        for start in [previous] + [s[frame][free] for s in starts]:
            result = least_squares(residual, inside(start), jac=jacobian, bounds=(lower, upper), xtol=1e-10,
                                   ftol=1e-10, max_nfev=100)
            cost = np.linalg.norm(evaluator.vectors(full(result.x)) - target, axis=1).mean()
            if cost < best_cost:
                best, best_cost = result.x, cost
        solutions.append(full(best))
        previous = best
    return np.array(solutions)


def reachable_pairs(evaluator: Evaluator) -> dict[int, bool]:
    """Human fingertip index -> whether the robot can bring that finger's tip within 15 mm of the thumb tip."""
    from scipy.optimize import least_squares

    model = evaluator.model
    if 4 not in evaluator.human_tasks:
        return {}
    reachable = {}
    for human in evaluator.human_tasks:
        if human == 4:
            continue
        gap = lambda q: np.subtract(*(evaluator.tip_positions(q)[k] for k in (human, 4)))  # noqa: E731
        best = np.inf
        for fraction in (0.0, 0.25, 0.5, 0.75, 1.0):
            start = np.clip(model.lower + fraction * (model.upper - model.lower), model.lower + 1e-9,
                            model.upper - 1e-9)
            result = least_squares(gap, start, bounds=(model.lower, model.upper), max_nfev=300)
            best = min(best, float(np.linalg.norm(gap(result.x))))
        reachable[human] = best < PINCH_ROBOT_M
    return reachable


def pinches(evaluator: Evaluator, keypoints_dex, joints, reachable) -> tuple[int, int]:
    """(successes, attempts) over the frames and reachable pairs where the human pinches."""
    successes = attempts = 0
    for frame, q in enumerate(joints):
        tips = None
        for human, ok in reachable.items():
            if ok and np.linalg.norm(keypoints_dex[frame, human] - keypoints_dex[frame, 4]) < PINCH_HUMAN_M:
                tips = evaluator.tip_positions(q) if tips is None else tips
                attempts += 1
                successes += bool(np.linalg.norm(tips[human] - tips[4]) < PINCH_ROBOT_M)
    return successes, attempts


def timing(run: Run, frames: int) -> dict:
    result = {}
    for kind, seconds in (("wall", run.wall), ("cpu", run.cpu)):
        if seconds is not None and seconds.size:
            milliseconds = 1e3 * seconds.reshape(-1, frames)
            best = milliseconds[np.argmin(np.median(milliseconds, axis=1))]
            result |= {f"median_{kind}_ms": float(np.median(best)), f"p99_{kind}_ms": float(np.percentile(best, 99))}
    return result


def lowpass(joints: np.ndarray, alpha: float, order: int) -> np.ndarray:
    """The retargeter's output filter (dex-retargeting's at order 1) run over a sequence of solutions."""
    from teledex_lerobot.retargeting.output_filter import CascadedLowPass

    smoother = CascadedLowPass(alpha, order)
    return np.array([smoother(q) for q in joints])


def at_jerk(points: list[tuple[float, float]], target_jerk: float) -> float:
    """The error on a frontier [(error mm, jerk)] at `target_jerk`, interpolated in log jerk (nan outside)."""
    points = sorted(points, key=lambda point: point[1])
    jerks = np.log([point[1] for point in points])
    if not jerks[0] <= np.log(target_jerk) <= jerks[-1]:
        return float("nan")
    return float(np.interp(np.log(target_jerk), jerks, [point[0] for point in points]))


# ---- our side -----------------------------------------------------------------------------------------------

def run_ours(urdf: Path, keypoints: np.ndarray, config: dict, repeats: int = 1) -> Run:
    from teledex_lerobot.retargeting import build_retargeter

    retargeter = build_retargeter(str(urdf), "teledex", "right", config)
    wall, cpu = [], []
    for _ in range(repeats):
        retargeter.reset()
        joints = []
        for frame in keypoints:
            start, start_cpu = time.perf_counter(), time.thread_time()
            joints.append(retargeter.retarget(frame))
            cpu.append(time.thread_time() - start_cpu)
            wall.append(time.perf_counter() - start)
    if retargeter.failures:
        raise RuntimeError(f"{urdf.name}: frames not retargeted: {dict(retargeter.failures)}")
    return Run(np.array(joints), np.array(wall), np.array(cpu))


def main(argv=None) -> None:
    args = parse_args(argv)
    if args.dex_runner:
        run_dex_retargeting(args.dex_runner)
        return
    sys.path.insert(0, str(REPO / "tests"))
    import reference_assets as assets
    import yaml

    from teledex_lerobot.kinematics import KinematicModel
    from teledex_lerobot.operator.stream import OperatorStream
    from teledex_lerobot.paths import STREAMS_DIR
    from teledex_lerobot.retargeting import RetargetingConfig, build_retargeter

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
    pinch_keypoints = OperatorStream.load(STREAMS_DIR / "pinches.npz").hand_keypoints_m[::2].astype(float)
    pinch_keypoints_dex = pinch_keypoints @ assets.DEX_TO_OURS
    defaults = RetargetingConfig()
    print(f"{len(keypoints)} frames of real MediaPipe motion (dex-retargeting example/profiling), "
          f"{args.repeats} repeats; tip errors against the human tips x the config's scaling_factor; ours: "
          f"defaults (output filter order {defaults.low_pass_order}, alpha {defaults.low_pass_alpha:g}, "
          f"smoothness_weight {defaults.teledex.smoothness_weight:g})")
    results = {}
    for hand in args.hands.split(","):
        configs = {"vector": assets.DEX_TELEOP_CONFIGS / f"{hand}_hand_right.yml",
                   "dexpilot": assets.DEX_TELEOP_CONFIGS / f"{hand}_hand_right_dexpilot.yml"}
        config = yaml.safe_load(configs["vector"].read_text())["retargeting"]
        urdf = assets.DEX_URDF_HANDS / config["urdf_path"]
        model = KinematicModel.from_urdf(urdf)
        evaluator = Evaluator(model, config, keypoints_dex)
        pinch_evaluator = Evaluator(model, config, pinch_keypoints_dex)
        dex_alpha = float(config.get("low_pass_alpha", 1.0))
        ours_config = {"hand_scale": evaluator.scale}
        equal_filter = ours_config | {"low_pass_alpha": dex_alpha, "low_pass_order": 1}
        runs = {"ours": run_ours(urdf, keypoints, ours_config, args.repeats),
                EQUAL_FILTER: run_ours(urdf, keypoints, equal_filter)}
        pinch_runs = {"ours": run_ours(urdf, pinch_keypoints, ours_config).joints,
                      EQUAL_FILTER: run_ours(urdf, pinch_keypoints, equal_filter).joints}
        if dex_python:
            dex = dex_retargeting(dex_python, assets, {
                "vector": (configs["vector"], None, args.repeats), "dexpilot": (configs["dexpilot"], None, 1),
                "vector_unfiltered": (configs["vector"], 1.0, 1)}, keypoints_dex)
            for run in dex.values():
                run.joints = actuated(model, run.names, run.joints)
            runs |= {"dex vector": dex["vector"], "dex DexPilot": dex["dexpilot"]}
            dex_pinch = dex_retargeting(dex_python, assets, {"vector": (configs["vector"], None, 1),
                                                             "dexpilot": (configs["dexpilot"], None, 1)},
                                        pinch_keypoints_dex)
            pinch_runs |= {"dex vector": actuated(model, dex_pinch["vector"].names, dex_pinch["vector"].joints),
                           "dex DexPilot": actuated(model, dex_pinch["dexpilot"].names,
                                                    dex_pinch["dexpilot"].joints)}
        fingers = fingers_below_palm(build_retargeter(str(urdf), "teledex", "right", ours_config), model)
        starts = [run.joints for name, run in runs.items() if name != EQUAL_FILTER]
        runs["floor"] = Run(floor(evaluator, starts, fingers))
        if len(fingers) < len(model.joint_names):
            runs["floor incl. wrist"] = Run(floor(evaluator, starts + [runs["floor"].joints],
                                                  np.arange(len(model.joint_names))))
        reachable = reachable_pairs(evaluator)
        rows = {}
        for name, run in runs.items():
            row = {"tip_error_mm": evaluator.error_mm(run.joints), "jerk_rad": jerk(run.joints)}
            row |= timing(run, len(keypoints))
            real = pinches(evaluator, keypoints_dex, run.joints, reachable)
            synthetic = (pinches(pinch_evaluator, pinch_keypoints_dex, pinch_runs[name], reachable)
                         if name in pinch_runs else (0, 0))
            row |= {"pinch_real": list(real), "pinch_synthetic": list(synthetic),
                    "pinch_pooled": ((real[0] + synthetic[0]) / (real[1] + synthetic[1])
                                     if real[1] + synthetic[1] else float("nan"))}
            rows[name] = row
        result = {"urdf": config["urdf_path"], "dof": len(model.joint_names), "scale": evaluator.scale,
                  "dex_low_pass_alpha": dex_alpha, "reachable_pinches": {str(k): v for k, v in reachable.items()},
                  "rows": rows}
        if dex_python:
            result["frontier"] = frontier(urdf, keypoints, evaluator, defaults, ours_config, dex, dex_alpha, runs)
        results[hand] = result
        print_hand(hand, result)
        if dex_python and args.plots:
            print(f"  frontier: {plot_frontier(hand, result, Path(args.plots))}")
    print_summary(results)
    output = Path(args.json)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(results, indent=2))
    print(f"written {output}")


def fingers_below_palm(retargeter, model) -> np.ndarray:
    """Indices of the actuated joints below the retargeter's palm link (the ones it drives)."""
    links, below = {retargeter.layout.palm_link}, set()
    for _ in model.description.joints:  # the tree's depth is at most its joint count
        for joint in model.description.joints:
            if joint.parent in links and joint.name not in below:
                below.add(joint.name)
                links.add(joint.child)
    return np.array([i for i, name in enumerate(model.joint_names) if name in below])


def frontier(urdf, keypoints, evaluator: Evaluator, defaults, ours_config: dict, dex: dict, dex_alpha: float,
             runs: dict) -> dict:
    """Error and jerk as each system's smoothing varies (see the module docstring)."""
    unfiltered = dex["vector_unfiltered"].joints
    mismatch = np.abs(lowpass(unfiltered, dex_alpha, 1) - runs["dex vector"].joints).max()
    if mismatch > 1e-5:
        raise RuntimeError(f"dex-retargeting's run at alpha {dex_alpha} is not its unfiltered run through its "
                           f"filter (max difference {mismatch:.3g} rad): its frontier cannot be derived")
    points = lambda joints, alphas, order: [  # noqa: E731
        (evaluator.error_mm(filtered), jerk(filtered), alpha)
        for alpha in alphas for filtered in [lowpass(joints, alpha, order)]]
    curves = {"dex vector (low_pass_alpha)": points(unfiltered, DEX_ALPHAS, 1)}
    order, smoothness = defaults.low_pass_order, defaults.teledex.smoothness_weight
    for factor in SMOOTHNESS_FACTORS:
        weight = factor * smoothness
        joints = run_ours(urdf, keypoints, ours_config | {"low_pass_alpha": 1.0,
                                                          "teledex": {"smoothness_weight": weight}}).joints
        if factor == 1.0:
            mismatch = np.abs(lowpass(joints, defaults.low_pass_alpha, order) - runs["ours"].joints).max()
            if mismatch > 1e-9:
                raise RuntimeError(f"our default run differs from our unfiltered run through our filter ({mismatch})")
            curves[f"ours, order 1 (smoothness {weight:.2g})"] = points(joints, OUR_ALPHAS, 1)
        curves[f"ours, order {order} (smoothness {weight:.2g})"] = points(joints, OUR_ALPHAS, order)
    dex_row = runs["dex vector"]
    their_jerk = jerk(dex_row.joints)
    default_curve = curves[f"ours, order {order} (smoothness {smoothness:.2g})"]
    return {"curves": curves, "default_curve": f"ours, order {order} (smoothness {smoothness:.2g})",
            "dex_default": [evaluator.error_mm(dex_row.joints), their_jerk, dex_alpha],
            "ours_default": [evaluator.error_mm(runs["ours"].joints), jerk(runs["ours"].joints),
                             defaults.low_pass_alpha],
            "ours_at_their_jerk_mm": at_jerk([(e, j) for e, j, _ in default_curve], their_jerk)}


def plot_frontier(hand: str, result: dict, folder: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    front = result["frontier"]
    figure, axes = plt.subplots(figsize=(7, 5))
    for name, points in front["curves"].items():
        error, jerks, alphas = zip(*points)
        style = "o-" if name == front["default_curve"] else ("s--" if name.startswith("dex") else ".:")
        axes.plot(jerks, error, style, label=name, color="tab:red" if name.startswith("dex") else None)
        if name.startswith("dex") or name == front["default_curve"]:
            for e, j, a in points:
                axes.annotate(f"{a:g}", (j, e), textcoords="offset points", xytext=(3, 3), fontsize=7)
    axes.plot(*front["dex_default"][1::-1], "*", color="tab:red", markersize=14, label="dex default")
    axes.plot(*front["ours_default"][1::-1], "*", color="tab:blue", markersize=14, label="ours default")
    for name, style in (("floor", "-"), ("floor incl. wrist", ":")):
        if name in result["rows"]:
            axes.axhline(result["rows"][name]["tip_error_mm"], color="grey", linestyle=style, label=name)
    axes.set_xscale("log")
    axes.set_xlabel("jerk: RMS third difference of the joint angles (rad/frame³)")
    axes.set_ylabel("mean fingertip error (mm)")
    axes.set_title(f"{hand}: error against jerk as the smoothing varies (labels: low_pass_alpha)")
    axes.legend(fontsize=7)
    axes.grid(True, which="both", alpha=0.3)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"retargeting_frontier_{hand}.png"
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def print_hand(hand: str, result: dict) -> None:
    reachable = [k for k, v in result["reachable_pinches"].items() if v]
    print(f"\n{hand}: {result['urdf']}, {result['dof']} DoF, scale {result['scale']:g}, "
          f"reachable thumb pinches with {reachable or 'none'}")
    print(f"  {'system':20s}{'tip mm':>8s}{'jerk rad':>10s}{'pinch real':>12s}{'synth':>10s}{'pooled':>8s}"
          f"{'median ms':>11s}{'p99 ms':>8s}{'cpu median':>12s}{'cpu p99':>9s}")
    for name, row in result["rows"].items():
        real, synthetic = row["pinch_real"], row["pinch_synthetic"]
        print(f"  {name:20s}{row['tip_error_mm']:8.2f}{row['jerk_rad']:10.4f}{f'{real[0]}/{real[1]}':>12s}"
              f"{f'{synthetic[0]}/{synthetic[1]}':>10s}{row['pinch_pooled']:8.3f}"
              f"{row.get('median_wall_ms', float('nan')):11.3f}{row.get('p99_wall_ms', float('nan')):8.2f}"
              f"{row.get('median_cpu_ms', float('nan')):12.3f}{row.get('p99_cpu_ms', float('nan')):9.2f}")
    if "frontier" in result:
        print(f"  ours at dex-retargeting's default jerk: {result['frontier']['ours_at_their_jerk_mm']:.2f} mm")


def print_summary(results: dict) -> None:
    """Two comparisons per hand: our defaults against dex-retargeting as published, and at equal filtering."""
    hands = [h for h, r in results.items() if "dex vector" in r["rows"]]
    if not hands:
        return
    print(f"\n{'':11s}{'--- ours (defaults) ---':>30s}{'--- ours, dex filter ---':>30s}{'':4s}"
          f"{'---- dex vector ----':>31s}{'floor':>7s}{'median ms':>17s}")
    print(f"{'hand':11s}{'mm':>7s}{'jerk':>8s}{'pinch':>7s}{'excess':>8s}{'mm':>7s}{'jerk':>8s}{'pinch':>7s}"
          f"{'excess':>8s}{'ok':>4s}{'mm':>7s}{'jerk':>8s}{'pinch':>7s}{'DexPilot':>9s}{'mm':>7s}{'ours/dex':>17s}")
    ratios = {"ours": [], EQUAL_FILTER: []}
    passed = 0
    for hand in hands:
        rows = results[hand]["rows"]
        dex, low = rows["dex vector"]["tip_error_mm"], rows["floor"]["tip_error_mm"]
        line = f"{hand:11s}"
        for name in ("ours", EQUAL_FILTER):
            row = rows[name]
            ratio = (row["tip_error_mm"] - low) / (dex - low)
            ratios[name].append(ratio)
            line += f"{row['tip_error_mm']:7.2f}{row['jerk_rad']:8.4f}{row['pinch_pooled']:7.3f}{ratio:8.2f}"
        equal = rows[EQUAL_FILTER]
        ok = (equal["tip_error_mm"] <= dex and equal["jerk_rad"] <= rows["dex vector"]["jerk_rad"]
              and equal["pinch_pooled"] >= 0.95)
        passed += ok
        times = f"{rows['ours']['median_wall_ms']:.3f}/{rows['dex vector']['median_wall_ms']:.2f}"
        line += (f"{'yes' if ok else 'NO':>4s}{dex:7.2f}{rows['dex vector']['jerk_rad']:8.4f}"
                 f"{rows['dex vector']['pinch_pooled']:7.3f}{rows['dex DexPilot']['pinch_pooled']:9.3f}{low:7.2f}"
                 f"{times:>17s}")
        print(line)
    print(f"mean excess ratio (ours - floor) / (dex vector - floor): defaults {np.mean(ratios['ours']):.3f}, "
          f"at dex-retargeting's filter {np.mean(ratios[EQUAL_FILTER]):.3f} (target <= 0.5). At equal filtering, "
          f"error <= dex, jerk <= dex and pinch >= 0.95 on {passed} of {len(hands)} hands. Our default has no "
          f"output filter, so its error beside dex's filtered one is not a like-for-like comparison.")


if __name__ == "__main__":
    main()
