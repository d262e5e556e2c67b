"""Bad frames a tracker really sends: held and counted, never retargeted; and one bad frame costs at most 10 frames.

Trackers report a lost hand as finite numbers (all zeros, every point at the wrist), SDKs switch units, a wrong
hand gets mirrored, and a single frame can jump to another pose. Each must leave the robot where the clean run would
have it: degenerate frames are held (`last_frame_ok` False, counted in `failures`), and after any single bad frame
the output is back on the clean run's solution within 10 frames.
"""

import numpy as np
import pytest
import reference_assets

from teledex_lerobot.operator.stream import OperatorStream
from teledex_lerobot.paths import STREAMS_DIR
from teledex_lerobot.retargeting import build_retargeter

RECOVERY_FRAMES = 10
SAME_RAD = 0.01


def _pinches() -> np.ndarray:
    return OperatorStream.load(STREAMS_DIR / "pinches.npz").hand_keypoints_m[::3].astype(float)


def _glitches(frames: np.ndarray, at: int) -> dict[str, np.ndarray]:
    frame = frames[at]
    thumb_on_pinky = frame.copy()
    thumb_on_pinky[1:5] = frame[17:21] + np.array([0.0, 0.01, 0.0])  # the thumb tracked onto the little finger
    return {
        "all zeros (lost hand)": np.zeros_like(frame),
        "every point at one place": np.full_like(frame, 0.05),
        "millimetres": frame * 1000.0,
        "mirrored hand": frame * np.array([-1.0, 1.0, 1.0]),
        "collapsed fingers": np.where(np.arange(21)[:, None] >= 5, frame[5], frame),
        "thumb tracked onto the little finger": thumb_on_pinky,
        "a pose from elsewhere in the recording": frames[(at + len(frames) // 2) % len(frames)],
    }


DEGENERATE = ("all zeros (lost hand)", "every point at one place", "millimetres", "mirrored hand",
              "collapsed fingers")


@pytest.mark.parametrize("kind", DEGENERATE)
def test_degenerate_frames_are_held_and_counted(kind):
    frames = _pinches()
    retargeter = build_retargeter("linkerhand_l20", "teledex", "right")
    before = retargeter.retarget_sequence(frames[:20])[0][-1]
    held = retargeter.retarget(_glitches(frames, 20)[kind])
    assert not retargeter.last_frame_ok, f"{kind}: accepted as a hand"
    assert sum(retargeter.failures.values()) == 1
    np.testing.assert_array_equal(held, before)  # the robot stays where it was


def _recovery_frames(retargeter_factory, frames: np.ndarray, at: int, glitch: np.ndarray) -> int:
    """Frames after the glitch until the output stays on the clean run's solution (within SAME_RAD)."""
    clean = retargeter_factory().retarget_sequence(frames)[0]
    disturbed = frames.copy()
    disturbed[at] = glitch
    joints = retargeter_factory().retarget_sequence(disturbed)[0]
    off = np.flatnonzero(np.abs(joints - clean).max(axis=1) > SAME_RAD)
    off = off[off > at]
    return 0 if off.size == 0 else int(off[-1] - at)


@pytest.mark.parametrize("at", [40, 95, 150])
def test_output_returns_to_the_clean_run_within_10_frames_after_any_single_bad_frame(at):
    frames = _pinches()
    factory = lambda: build_retargeter("linkerhand_l20", "teledex", "right")  # noqa: E731
    late = {kind: _recovery_frames(factory, frames, at, glitch) for kind, glitch in _glitches(frames, at).items()}
    assert max(late.values()) <= RECOVERY_FRAMES, f"frames off the clean run after the glitch at {at}: {late}"


# Measured with the default settings (windows every 40 frames, all 7 glitch kinds): Allegro 9, LEAP 19, Inspire 19
# frames; the test runs the three kinds that set those figures (a held frame, two plausible wrong frames). Not met on
# LEAP and Inspire: the smoothing that keeps jerk below dex-retargeting's remembers a held or glitched frame longer
# there (see the report of issue 12); strict, so a fix shows up as an unexpected pass.
_REAL_MOTION_GLITCHES = ("all zeros (lost hand)", "thumb tracked onto the little finger",
                         "a pose from elsewhere in the recording")
_REAL_MOTION_HANDS = [
    "allegro_hand/allegro_hand_right.urdf",
    pytest.param("leap_hand/leap_hand_right.urdf", marks=pytest.mark.xfail(strict=True, reason="19 frames")),
    pytest.param("inspire_hand/inspire_hand_right.urdf", marks=pytest.mark.xfail(strict=True, reason="19 frames")),
]


@pytest.mark.skipif(not reference_assets.available(), reason=reference_assets.MISSING)
@pytest.mark.parametrize("hand", _REAL_MOTION_HANDS)
def test_recovery_on_real_motion_and_vendor_hands(hand):
    """dex-retargeting's recorded MediaPipe hand on vendor URDFs: a glitch in the middle of 50-frame windows taken
    every 40 frames across the recording (clean and disturbed runs both start at the window's start)."""
    recording = reference_assets.human_recording() @ reference_assets.DEX_TO_OURS.T
    urdf = str(reference_assets.DEX_URDF_HANDS / hand)
    factory = lambda: build_retargeter(urdf, "teledex", "right", {"hand_scale": 1.6})  # noqa: E731
    worst = {}
    for start in range(0, len(recording) - 50, 40):
        frames = recording[start:start + 50]
        glitches = _glitches(frames, 30)
        for kind in _REAL_MOTION_GLITCHES:
            worst[(start + 30, kind)] = _recovery_frames(factory, frames, 30, glitches[kind])
    where = max(worst, key=worst.get)
    assert worst[where] <= RECOVERY_FRAMES, f"{hand}: {worst[where]} frames after the glitch at {where}"


def test_human_hands_pass_the_plausibility_checks():
    """No false alarms: every frame of the synthetic operator streams, and of the real recording when present."""
    from teledex_lerobot.operator.plausibility import implausibility

    for name in ("open_close", "pinches", "demo_grasp", "wrist_motion"):
        stream = OperatorStream.load(STREAMS_DIR / f"{name}.npz")
        flagged = [implausibility(frame, stream.side) for frame in stream.hand_keypoints_m.astype(float)]
        assert not any(flagged), (name, next(f for f in flagged if f))
    if reference_assets.available():
        recording = reference_assets.human_recording() @ reference_assets.DEX_TO_OURS.T
        assert not any(implausibility(frame, "right") for frame in recording)


def test_every_bone_is_checked_not_only_the_most_unusual_one():
    """A bone too long (3x its proportion) beside one short but within range (0.3x, farther from 1 in log ratio):
    the frame is refused and the message names the long bone. Before, only the bone farthest in log ratio was
    checked, and this frame passed."""
    from teledex_lerobot.operator.keypoints import FINGER_CHAINS
    from teledex_lerobot.operator.plausibility import implausibility

    frame = _pinches()[0].copy()
    index, middle = FINGER_CHAINS["index"], FINGER_CHAINS["middle"]
    tip_bone = frame[index[-1]] - frame[index[-2]]
    frame[index[-1]] = frame[index[-2]] + 3.0 * tip_bone  # the index tip's bone 3x as long
    middle_bone = frame[middle[-1]] - frame[middle[-2]]
    frame[middle[-1]] = frame[middle[-2]] + 0.3 * middle_bone  # the middle tip's 0.3x: short, still plausible
    problem = implausibility(frame, "right")
    assert problem is not None and problem[0] == "bone_length", problem
    assert f"bone {index[-2]}-{index[-1]} " in problem[1], problem[1]
