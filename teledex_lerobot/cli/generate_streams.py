"""Generate the synthetic operator streams (right hand, 60 Hz) that demos and tests replay.

Deterministic: the same --seed always writes byte-identical files. Motions blend between key poses with minimum-jerk
profiles; on top come a physiological tremor (8-12 Hz, a few milliradians / tenths of a millimetre) and tracking
noise on the keypoints (at most 1 mm; the wrist keypoint stays the frame origin).
"""

import argparse
import zlib
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

from teledex_lerobot.operator.glove import MEASURED_GLOVE_SLOTS, canonical_to_glove
from teledex_lerobot.operator.hand_model import clip_to_human_limits, keypoints_from_angles
from teledex_lerobot.operator.poses import FIST, OPEN_HAND, POWER_GRASP, RELAXED_HAND, solve_pinch
from teledex_lerobot.operator.stream import OperatorStream
from teledex_lerobot.paths import STREAMS_DIR

SAMPLE_RATE_HZ = 60
SIDE = "right"
PINCH_FINGERS = ("index", "middle", "ring", "pinky")

# Operator world frame: x forward, y left, z up. The right wrist starts in front of the operator, fingers pointing
# forward, palm facing left (toward the body's midline), thumb up: ready to grasp an upright bottle from the side.
# Columns: the wrist frame's x (pinky side, down), y (palm normal, left), z (fingers, forward) in the world.
WRIST_START_M = np.array([0.35, -0.20, 1.00])
WRIST_START_ROTATION = Rotation.from_matrix([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]])

ANGLE_TREMOR_RAD = 0.0015
WRIST_TREMOR_M = 0.0003
WRIST_TREMOR_RAD = 0.002
KEYPOINT_NOISE_SIGMA_M = 0.0003
KEYPOINT_NOISE_MAX_M = 0.001
GLOVE_NOISE_SIGMA_DEG = 0.3


def min_jerk_path(keyframes, times_s: np.ndarray) -> np.ndarray:
    """Values at `times_s` through (time_s, value) keyframes, blending consecutive ones with a minimum-jerk profile.

    Equal consecutive values make a hold; before the first and after the last keyframe the value is constant.
    """
    key_times = np.array([time for time, _ in keyframes], dtype=float)
    values = np.array([np.asarray(value, dtype=float) for _, value in keyframes])
    segment = np.clip(np.searchsorted(key_times, times_s, side="right") - 1, 0, len(key_times) - 2)
    progress = np.clip((times_s - key_times[segment]) / np.diff(key_times)[segment], 0.0, 1.0)
    blend = progress**3 * (10 - 15 * progress + 6 * progress**2)
    blend = blend.reshape(blend.shape + (1,) * (values.ndim - 1))
    return values[segment] + blend * (values[segment + 1] - values[segment])


def sequence(start_value, steps, start_s: float = 0.0) -> list:
    """Keyframes from (duration_s, value) steps: hold `start_value` until start_s, then reach each value in turn."""
    keyframes = [(0.0, start_value)] + ([(start_s, start_value)] if start_s > 0 else [])
    for duration_s, value in steps:
        keyframes.append((keyframes[-1][0] + duration_s, value))
    return keyframes


def tremor(rng: np.random.Generator, times_s: np.ndarray, size: int, amplitude: float) -> np.ndarray:
    """Physiological tremor (N, size): three 8-12 Hz sinusoids per component, peak at most `amplitude`."""
    frequencies_hz = rng.uniform(8.0, 12.0, size=(3, size))
    phases = rng.uniform(0.0, 2 * np.pi, size=(3, size))
    waves = np.sin(2 * np.pi * frequencies_hz * times_s[:, None, None] + phases)
    return amplitude / 3 * waves.sum(axis=1)


def sample_times(duration_s: float) -> tuple[np.ndarray, np.ndarray]:
    """(times_s, timestamps_ns) at SAMPLE_RATE_HZ from 0 to duration_s inclusive."""
    count = int(round(duration_s * SAMPLE_RATE_HZ)) + 1
    timestamps_ns = np.round(np.arange(count) * 1e9 / SAMPLE_RATE_HZ).astype(np.int64)
    return timestamps_ns / 1e9, timestamps_ns


def tracked_keypoints(rng, times_s: np.ndarray, angles: np.ndarray) -> np.ndarray:
    """Keypoints (N, 21, 3) float32 as a hand tracker reports them for canonical angles (N, 20)."""
    angles = clip_to_human_limits(angles + tremor(rng, times_s, angles.shape[1], ANGLE_TREMOR_RAD))
    keypoints = keypoints_from_angles(angles, SIDE)
    noise = rng.normal(0.0, KEYPOINT_NOISE_SIGMA_M, size=keypoints.shape)
    noise_norm = np.maximum(np.linalg.norm(noise, axis=-1, keepdims=True), 1e-12)
    noise *= np.minimum(1.0, KEYPOINT_NOISE_MAX_M / noise_norm)
    noise[:, 0] = 0.0  # the wrist keypoint is the frame origin by definition
    return (keypoints + noise).astype(np.float32)


def glove_angles(rng, times_s: np.ndarray, angles: np.ndarray) -> np.ndarray:
    """HandDriver angles (N, 24) float32 in degrees as the glove reports them for canonical angles (N, 20)."""
    angles = clip_to_human_limits(angles + tremor(rng, times_s, angles.shape[1], ANGLE_TREMOR_RAD))
    glove = canonical_to_glove(angles, SIDE)
    # Sensor noise on the measured slots only: the unused ones stay exactly 0.
    measured = list(MEASURED_GLOVE_SLOTS)
    glove[:, measured] += rng.normal(0.0, GLOVE_NOISE_SIGMA_DEG, size=(len(glove), len(measured)))
    return glove.astype(np.float32)


def wrist_poses(rng, times_s: np.ndarray, offsets_m=None, wrist_rotations=None) -> np.ndarray:
    """(N, 7) [x, y, z, qx, qy, qz, qw]: the start pose moved by world offsets and turned in the wrist frame."""
    count = len(times_s)
    position = WRIST_START_M + (0.0 if offsets_m is None else offsets_m) + tremor(rng, times_s, 3, WRIST_TREMOR_M)
    rotation = WRIST_START_ROTATION * (Rotation.identity(count) if wrist_rotations is None else wrist_rotations)
    quaternion = (rotation * Rotation.from_rotvec(tremor(rng, times_s, 3, WRIST_TREMOR_RAD))).as_quat()
    # Keep consecutive quaternions in one hemisphere so the stream never jumps between q and -q.
    flips = np.cumprod(np.where(np.sum(quaternion[1:] * quaternion[:-1], axis=1) < 0, -1.0, 1.0))
    quaternion[1:] *= flips[:, None]
    return np.concatenate([position, quaternion], axis=1)


def keypoint_stream(rng, duration_s, hand_keyframes, description, wrist_offsets=None, wrist_rotations=None):
    """A keypoints stream: the hand follows `hand_keyframes`; wrist offsets/rotations are functions of time."""
    times_s, timestamps_ns = sample_times(duration_s)
    wrist_pose = wrist_poses(
        rng,
        times_s,
        None if wrist_offsets is None else wrist_offsets(times_s),
        None if wrist_rotations is None else wrist_rotations(times_s),
    )
    return OperatorStream(
        kind="keypoints",
        side=SIDE,
        timestamps_ns=timestamps_ns,
        wrist_pose=wrist_pose,
        description=description,
        hand_keypoints_m=tracked_keypoints(rng, times_s, min_jerk_path(hand_keyframes, times_s)),
    )


def open_close_steps(cycles: int) -> list:
    """(duration_s, pose) steps of open -> fist -> open cycles, 2.5 s each."""
    cycle = [(1.0, FIST), (0.3, FIST), (0.9, OPEN_HAND), (0.3, OPEN_HAND)]
    return cycle * cycles


def pinch_steps(finger: str) -> list:
    """(duration_s, pose) steps of one 2.9 s thumb pinch from and back to the relaxed hand; held 0.9-1.6 s."""
    pinch = solve_pinch(finger, RELAXED_HAND)
    return [(0.9, pinch), (0.7, pinch), (0.8, RELAXED_HAND), (0.5, RELAXED_HAND)]


def build_open_close(rng) -> OperatorStream:
    return keypoint_stream(
        rng,
        8.0,
        sequence(OPEN_HAND, open_close_steps(3), start_s=0.4),
        "Right hand, wrist still: three open -> fist -> open cycles of 2.5 s from 0.4 s (fist held 1.4-1.7, "
        "3.9-4.2, 6.4-6.7 s).",
    )


def build_pinches(rng) -> OperatorStream:
    steps = [step for finger in PINCH_FINGERS for step in pinch_steps(finger)]
    holds = ", ".join(f"{finger} {1.3 + 2.9 * i:.1f}-{2.0 + 2.9 * i:.1f} s" for i, finger in enumerate(PINCH_FINGERS))
    return keypoint_stream(
        rng,
        12.0,
        sequence(RELAXED_HAND, steps, start_s=0.4),
        f"Right hand, wrist still: the thumb tip pinches each fingertip in turn (tips < 5 mm apart), held {holds}.",
    )


def square_offsets(times_s: np.ndarray) -> np.ndarray:
    """A 6 cm square in the vertical y-z plane (left, up, right, down), 1 s per edge with 0.15 s corner pauses."""
    side_m = 0.06
    corners = [(0.0, side_m, 0.0), (0.0, side_m, side_m), (0.0, 0.0, side_m), (0.0, 0.0, 0.0)]
    steps = [step for corner in corners for step in ((1.0, corner), (0.15, corner))]
    return min_jerk_path(sequence((0.0, 0.0, 0.0), steps, start_s=0.5), times_s)


def wobble_rotations(times_s: np.ndarray) -> Rotation:
    """15° roll (about the forearm, wrist z) and pitch (about wrist x) a quarter period apart, 5.5-9.5 s at 0.5 Hz."""
    start_s, end_s, amplitude_rad, frequency_hz = 5.5, 9.5, np.radians(15.0), 0.5
    fade = min_jerk_path(sequence(0.0, [(0.5, 1.0), (end_s - start_s - 1.0, 1.0), (0.5, 0.0)], start_s), times_s)
    phase = 2 * np.pi * frequency_hz * (times_s - start_s)
    roll = Rotation.from_rotvec((amplitude_rad * fade * np.sin(phase))[:, None] * [0.0, 0.0, 1.0])
    pitch = Rotation.from_rotvec((amplitude_rad * fade * np.cos(phase))[:, None] * [1.0, 0.0, 0.0])
    return roll * pitch


def build_wrist_motion(rng) -> OperatorStream:
    return keypoint_stream(
        rng,
        10.0,
        [(0.0, RELAXED_HAND), (10.0, RELAXED_HAND)],
        "Right hand relaxed (half open). The wrist traces a 6 cm square in the vertical y-z plane (left, up, right, "
        "down; 0.5-5.1 s), then wobbles +-15 deg in roll and pitch (5.5-9.5 s).",
        wrist_offsets=square_offsets,
        wrist_rotations=wobble_rotations,
    )


def build_demo_grasp(rng) -> OperatorStream:
    start, reach, lift = np.zeros(3), np.array([0.08, 0.0, 0.0]), np.array([0.08, 0.0, 0.05])
    wrist_steps = [(1.5, reach), (1.0, reach), (1.2, lift), (0.4, lift), (1.2, reach), (0.8, reach), (1.0, start)]
    hand_steps = [(1.5, OPEN_HAND), (1.0, POWER_GRASP), (2.8, POWER_GRASP), (0.8, OPEN_HAND)]
    wrist = sequence(start, wrist_steps, start_s=0.5)
    return keypoint_stream(
        rng,
        8.0,
        sequence(OPEN_HAND, hand_steps, start_s=0.5),
        "Right hand: reach 8 cm forward (0.5-2.0 s), close to a power grasp (2.0-3.0 s), lift 5 cm (3.0-4.2 s), "
        "hold, lower back (4.6-5.8 s), open (5.8-6.6 s), withdraw to the start (6.6-7.6 s).",
        wrist_offsets=lambda times_s: min_jerk_path(wrist, times_s),
    )


def build_glove_open_close(rng) -> OperatorStream:
    times_s, timestamps_ns = sample_times(8.0)
    pinch = solve_pinch("index", OPEN_HAND)
    steps = open_close_steps(2) + [(0.9, pinch), (0.8, pinch), (0.8, OPEN_HAND)]
    return OperatorStream(
        kind="glove_angles",
        side=SIDE,
        timestamps_ns=timestamps_ns,
        wrist_pose=wrist_poses(rng, times_s),
        description="UdexReal glove, right hand, wrist still: two open -> fist -> open cycles of 2.5 s from 0.4 s, "
        "then a thumb-index pinch held 6.3-7.1 s.",
        glove_angles_deg=glove_angles(rng, times_s, min_jerk_path(sequence(OPEN_HAND, steps, 0.4), times_s)),
    )


STREAM_BUILDERS = {
    "open_close.npz": build_open_close,
    "pinches.npz": build_pinches,
    "wrist_motion.npz": build_wrist_motion,
    "glove_open_close.npz": build_glove_open_close,
    "demo_grasp.npz": build_demo_grasp,
}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="teledex-generate-streams", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=STREAMS_DIR, help=f"target directory (default: {STREAMS_DIR})")
    parser.add_argument("--seed", type=int, default=0, help="random seed of tremor and noise (default: 0)")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for name, build in STREAM_BUILDERS.items():
        # One generator per stream, keyed by its name, so adding or editing a stream leaves the others unchanged.
        stream = build(np.random.default_rng([args.seed, zlib.crc32(name.encode())]))
        path = args.out / name
        stream.save(path)
        print(
            f"wrote {path}: {stream.kind}, {len(stream)} samples, {stream.duration_s:.2f} s, "
            f"{path.stat().st_size / 1024:.0f} KiB"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
