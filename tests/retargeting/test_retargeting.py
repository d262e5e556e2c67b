"""The retargeting engine through its public API: accuracy, pinches, limits, bad input, any hand, calibration."""

import math

import numpy as np
import pytest

from teledex_lerobot.operator.hand_model import keypoints_from_angles
from teledex_lerobot.operator.keypoints import FINGERTIP_INDICES, THUMB_TIP
from teledex_lerobot.operator.stream import OperatorStream
from teledex_lerobot.paths import STREAMS_DIR
from teledex_lerobot.retargeting import HandCalibration, build_retargeter
from teledex_lerobot.retargeting.conventions import WEBXR25_INDEX_FOR_MEDIAPIPE21, to_internal

FIST_ANGLES_RAD = np.r_[0.1, 0.6, 0.55, 1.3, np.tile([1.45, 0.0, 1.7, 1.0], 4)]


def _keypoints(stream: str, every: int = 1) -> np.ndarray:
    return OperatorStream.load(STREAMS_DIR / f"{stream}.npz").hand_keypoints_m[::every].astype(float)


@pytest.fixture(scope="module")
def l20_teledex():
    return build_retargeter("linkerhand_l20", "teledex", "right")


def _tip_errors_m(retargeter, keypoints, joints):
    scale = np.mean(retargeter.calibration.segment_scales["middle"])
    tips = np.array([retargeter.fingertip_positions(q) for q in joints])
    return np.linalg.norm(tips - scale * keypoints[:, list(FINGERTIP_INDICES)], axis=-1)


def test_teledex_follows_the_fingertips_within_limits(l20_teledex):
    keypoints = _keypoints("open_close", every=2)
    l20_teledex.reset()
    joints, ok = l20_teledex.retarget_sequence(keypoints)
    assert ok.all() and joints.shape == (len(keypoints), len(l20_teledex.joint_names))
    assert np.all(joints >= l20_teledex.lower) and np.all(joints <= l20_teledex.upper)
    # 10.3 mm: the default smoothing (set for jerk on real motion) lags this fast synthetic close by ~2 mm
    assert _tip_errors_m(l20_teledex, keypoints, joints).mean() < 0.011


def test_teledex_closes_pinches(l20_teledex):
    keypoints = _keypoints("pinches", every=2)
    l20_teledex.reset()
    joints, _ = l20_teledex.retarget_sequence(keypoints)
    tips = np.array([l20_teledex.fingertip_positions(q) for q in joints])
    human_gap = np.linalg.norm(keypoints[:, list(FINGERTIP_INDICES[1:])] - keypoints[:, [THUMB_TIP]], axis=-1)
    robot_gap = np.linalg.norm(tips[:, 1:] - tips[:, :1], axis=-1)
    pinching = human_gap < 0.010
    assert pinching.sum() > 20
    assert np.mean(robot_gap[pinching] < 0.015) >= 0.9


@pytest.mark.parametrize("method", ["teledex", "dexpilot", "joint_mapping"])
@pytest.mark.parametrize("hand", ["linkerhand_o6", "linkerhand_l10", "linkerhand_l20"])
@pytest.mark.parametrize("side", ["right", "left"])
def test_every_method_hand_and_side_closes_the_fist(method, hand, side):
    retargeter = build_retargeter(hand, method, side)
    for alpha in np.linspace(0, 1, 30):  # a smooth closing motion (joint angles, so every bone keeps its length)
        q = retargeter.retarget(keypoints_from_angles(alpha * FIST_ANGLES_RAD, side))
    tips_open = retargeter.fingertip_positions(retargeter.reference_pose)
    tips_fist = retargeter.fingertip_positions(q)
    # the non-thumb fingertips curled toward the palm (+y) and back toward the wrist (-z)
    assert np.all(tips_fist[1:, 1] - tips_open[1:, 1] > 0.01)
    assert np.all(tips_fist[1:, 2] < tips_open[1:, 2] - 0.03)
    assert retargeter.failures.total() == 0


def test_bad_input_holds_the_last_target_and_counts(l20_teledex):
    l20_teledex.reset()
    good = _keypoints("open_close")[100]
    held = l20_teledex.retarget(good)
    bad_frames = {"non_finite_input": np.full((21, 3), np.nan), "bad_shape": np.zeros((20, 3)),
                  "hand_lost": None}
    before = l20_teledex.failures.copy()
    for reason, frame in bad_frames.items():
        inf_frame = good.copy()
        inf_frame[5, 1] = math.inf
        for bad in (frame, inf_frame) if reason == "non_finite_input" else (frame,):
            q = l20_teledex.retarget(bad)
            assert not l20_teledex.last_frame_ok
            assert np.array_equal(q, held)
    counted = l20_teledex.failures - before
    assert counted == {"non_finite_input": 2, "bad_shape": 1, "hand_lost": 1}
    l20_teledex.retarget(good)
    assert l20_teledex.last_frame_ok


def test_solver_failure_is_caught_and_counted():
    retargeter = build_retargeter("linkerhand_o6", "teledex", "right")
    good = keypoints_from_angles(np.zeros(20), "right")
    first = retargeter.retarget(good)

    def broken(*_):
        raise np.linalg.LinAlgError("singular")

    retargeter.engine.solve = broken
    assert np.array_equal(retargeter.retarget(good), first)
    assert retargeter.failures["solver_error"] == 1


def test_input_conventions_agree():
    keypoints = _keypoints("open_close")[150]
    openxr = np.zeros((26, 3))
    openxr[[1, 2, 3, 4, 5, 7, 8, 9, 10, 12, 13, 14, 15, 17, 18, 19, 20, 22, 23, 24, 25]] = keypoints
    webxr = np.zeros((25, 3))
    webxr[WEBXR25_INDEX_FOR_MEDIAPIPE21] = keypoints
    assert np.allclose(to_internal(openxr, "openxr26"), keypoints)
    assert np.allclose(to_internal(webxr, "webxr25"), keypoints)
    # "world": the same hand anywhere and turned any way comes back in the wrist frame
    rotation = np.linalg.qr(np.random.default_rng(1).normal(size=(3, 3)))[0]
    rotation *= np.linalg.det(rotation)
    world = keypoints @ rotation.T + [0.3, -0.1, 1.2]
    assert np.allclose(to_internal(world, frame="world"), to_internal(keypoints, frame="world"), atol=1e-9)
    with pytest.raises(ValueError, match="openxr26 keypoints must have shape"):
        to_internal(keypoints, "openxr26")


def test_unknown_config_key_is_rejected():
    with pytest.raises(ValueError, match=r"retargeting config: `teledex`: The fields `alpha_align` are not valid"):
        build_retargeter("linkerhand_o6", "teledex", "right", config={"teledex": {"alpha_align": 2.0}})
    with pytest.raises(ValueError, match=r"`hand_scale`: .*Couldn't parse 'large'"):
        build_retargeter("linkerhand_o6", "teledex", "right", config={"hand_scale": "large"})
    with pytest.raises(ValueError, match="unknown retargeting method"):
        build_retargeter("linkerhand_o6", "position", "right")


def test_calibration_round_trip_and_effect(tmp_path):
    from teledex_lerobot.retargeting import calibrate
    from teledex_lerobot.retargeting.keypoint_kinematics import KeypointKinematics

    retargeter = build_retargeter("linkerhand_l20", "teledex", "right")
    big_hand = 1.15 * np.concatenate([_keypoints("open_close"), _keypoints("pinches")])
    flat = 1.15 * keypoints_from_angles(np.zeros(20), "right")
    kinematics = KeypointKinematics(retargeter.model, retargeter.layout.keypoint_frames,
                                    retargeter.layout)
    calibration = calibrate(retargeter.layout, kinematics, retargeter.reference_pose, flat[None], big_hand,
                            operator="tester", hand="linkerhand_l20", side="right")
    # a 15 % bigger operator gets 15 % smaller segment scales, and the calibration pose maps onto the robot exactly
    default = retargeter.calibration
    assert np.allclose(np.array(calibration.segment_scales["index"]) * 1.15,
                       default.segment_scales["index"], rtol=1e-6)
    low, high = calibration.pinch_distance_range_m["index"]
    assert low < 0.01 < 0.08 < high
    path = tmp_path / "tester.yaml"
    calibration.save(path)
    loaded = HandCalibration.load(path)
    assert loaded == calibration
    calibrated = build_retargeter("linkerhand_l20", "teledex", "right", calibration=path)
    target = calibrated.engine.target_points(flat)
    robot = kinematics.positions(retargeter.reference_pose)
    # straight fingers on both hands: the whole finger lands on the robot's; the thumb at least at its root
    thumb_count = len(retargeter.layout.fingers[0].frames)
    assert np.allclose(target[thumb_count:], robot[thumb_count:], atol=1e-6)
    assert np.allclose(target[0], robot[0], atol=1e-9)


def test_default_config_file_matches_the_code_defaults():
    from teledex_lerobot.paths import CONFIGS_DIR
    from teledex_lerobot.retargeting import RetargetingConfig

    assert RetargetingConfig.load(CONFIGS_DIR / "retargeting" / "default.yaml") == RetargetingConfig()
    assert RetargetingConfig.load("default") == RetargetingConfig()  # by name, from configs/retargeting/


def test_a_partial_section_keeps_the_other_defaults():
    from teledex_lerobot.retargeting import RetargetingConfig

    config = RetargetingConfig.load({"teledex": {"keypoint_weights": {"tip": 2.0}}, "low_pass_order": 3})
    assert config.teledex.keypoint_weights.tip == 2.0 and config.teledex.keypoint_weights.dip == 0.2
    assert config.teledex.smoothness_weight == RetargetingConfig().teledex.smoothness_weight
    with pytest.raises(ValueError, match="low_pass_order must be >= 1"):
        RetargetingConfig.load({"low_pass_order": 0})


def test_bad_retargeting_settings_and_joint_maps_are_config_errors(tmp_path):
    """A value the user wrote (a retargeting config, a joint map file) is refused as a ConfigError naming it."""
    from teledex_lerobot.errors import ConfigError
    from teledex_lerobot.retargeting import RetargetingConfig
    from teledex_lerobot.retargeting.joint_mapping import load_joint_map

    with pytest.raises(ConfigError, match="solver.max_iterations must be at least 1"):
        RetargetingConfig.load({"solver": {"max_iterations": 0}})
    with pytest.raises(ConfigError, match="input_convention: unknown keypoint convention 'kinect'"):
        RetargetingConfig.load({"input_convention": "kinect"})
    path = tmp_path / "map.yaml"
    for entry, problem in (("{from: {index_mcp_flex: 1.0}, human_range_rad: [0.0]}", "human_range_rad: must be"),
                           ("{from: index_mcp_flex, human_range_rad: [0.0, 1.0]}", "needs 'from' \\(a mapping"),
                           ("{from: {index_mcp_flex: x}, human_range_rad: [0.0, 1.0]}", "from.index_mcp_flex: must")):
        path.write_text(f"j: {entry}\n")
        with pytest.raises(ConfigError, match=problem):
            load_joint_map(path, ["j"], np.zeros(1), np.ones(1))
    path.write_text("j: [unclosed\n")
    with pytest.raises(ConfigError, match="Cannot read joint map"):
        load_joint_map(path, ["j"], np.zeros(1), np.ones(1))


def test_output_filter_order_one_is_the_exponential_filter_and_stages_do_not_overshoot():
    from teledex_lerobot.retargeting.output_filter import CascadedLowPass

    step = np.r_[0.0, np.ones(40)][:, None]
    one, expected = CascadedLowPass(0.2, 1), 0.0
    assert one(step[0])[0] == 0.0  # the first frame sets the filter
    for x in step[1:]:
        expected += 0.2 * (1.0 - expected)
        assert one(x)[0] == pytest.approx(expected)
    three = CascadedLowPass(0.55, 3)
    response = np.array([three(x)[0] for x in step])
    assert np.all(np.diff(response) >= 0) and response.max() <= 1.0  # critically damped: no overshoot
    assert response[-1] == pytest.approx(1.0, abs=1e-6)


def test_the_output_filter_acts_on_the_output_only_and_restarts_on_reset():
    from teledex_lerobot.retargeting.output_filter import CascadedLowPass

    frames = _keypoints("open_close", every=2)[:60]
    raw = build_retargeter("linkerhand_l20", "teledex", "right").retarget_sequence(frames)[0]
    filtered = build_retargeter("linkerhand_l20", "teledex", "right", {"low_pass_alpha": 0.5, "low_pass_order": 2})
    reference = CascadedLowPass(0.5, 2)
    # the same solutions (the warm start is the unfiltered one), then filtered
    np.testing.assert_allclose(filtered.retarget_sequence(frames)[0], [reference(q) for q in raw], atol=1e-9)
    filtered.reset()
    fresh = build_retargeter("linkerhand_l20", "teledex", "right").retarget(frames[30])
    np.testing.assert_allclose(filtered.retarget(frames[30]), fresh, atol=1e-9)  # no memory of the run before


def test_dexpilot_tied_joints_move_together():
    config = {"dexpilot": {"tied_joints": {"index_dip": "index_mcp_pitch"}}}
    retargeter = build_retargeter("linkerhand_l20", "dexpilot", "right", config)
    for alpha in np.linspace(0, 1, 20):
        q = retargeter.retarget(keypoints_from_angles(alpha * FIST_ANGLES_RAD, "right"))
    names = retargeter.joint_names
    assert q[names.index("index_dip")] == q[names.index("index_mcp_pitch")] > 0.3
    assert retargeter.failures.total() == 0


@pytest.mark.parametrize("hand", ["linkerhand_o6", "linkerhand_l20"])
def test_a_warm_started_frame_reuses_the_last_frames_linearisation(hand):
    """The kinematics of the last frame's final linearisation do not depend on the targets, so the next frame starts
    from them: at most two kinematics passes per warm-started frame (three linearisations), one when the first step
    is already below the step tolerance. The basin check's extra solve is off here; the first frame makes three."""
    frames = OperatorStream.load(STREAMS_DIR / "pinches.npz").hand_keypoints_m[::3].astype(float)
    retargeter = build_retargeter(hand, "teledex", "right", {"basin_check_period": 0})
    kinematics = retargeter.engine.solver.kinematics
    passes, evaluate = [0], kinematics.evaluate

    def counted(*args, **kwargs):
        passes[0] += 1
        return evaluate(*args, **kwargs)

    kinematics.evaluate = counted
    per_frame = []
    for frame in frames:
        before = passes[0]
        retargeter.retarget(frame)
        per_frame.append(passes[0] - before)
    assert per_frame[0] == 3
    assert max(per_frame[1:]) <= 2 and np.mean(per_frame[1:]) < 1.6, np.bincount(per_frame[1:])
