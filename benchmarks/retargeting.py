"""Hand retargeting benchmark: our methods and dex-retargeting 0.5.0 on the same hand, frames and scale.

    .venv/bin/python benchmarks/retargeting.py [--urdf configs/urdf/linkerhand_l20_right.urdf] [--keypoints seq.npy]

Input: any hand URDF and any keypoint sequence (.npy, (N, 21, 3), MediaPipe order, metres, operator wrist frame);
by default the L20 right hand and the concatenated synthetic keypoint streams of configs/streams/ (open/close,
pinches, grasp, wrist motion: 60 Hz, with tremor and tracking noise). Prints and writes (--json) per method:
solve time per frame (median/p90/p99, ms), mean wrist-to-tip error (mm) against the operator's fingertips scaled by
the stated scale, thumb-finger distance error during pinches (mm), pinch success (robot thumb-finger tip distance
< 15 mm on frames where the operator's is < 10 mm) and jerk (RMS third difference of the joint angles, rad). The
scale is the robot/operator hand-size ratio (mean segment scale of the non-thumb fingers, operator = average adult
hand) unless --scale is given; every method gets the same scale (dex-retargeting's `scaling_factor`) and the same
output low-pass filter (--low-pass-alpha, default 1 = off).

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
    """Read a job .npz, retarget every frame with dex-retargeting, write timings and joints next to it."""
    from dex_retargeting.retargeting_config import RetargetingConfig

    job = np.load(job_path, allow_pickle=False)
    keypoints, repeats = job["keypoints"], int(job["repeats"])
    tips, joints = [str(t) for t in job["tip_frames"]], [str(j) for j in job["joint_names"]]
    results = {}
    for kind in ("vector", "dexpilot"):
        config = {"type": kind, "urdf_path": str(job["urdf"]), "target_joint_names": joints,
                  "scaling_factor": float(job["scale"]), "low_pass_alpha": float(job["low_pass_alpha"])}
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
        results[f"{kind}_seconds"] = np.array(seconds)
        results[f"{kind}_joints"] = np.array(solutions)
    np.savez(job_path.replace(".npz", "_out.npz"), **results)


def dex_retargeting(args, retargeter, keypoints, scale):
    """Timings and joints of dex-retargeting vector and DexPilot modes, or {} when no bench venv is given."""
    if not args.dex_python:
        return {}
    with tempfile.TemporaryDirectory() as folder:
        job = Path(folder) / "job.npz"
        # dex-retargeting compares vectors in the URDF root frame: rotate the operator keypoints into it.
        urdf_keypoints = keypoints @ retargeter.layout.base_rotation
        np.savez(job, keypoints=urdf_keypoints, repeats=args.repeats, urdf=str(Path(args.urdf).resolve()),
                 root=retargeter.model.description.root_link, tip_frames=list(retargeter.layout.fingertip_frames),
                 joint_names=retargeter.joint_names, scale=scale, low_pass_alpha=args.low_pass_alpha)
        subprocess.run([args.dex_python, __file__, "--dex-runner", str(job)], check=True)
        output = np.load(str(job).replace(".npz", "_out.npz"))
        return {f"dex-retargeting {kind}": (output[f"{kind}_seconds"], output[f"{kind}_joints"])
                for kind in ("vector", "dexpilot")}


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


def metrics(retargeter, keypoints, seconds, joints, scale) -> dict:
    tips = np.array([retargeter.fingertip_positions(q) for q in joints])
    human_tips = keypoints[:, list(FINGERTIPS[:tips.shape[1]])]
    robot_gap = np.linalg.norm(tips[:, 1:] - tips[:, :1], axis=-1)
    human_gap = np.linalg.norm(human_tips[:, 1:] - human_tips[:, :1], axis=-1)
    pinching = human_gap < PINCH_OPERATOR_M
    milliseconds = 1e3 * seconds
    return {
        "median_ms": float(np.median(milliseconds)),
        "p90_ms": float(np.percentile(milliseconds, 90)),
        "p99_ms": float(np.percentile(milliseconds, 99)),
        "tip_error_mm": float(1e3 * np.linalg.norm(tips - scale * human_tips, axis=-1).mean()),
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
    # "teledex_uniform_scale": TeleDex calibrated with the one stated scale and no root offsets, so that its targets
    # are exactly the reference of the tip-error metric (default TeleDex aims at per-phalanx scaled keypoints).
    layout = reference.layout
    uniform = uniform_calibration(layout, KeypointKinematics(reference.model, layout.keypoint_frames,
                                                             layout.base_rotation),
                                  reference.reference_pose, scale, hand=reference.hand_name, side=args.side)
    runs = {}
    for method in args.methods.split(","):
        calibration = uniform if method == "teledex_uniform_scale" else None
        try:
            retargeter = build_retargeter(args.urdf, method.replace("_uniform_scale", ""), args.side, config,
                                          calibration)
        except (FileNotFoundError, ValueError) as error:  # e.g. no joint map for this hand
            print(f"skipping {method}: {error}")
            continue
        runs[method] = run_ours(retargeter, keypoints, args.repeats)
    runs |= dex_retargeting(args, reference, keypoints, scale)

    results = {name: metrics(reference, keypoints, seconds, joints[-len(keypoints):], scale)
               for name, (seconds, joints) in runs.items()}
    header = (f"{Path(args.urdf).name}, {len(reference.joint_names)} DoF, {len(keypoints)} frames x {args.repeats}, "
              f"scale {scale:.3f} (robot/operator), low-pass alpha {args.low_pass_alpha}")
    print(header)
    columns = ("median_ms", "p90_ms", "p99_ms", "tip_error_mm", "pinch_distance_error_mm", "pinch_success",
               "jerk_rad")
    print(f"{'method':26s}" + "".join(f"{c:>24s}" for c in columns))
    for name, values in results.items():
        print(f"{name:26s}" + "".join(f"{values[c]:24.4f}" for c in columns))
    if "teledex" in results and "dex-retargeting vector" in results:
        speedup = results["dex-retargeting vector"]["median_ms"] / results["teledex"]["median_ms"]
        print(f"teledex median speed-up over dex-retargeting vector: {speedup:.1f}x")
    output = Path(args.json)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps({"setup": header, "scale": scale, "pinch_frames": results[next(iter(results))][
        "pinch_frames"], "python": sys.version.split()[0], "results": results}, indent=2))
    print(f"written {output}")


if __name__ == "__main__":
    main()
