"""Operator stream format (reader/writer, errors, timing) and the generated streams."""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from teledex_lerobot.cli.generate_streams import STREAM_BUILDERS, main
from teledex_lerobot.operator.glove import glove_to_canonical
from teledex_lerobot.operator.hand_model import HUMAN_ANGLE_LIMITS_RAD
from teledex_lerobot.operator.keypoints import FINGERTIP_INDICES, THUMB_TIP, validate_keypoints
from teledex_lerobot.operator.stream import FORMAT, OperatorStream

FRAME_NS = {16_666_666, 16_666_667}  # 60 Hz
EXPECTED_DURATION_S = {
    "open_close.npz": 8.0,
    "pinches.npz": 12.0,
    "wrist_motion.npz": 10.0,
    "glove_open_close.npz": 8.0,
    "demo_grasp.npz": 8.0,
}


@pytest.fixture(scope="module")
def streams_dir(tmp_path_factory):
    directory = tmp_path_factory.mktemp("streams")
    assert main(["--out", str(directory)]) == 0
    return directory


@pytest.fixture(scope="module")
def streams(streams_dir):
    return {name: OperatorStream.load(streams_dir / name) for name in STREAM_BUILDERS}


def tiny_stream(count=5, **overrides) -> OperatorStream:
    fields = dict(
        kind="keypoints",
        side="right",
        timestamps_ns=np.arange(count, dtype=np.int64) * 10,
        wrist_pose=np.tile([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0], (count, 1)),
        description="test",
        hand_keypoints_m=np.zeros((count, 21, 3), np.float32),
    )
    return OperatorStream(**(fields | overrides))


# --- generated streams --------------------------------------------------------------------------------------------


def test_generator_writes_every_stream_and_keeps_them_small(streams_dir):
    assert sorted(p.name for p in streams_dir.iterdir()) == sorted(EXPECTED_DURATION_S)
    total_bytes = sum(p.stat().st_size for p in streams_dir.iterdir())
    assert total_bytes < 1_000_000


def test_generator_is_deterministic(tmp_path, streams_dir, capsys):
    main(["--out", str(tmp_path)])
    printed = capsys.readouterr().out
    for name in STREAM_BUILDERS:
        assert (tmp_path / name).read_bytes() == (streams_dir / name).read_bytes()
        assert f"{tmp_path / name}:" in printed


@pytest.mark.parametrize("name", list(EXPECTED_DURATION_S))
def test_every_stream_loads_with_60hz_timestamps_and_valid_content(streams, name):
    stream = streams[name]
    assert stream.side == "right"
    assert stream.timestamps_ns[0] == 0 and set(np.diff(stream.timestamps_ns).tolist()) <= FRAME_NS
    assert stream.duration_s == pytest.approx(EXPECTED_DURATION_S[name], abs=1e-6)
    assert len(stream) == round(EXPECTED_DURATION_S[name] * 60) + 1
    assert stream.description
    angles = stream.canonical_angles()
    assert angles.shape == (len(stream), 20) and np.isfinite(angles).all()
    assert np.all(angles >= HUMAN_ANGLE_LIMITS_RAD[:, 0]) and np.all(angles <= HUMAN_ANGLE_LIMITS_RAD[:, 1])
    if stream.kind == "keypoints":
        validate_keypoints(stream.hand_keypoints_m)
        assert np.all(stream.hand_keypoints_m[:, 0] == 0.0)
    else:
        assert name.startswith("glove") and np.allclose(angles, glove_to_canonical(stream.glove_angles_deg, "right"))


def test_pinches_hold_each_fingertip_against_the_thumb(streams):
    stream = streams["pinches.npz"]
    keypoints = stream.hand_keypoints_m.astype(float)
    thumb_tip = keypoints[:, THUMB_TIP]
    pinch_starts = []
    for tip in FINGERTIP_INDICES[1:]:
        touching = np.linalg.norm(keypoints[:, tip] - thumb_tip, axis=1) < 0.005
        edges = np.flatnonzero(np.diff(np.r_[0, touching.astype(int), 0]))
        starts, ends = edges[::2], edges[1::2]
        assert len(starts) == 1, f"fingertip {tip}: expected one pinch, got {len(starts)}"
        assert (ends[0] - starts[0]) / 60 >= 0.5  # held for at least half a second
        others = [i for i in FINGERTIP_INDICES[1:] if i != tip]
        held = slice(starts[0], ends[0])
        assert np.all(np.linalg.norm(keypoints[held][:, others] - thumb_tip[held, None], axis=-1) > 0.015)
        pinch_starts.append(starts[0])
    assert pinch_starts == sorted(pinch_starts)  # index, middle, ring, pinky in turn


def test_open_close_makes_three_fists_with_a_still_wrist(streams):
    stream = streams["open_close.npz"]
    curl = stream.canonical_angles()[:, 4]  # index_mcp_flex
    closings = np.flatnonzero(np.diff((curl > 1.0).astype(int)) == 1)
    assert len(closings) == 3 and curl[0] < 0.2 and curl[-1] < 0.2
    assert np.ptp(stream.wrist_pose[:, :3], axis=0).max() < 0.002


def test_wrist_motion_traces_a_square_then_wobbles(streams):
    stream = streams["wrist_motion.npz"]
    travel = np.ptp(stream.wrist_pose[:, :3], axis=0)
    assert travel[0] < 0.002 and np.allclose(travel[1:], 0.06, atol=0.002)
    rotations = Rotation.from_quat(stream.wrist_pose[:, 3:])
    wobble_deg = np.degrees((rotations[0].inv() * rotations).magnitude())
    assert 14.0 < wobble_deg.max() < 22.0
    assert np.sum(stream.wrist_pose[1:, 3:] * stream.wrist_pose[:-1, 3:], axis=1).min() > 0.99  # no q -> -q jumps


def test_demo_grasp_reaches_grasps_lifts_and_returns(streams):
    stream = streams["demo_grasp.npz"]
    offset = stream.wrist_pose[:, :3] - stream.wrist_pose[0, :3]
    lifted = stream.index_at(4_400_000_000)
    assert offset[lifted] == pytest.approx([0.08, 0.0, 0.05], abs=0.002)
    assert np.abs(offset[-1]).max() < 0.002
    curl = stream.canonical_angles()[:, 4]
    assert curl[lifted] > 0.4 and curl[0] < 0.2 and curl[-1] < 0.2


# --- reader, writer, errors ---------------------------------------------------------------------------------------


def test_save_load_round_trip(tmp_path):
    stream = tiny_stream()
    stream.save(tmp_path / "s.npz")
    loaded = OperatorStream.load(tmp_path / "s.npz")
    assert (loaded.kind, loaded.side, loaded.description) == ("keypoints", "right", "test")
    assert np.array_equal(loaded.timestamps_ns, stream.timestamps_ns)
    assert np.array_equal(loaded.hand_keypoints_m, stream.hand_keypoints_m) and loaded.glove_angles_deg is None
    with np.load(tmp_path / "s.npz") as raw:  # a plain npz, readable without this package
        assert str(raw["format"]) == FORMAT


def test_index_at_boundaries():
    stream = tiny_stream(timestamps_ns=np.array([0, 10, 20, 30, 40], np.int64))
    assert stream.index_at(0) == 0
    assert stream.index_at(9) == 0
    assert stream.index_at(10) == 1
    assert stream.index_at(39) == 3
    assert stream.index_at(40) == 4
    assert stream.index_at(10**12) == 4
    assert (len(stream), stream.duration_s) == (5, 40e-9)
    with pytest.raises(ValueError, match=">= 0"):
        stream.index_at(-1)


def write_npz(path, stream, drop=(), **replace):
    arrays = stream._arrays() | replace
    np.savez(path, **{key: value for key, value in arrays.items() if key not in drop})
    return path


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (dict(format="teledex-operator-stream/2"), r"key 'format' is 'teledex-operator-stream/2'; this reader"),
        (dict(format="something-else/1"), r"key 'format' is 'something-else/1', not an operator stream"),
        (dict(drop=("wrist_pose",)), r"key 'wrist_pose' is missing"),
        (dict(drop=("hand_keypoints_m",)), r"key 'hand_keypoints_m' is missing"),
        (dict(drop=("format",)), r"key 'format' is missing"),
        (dict(kind="video"), r"key 'kind' is 'video'"),
        (dict(hand_keypoints_m=np.zeros((5, 20, 3), np.float32)), r"key 'hand_keypoints_m' has shape \(5, 20, 3\)"),
        (dict(hand_keypoints_m=np.zeros((5, 21, 3))), r"key 'hand_keypoints_m' has dtype float64, expected float32"),
        (dict(timestamps_ns=np.arange(5, dtype=np.float64)), r"key 'timestamps_ns' has dtype float64, expected int64"),
        (dict(timestamps_ns=np.array([0, 10, 10, 20, 30])), r"key 'timestamps_ns' is not strictly increasing"),
        (dict(timestamps_ns=np.array([5, 10, 20, 30, 40])), r"key 'timestamps_ns' starts at 5 ns, not 0"),
        (dict(wrist_pose=np.full((5, 7), np.nan)), r"key 'wrist_pose' contains NaN/inf"),
        (dict(wrist_pose=np.zeros((5, 7))), r"key 'wrist_pose' has a non-unit quaternion"),
        (dict(wrist_pose=np.zeros((4, 7))), r"key 'wrist_pose' has shape \(4, 7\), expected \(5, 7\)"),
    ],
)
def test_load_errors_name_the_file_key_and_fix(tmp_path, change, expected):
    drop = change.pop("drop", ())
    path = write_npz(tmp_path / "bad.npz", tiny_stream(), drop=drop, **change)
    with pytest.raises(ValueError, match=expected) as error:
        OperatorStream.load(path)
    assert str(error.value).startswith(str(path)) and "fix:" in str(error.value)


def test_load_rejects_what_is_not_a_stream_file(tmp_path):
    with pytest.raises(ValueError, match="missing.npz: not a file; fix:"):
        OperatorStream.load(tmp_path / "missing.npz")
    with pytest.raises(ValueError, match="not a file"):
        OperatorStream.load(tmp_path)
    (tmp_path / "text.npz").write_text("hello")
    with pytest.raises(ValueError, match=r"text.npz: not an .npz archive .*fix:"):
        OperatorStream.load(tmp_path / "text.npz")
    np.save(tmp_path / "array.npy", np.zeros(3))
    with pytest.raises(ValueError, match="single .npy array"):
        OperatorStream.load(tmp_path / "array.npy")
    np.savez(tmp_path / "objects.npz", format=np.array([{"a": 1}], dtype=object))
    with pytest.raises(ValueError, match="key 'format' holds Python objects"):
        OperatorStream.load(tmp_path / "objects.npz")


def test_in_memory_streams_are_validated_too():
    with pytest.raises(ValueError, match=r"^OperatorStream: key 'hand_keypoints_m' has dtype float64"):
        tiny_stream(hand_keypoints_m=np.zeros((5, 21, 3)))
    with pytest.raises(ValueError, match=r"key 'glove_angles_deg' is missing"):
        tiny_stream(kind="glove_angles")
    with pytest.raises(ValueError, match=r"key 'side' is 'up'"):
        tiny_stream(side="up")


def test_bracket_and_pose_interpolation():
    from scipy.spatial.transform import Rotation

    from teledex_lerobot.operator.stream import OperatorStream, interpolate_pose
    from teledex_lerobot.paths import STREAMS_DIR

    stream = OperatorStream.load(STREAMS_DIR / "wrist_motion.npz")
    t0, t1 = int(stream.timestamps_ns[10]), int(stream.timestamps_ns[11])
    assert stream.bracket(t0) == (10, 11, 0.0)
    i, j, weight = stream.bracket((t0 + t1) // 2)
    assert (i, j) == (10, 11) and weight == pytest.approx(0.5, abs=1e-6)
    assert stream.bracket(int(stream.timestamps_ns[-1]) + 10**9) == (len(stream) - 1, len(stream) - 1, 0.0)
    a = np.array([0.0, 0.0, 0.0, *Rotation.from_euler("z", 0.0).as_quat()])
    b = np.array([0.2, 0.0, 0.0, *(-Rotation.from_euler("z", 0.4).as_quat())])  # same rotation, other quaternion sign
    mid = interpolate_pose(a, b, 0.5)
    assert np.allclose(mid[:3], [0.1, 0, 0])
    assert Rotation.from_quat(mid[3:]).magnitude() == pytest.approx(0.2, abs=1e-3)
