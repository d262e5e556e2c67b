"""Hand retargeting benchmark: our methods and dex-retargeting 0.5.0 on the same hand, frames and references.

    .venv/bin/python benchmarks/retargeting.py [--urdf configs/urdf/linkerhand_l20_right.urdf] [--keypoints seq.npy]

Input: any hand URDF and any keypoint sequence (.npy, (N, 21, 3), MediaPipe order, metres, operator wrist frame);
by default the L20 right hand and the concatenated synthetic keypoint streams of configs/streams/ (open/close,
pinches, grasp, wrist motion: 60 Hz, with tremor and tracking noise). Prints and writes (--json) per method:
solve time per frame (median/p90/p99 ms of the repeat with the lowest median, since other processes load the
machine), mean wrist-to-tip error (mm) against two references, thumb-finger distance error during pinches (mm),
pinch success (robot thumb-finger tip distance < 15 mm on frames where the operator's is < 10 mm) and jerk (RMS
third difference of the joint angles, rad).

The two fingertip references (every method is scored against both; each is aimed at one):
- "scale": the operator's fingertips times one stated scale (--scale, default the robot/operator hand-size ratio:
  the mean segment scale of the non-thumb fingers against the average adult hand). dex-retargeting vector/DexPilot
  get it as their `scaling_factor`, TeleDex as a uniform calibration (every segment scale = the scale, no root
  offsets): `teledex_uniform_scale`.
- "calibrated": the operator's fingertips mapped through the operator calibration (TeleDex eq. 5: per-phalanx scales
  and root offsets from the calibration pose; operator = the average adult hand of the synthetic streams). Default
  TeleDex aims at it; dex-retargeting vector gets the same calibrated wrist->tip vectors (scaling_factor 1):
  `dex-retargeting vector (calibrated)`.
For each reference a `floor` row (not a method, not timed) gives the least mean tip error any retargeter can reach on
this hand: tips-only least squares, converged every frame, no smoothing (per finger, least squares and least
distance have the same minimiser). Every method gets the same output low-pass filter (--low-pass-alpha, default 1 =
off).

dex-retargeting runs in its own interpreter (it needs Python <= 3.12, torch and six, none of which belong in our
environment); this file is also its runner (`--dex-runner job.npz`, which imports only numpy and dex_retargeting).
Set the bench venv up once:

    python3 -m venv /work/bench-venv                         # the machine's Python 3.11
    /work/bench-venv/bin/pip install /opt/wheels/torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl
    /work/bench-venv/bin/pip install dex-retargeting==0.5.0 six

and pass --dex-python /work/bench-venv/bin/python (the default); --dex-python "" skips dex-retargeting.
Not part of CI: timings depend on the machine and its load.
"""

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
DEFAULT_STREAMS = ("open_close", "pinches", "demo_grasp", "wrist_motion")
FINGERTIPS = (4, 8, 12, 16, 20)
PINCH_OPERATOR_M, PINCH_ROBOT_M = 0.010, 0.015
# The floor: tips only, no coupling, (almost) no smoothing, iterated to convergence.
FLOOR_CONFIG = {"teledex": {"keypoint_weights": {"dip": 0.0, "pip": 0.0, "mcp": 0.0, "ip": 0.0, "cmc": 0.0},
                            "coupling_weight": 0.0, "smoothness_weight": 1e-9},
                "solver": {"max_iterations": 50, "step_tolerance_rad": 1e-7}}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--urdf", default=str(REPO / "configs/urdf/linkerhand_l20_right.urdf"))
    parser.add_argument("--side", default="right", choices=["right", "left"])
    parser.add_argument("--keypoints", default="", help=".npy (N, 21, 3); default: the synthetic streams")
    parser.add_argument("--scale", type=float, default=0.0, help="robot/operator scale; 0 = hand-size ratio")
    parser.add_argument("--low-pass-alpha", type=float, default=1.0)
    parser.add_argument("--repeats", type=int, default=3, help="passes over the sequence (timing samples)")
    parser.add_argument("--methods", default="teledex,teledex_uniform_scale,dexpilot,joint_mapping")
    parser.add_argument("--dex-python", default="/work/bench-venv/bin/python")
    parser.add_argument("--json", default=str(REPO / "outputs/benchmarks/retargeting.json"))
    parser.add_argument("--dex-runner", default="", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


# ---- dex-retargeting side (runs in the bench venv) ----------------------------------------------------------

def run_dex_retargeting(job_path: str) -> None:
    """Read a job .npz, retarget every frame with dex-retargeting, write timings and joints next to it.

    Runs: "scale" (vector and DexPilot, operator keypoints, scaling_factor = the stated scale) and "calibrated"
    (vector, keypoints whose tips are the calibrated fingertip targets, scaling_factor 1).
    """
    from dex_retargeting.retargeting_config import RetargetingConfig

    job = np.load(job_path, allow_pickle=False)
    repeats = int(job["repeats"])
    tips, joints = [str(t) for t in job["tip_frames"]], [str(j) for j in job["joint_names"]]
    results = {}
    for run, kind, keypoints, scale in (("scale", "vector", job["keypoints"], float(job["scale"])),
                                        ("scale", "dexpilot", job["keypoints"], float(job["scale"])),
                                        ("calibrated", "vector", job["calibrated_keypoints"], 1.0)):
        config = {"type": kind, "urdf_path": str(job["urdf"]), "target_joint_names": joints,
                  "scaling_factor": scale, "low_pass_alpha": float(job["low_pass_alpha"])}
        if kind == "vector":
            config |= {"target_origin_link_names": [str(job["root"])] * len(tips), "target_task_link_names": tips,
                       "target_link_human_indices": [[0] * len(tips), list(FINGERTIPS[:len(tips)])]}
        else:
            config |= {"wrist_link_name": str(job["root"]), "finger_tip_link_names": tips}
        retargeting = RetargetingConfig.from_dict(config).build()
        indices = retargeting.optimizer.target_link_human_indices
        order = [retargeting.joint_names.index(name) for name in joints]
        seconds, solutions = [], []
        for _ in range(repeats):
            retargeting.reset()
            solutions = []
            for frame in keypoints:
                start = time.perf_counter()
                reference = frame[indices[1]] - frame[indices[0]]
                qpos = retargeting.retarget(reference)
                seconds.append(time.perf_counter() - start)
                solutions.append(qpos[order])
        results[f"{run}_{kind}_seconds"] = np.array(seconds)
        results[f"{run}_{kind}_joints"] = np.array(solutions)
    np.savez(job_path.replace(".npz", "_out.npz"), **results)


def dex_retargeting(args, retargeter, keypoints, calibrated_tips, scale):
    """Timings and joints of dex-retargeting's runs (see run_dex_retargeting), or {} when no bench venv is given."""
    if not args.dex_python:
        return {}
    calibrated = keypoints.copy()
    calibrated[:, list(FINGERTIPS[:calibrated_tips.shape[1]])] = calibrated_tips
    with tempfile.TemporaryDirectory() as folder:
        job = Path(folder) / "job.npz"
        # dex-retargeting compares vectors in the URDF root frame: rotate the operator keypoints into it.
        rotation = retargeter.layout.base_rotation
        np.savez(job, keypoints=keypoints @ rotation, calibrated_keypoints=calibrated @ rotation,
                 repeats=args.repeats, urdf=str(Path(args.urdf).resolve()),
                 root=retargeter.model.description.root_link, tip_frames=list(retargeter.layout.fingertip_frames),
                 joint_names=retargeter.joint_names, scale=scale, low_pass_alpha=args.low_pass_alpha)
        subprocess.run([args.dex_python, __file__, "--dex-runner", str(job)], check=True)
        output = np.load(str(job).replace(".npz", "_out.npz"))
        return {"dex-retargeting vector": (output["scale_vector_seconds"], output["scale_vector_joints"]),
                "dex-retargeting dexpilot": (output["scale_dexpilot_seconds"], output["scale_dexpilot_joints"]),
                "dex-retargeting vector (calibrated)": (output["calibrated_vector_seconds"],
                                                        output["calibrated_vector_joints"])}


# ---- our side ----------------------------------------------------------------------------------------------

def load_keypoints(path: str) -> np.ndarray:
    if path:
        return np.load(path, allow_pickle=False).astype(float)
    from teledex_lerobot.operator.stream import OperatorStream
    from teledex_lerobot.paths import STREAMS_DIR

    return np.concatenate([OperatorStream.load(STREAMS_DIR / f"{name}.npz").hand_keypoints_m
                           for name in DEFAULT_STREAMS]).astype(float)


def run_ours(retargeter, keypoints, repeats):
    seconds = []
    for _ in range(repeats):
        retargeter.reset()
        joints = []
        for frame in keypoints:
            start = time.perf_counter()
            joints.append(retargeter.retarget(frame))
            seconds.append(time.perf_counter() - start)
    return np.array(seconds), np.array(joints)


def metrics(retargeter, keypoints, references, seconds, joints) -> dict:
    """`references`: {name: (N, F, 3) fingertip targets}; one tip error per reference."""
    tips = np.array([retargeter.fingertip_positions(q) for q in joints])
    human_tips = keypoints[:, list(FINGERTIPS[:tips.shape[1]])]
    robot_gap = np.linalg.norm(tips[:, 1:] - tips[:, :1], axis=-1)
    human_gap = np.linalg.norm(human_tips[:, 1:] - human_tips[:, :1], axis=-1)
    pinching = human_gap < PINCH_OPERATOR_M
    # Timing: the repeat with the lowest median (other processes load the machine), and the median of all repeats.
    milliseconds = 1e3 * seconds.reshape(-1, len(keypoints)) if seconds.size else np.full((1, 1), np.nan)
    best = milliseconds[np.argmin(np.median(milliseconds, axis=1))]
    return {
        "median_ms": float(np.median(best)),
        "p90_ms": float(np.percentile(best, 90)),
        "p99_ms": float(np.percentile(best, 99)),
        "median_all_repeats_ms": float(np.median(milliseconds)),
        **{f"tip_error_{name}_mm": float(1e3 * np.linalg.norm(tips - reference, axis=-1).mean())
           for name, reference in references.items()},
        "pinch_distance_error_mm": float(1e3 * np.abs(robot_gap - human_gap)[pinching].mean()),
        "pinch_success": float(np.mean(robot_gap[pinching] < PINCH_ROBOT_M)),
        "pinch_frames": int(pinching.sum()),
        "jerk_rad": float(np.sqrt(np.mean(np.diff(joints, 3, axis=0) ** 2))),
    }


def main(argv=None) -> None:
    args = parse_args(argv)
    if args.dex_runner:
        run_dex_retargeting(args.dex_runner)
        return
    from teledex_lerobot.retargeting import build_retargeter
    from teledex_lerobot.retargeting.calibration import uniform_calibration
    from teledex_lerobot.retargeting.keypoint_kinematics import KeypointKinematics
    from teledex_lerobot.retargeting.retargeter import hand_size_ratio

    keypoints = load_keypoints(args.keypoints)
    config = {"low_pass_alpha": args.low_pass_alpha}
    reference = build_retargeter(args.urdf, "teledex", args.side, config)
    scale = args.scale or hand_size_ratio(reference.calibration)
    config["dexpilot"] = {"vector_scale": scale}
    layout = reference.layout
    uniform = uniform_calibration(layout, KeypointKinematics(reference.model, layout.keypoint_frames,
                                                             layout.base_rotation),
                                  reference.reference_pose, scale, hand=reference.hand_name, side=args.side)
    tip_rows = np.cumsum([len(finger.frames) for finger in layout.fingers]) - 1
    references = {
        "scale": scale * keypoints[:, list(FINGERTIPS[:len(tip_rows)])],
        "calibrated": np.array([reference.engine.target_points(frame)[tip_rows] for frame in keypoints]),
    }

    runs, floors = {}, {}
    for method in args.methods.split(","):
        calibration = uniform if method == "teledex_uniform_scale" else None
        try:
            retargeter = build_retargeter(args.urdf, method.replace("_uniform_scale", ""), args.side, config,
                                          calibration)
        except (FileNotFoundError, ValueError) as error:  # e.g. no joint map for this hand
            print(f"skipping {method}: {error}")
            continue
        runs[method] = run_ours(retargeter, keypoints, args.repeats)
    for name, calibration in (("scale", uniform), ("calibrated", None)):
        floor = build_retargeter(args.urdf, "teledex", args.side, FLOOR_CONFIG, calibration)
        floors[f"floor ({name} reference)"] = (np.zeros(0), floor.retarget_sequence(keypoints)[0])
    runs |= dex_retargeting(args, reference, keypoints, references["calibrated"], scale)

    results = {name: metrics(reference, keypoints, references, seconds, joints[-len(keypoints):])
               for name, (seconds, joints) in (runs | floors).items()}
    setup = (f"{Path(args.urdf).name}, {len(reference.joint_names)} DoF, {len(keypoints)} frames x {args.repeats} "
             f"repeats (times: the repeat with the lowest median), low-pass alpha {args.low_pass_alpha}; "
             f"references: scale = {scale:.4f} x operator tips (robot/operator hand-size ratio unless --scale), "
             f"calibrated = operator tips through the "
             f"{reference.calibration.operator!r} calibration (eq. 5)")
    aims = {"teledex": "calibrated", "joint_mapping": "angles", "dex-retargeting vector (calibrated)": "calibrated"}
    print(setup)
    columns = ("median_ms", "p90_ms", "p99_ms", "tip_error_scale_mm", "tip_error_calibrated_mm",
               "pinch_distance_error_mm", "pinch_success", "jerk_rad")
    headers = ("median ms", "p90 ms", "p99 ms", "tip mm scale", "tip mm calib", "pinch err mm", "pinch ok", "jerk rad")
    print(f"{'method':38s}{'aims at':>11s}" + "".join(f"{h:>14s}" for h in headers))
    for name, values in results.items():
        aim = aims.get(name, "calibrated" if "calibrated reference" in name else "scale")
        values["aims_at"] = aim
        print(f"{name:38s}{aim:>11s}" + "".join(f"{values[c]:14.4f}" for c in columns))
    if "teledex" in results and "dex-retargeting vector" in results:
        speedup = results["dex-retargeting vector"]["median_ms"] / results["teledex"]["median_ms"]
        print(f"teledex median speed-up over dex-retargeting vector: {speedup:.1f}x")
    output = Path(args.json)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps({"setup": setup, "scale": scale, "calibration": reference.calibration.operator,
                                  "pinch_frames": results[next(iter(results))]["pinch_frames"],
                                  "python": sys.version.split()[0], "results": results}, indent=2))
    print(f"written {output}")


if __name__ == "__main__":
    main()
