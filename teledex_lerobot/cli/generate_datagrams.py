"""teledex-generate-datagrams: write the recorded-input fixtures (configs/streams/*.datagrams.jsonl) that the
replay teleoperator plays and the loopback tests send (deterministic).

- <stream>: every synthetic operator stream configs/streams/<stream>.npz (demo_grasp, open_close, pinches,
  wrist_motion: keypoint stream JSON; glove_open_close: UdexReal HandDriver JSON), one datagram per sample.
- xr_hand_tracking: XR state JSON with the right hand tracked (26 OpenXR joints), 15 Hz, from open_close.npz.
- xr_controller_reach: XR state JSON, both controllers at 90 Hz: left X (ZeroPos), left Y (Teleoperation), then the
  right trigger held while the right controller draws a 6 cm circle and its grip closes the hand; released at the end.
- leader_arm_wave: leader-arm joint JSON (a Piper waving joint1 and joint5 about home), 100 Hz.
"""

import argparse
from collections.abc import Callable
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

from ..errors import DataError
from ..inputs import encode_joints, encode_xr_state
from ..inputs.datagram_file import write_datagrams
from ..inputs.operator_streams import stream_datagrams
from ..operator.stream import OperatorStream
from ..paths import STREAMS_DIR

Datagrams = list[tuple[int, bytes]]  # (capture time ns, payload)


def xr_hand_tracking() -> Datagrams:
    source = STREAMS_DIR / "open_close.npz"
    stream = OperatorStream.load(source)
    keypoints = stream.hand_keypoints_m
    if keypoints is None:
        raise DataError(f"{source} has no hand_keypoints_m: it is not a hand-keypoint stream; regenerate it with "
                        "teledex-generate-streams")
    indices = range(0, len(stream), 4)
    datagrams = []
    for i in indices:
        pose = stream.wrist_pose[i]
        world = keypoints[i].astype(float) @ Rotation.from_quat(pose[3:]).as_matrix().T + pose[:3]
        datagrams.append((int(stream.timestamps_ns[i]), encode_xr_state(
            timestamp_ns=int(stream.timestamps_ns[i]), hands_m={stream.side: world})))
    return datagrams


def xr_controller_reach(rate_hz: float = 90.0, duration_s: float = 6.0) -> Datagrams:
    start = np.array([0.35, -0.20, 1.00])
    datagrams = []
    for k in range(int(rate_hz * duration_s)):
        t = k / rate_hz
        held = 1.5 <= t < 5.5
        phase = 2 * np.pi * max(t - 1.8, 0.0) / 3.0 if held else 0.0
        position = start + 0.06 * np.array([0.0, np.sin(phase), 1 - np.cos(phase)])
        rotation = Rotation.from_euler("z", 0.3 * np.sin(phase)).as_quat()
        right = {"pose": np.r_[position, rotation], "trigger": 1.0 if held else 0.0,
                 "grip": float(np.clip((t - 2.0) / 2.0, 0, 1)) if held else 0.0}
        # the left controller rests at the side; its X then Y buttons request ZeroPos, then Teleoperation
        left = {"pose": np.r_[start * [1, -1, 1], 0, 0, 0, 1], "primary": 0.2 <= t < 0.3, "secondary": 1.0 <= t < 1.1}
        datagrams.append((int(t * 1e9), encode_xr_state(timestamp_ns=int(t * 1e9),
                                                        controllers={"right": right, "left": left})))
    return datagrams


def leader_arm_wave(rate_hz: float = 100.0, duration_s: float = 6.0) -> Datagrams:
    home = {"joint1": 0.0, "joint2": 1.0, "joint3": -1.0, "joint4": 0.0, "joint5": 0.6, "joint6": 0.0}
    datagrams = []
    for k in range(int(rate_hz * duration_s)):
        t = k / rate_hz
        positions = dict(home, joint1=0.4 * np.sin(2 * np.pi * t / 3.0), joint5=0.6 + 0.3 * np.sin(2 * np.pi * t / 2))
        datagrams.append((int(t * 1e9), encode_joints(positions, int(t * 1e9))))
    return datagrams


# name -> (parser, control config, datagrams)
DEVICE_FIXTURES: dict[str, tuple[str, str, Callable[[], Datagrams]]] = {
    "xr_hand_tracking": ("xr_state", "xr_hand_tracking", xr_hand_tracking),
    "xr_controller_reach": ("xr_state", "xr_hybrid", xr_controller_reach),
    "leader_arm_wave": ("joints", "leader_direct", leader_arm_wave),
}


def generate(out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for source in sorted(STREAMS_DIR.glob("*.npz")):
        stream = OperatorStream.load(source)
        parser, control, datagrams = stream_datagrams(stream)
        written.append(out_dir / f"{source.stem}.datagrams.jsonl")
        write_datagrams(written[-1], parser, datagrams, description=stream.description, control=control)
    for name, (parser, control, make) in DEVICE_FIXTURES.items():
        description = " ".join(__doc__.split(f"- {name}: ")[1].split("\n- ")[0].split())
        written.append(out_dir / f"{name}.datagrams.jsonl")
        write_datagrams(written[-1], parser, make(), description=description, control=control)
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=STREAMS_DIR)
    for path in generate(parser.parse_args().out):
        print(f"wrote {path} ({path.stat().st_size // 1024} KiB)")


if __name__ == "__main__":
    main()
