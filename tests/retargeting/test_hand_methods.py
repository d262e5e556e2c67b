"""Every hand method through one HandRetargeter (control/strategy.py only chooses and routes): the joint map and the
analog grasps give what they gave when the strategy applied them itself, and a glove's or a grip's bad input is held
and counted like bad keypoints."""

import logging

import numpy as np
import pytest

from teledex_lerobot.control.config import ControlConfig
from teledex_lerobot.control.hand_grasps import GRASP_SHAPES, hand_shape, mirrored_joints
from teledex_lerobot.control.strategy import RigStrategy
from teledex_lerobot.inputs.frame import OperatorFrame
from teledex_lerobot.operator.hand_model import HUMAN_ANGLE_LIMITS_RAD, angles_from_keypoints, keypoints_from_angles
from teledex_lerobot.operator.keypoints import CANONICAL_ANGLE_NAMES
from teledex_lerobot.operator.poses import FIST, OPEN_HAND, POWER_GRASP, RELAXED_HAND
from teledex_lerobot.presets import PartSpec
from teledex_lerobot.retargeting import HandCalibration, build_retargeter
from teledex_lerobot.retargeting.joint_mapping import joint_map_path, load_joint_map, with_operator_ranges
from teledex_lerobot.rig import Rig

HANDS = ("linkerhand_o6", "linkerhand_l10", "linkerhand_l20")
LOW, HIGH = HUMAN_ANGLE_LIMITS_RAD.T
ANGLES = [OPEN_HAND, FIST, RELAXED_HAND, POWER_GRASP,
          *(LOW + np.random.default_rng(7).random((4, 20)) * (HIGH - LOW))]


def hand_rig(model: str, side: str) -> Rig:
    return Rig.from_parts(None, PartSpec(model, side))


def glove_strategy(rig: Rig, side: str, calibration: str = "") -> RigStrategy:
    return RigStrategy(rig, ControlConfig.load({"strategy": {"strategy": "direct", "hand_method": "joint_mapping",
                                                             "side": side, "hand_calibration": calibration}}).strategy)


def analog_strategy(rig: Rig, side: str) -> RigStrategy:
    return RigStrategy(rig, ControlConfig.load(
        {"strategy": {"hand_method": "analog", "side": side, "hand_analog_input": "grip", "grasp_select_input": "click",
                      "hand_grasps": ["fist", "level_pinch", "side_wrap"]}}).strategy)


def hand_target(strategy: RigStrategy, rig: Rig, **frame) -> np.ndarray:
    return strategy.targets(OperatorFrame(0, **frame), {"hand": rig.parts["hand"].home})["hand"]


@pytest.fixture(scope="module")
def operator_calibration(tmp_path_factory) -> str:
    """An operator's own angle ranges (all joint mapping reads of a calibration)."""
    ranges = {name: [float(LOW[i] + 0.1 * (HIGH[i] - LOW[i])), float(HIGH[i] - 0.2 * (HIGH[i] - LOW[i]))]
              for i, name in enumerate(CANONICAL_ANGLE_NAMES)}
    path = tmp_path_factory.mktemp("calibration") / "op.yaml"
    HandCalibration("op", "any", "right", {}, {}, {}, ranges).save(path)
    return str(path)


@pytest.mark.parametrize("model", HANDS)
@pytest.mark.parametrize("hand_side, operator_side", [("right", "right"), ("left", "left"), ("left", "right")])
@pytest.mark.parametrize("calibrated", [False, True])
def test_joint_mapping_gives_the_joint_maps_targets(model, hand_side, operator_side, calibrated, operator_calibration):
    """The map of the robot hand's model and side (not the operator's), over the operator's ranges when calibrated:
    the default calibration (no operator's) leaves the map's own ranges."""
    rig = hand_rig(model, hand_side)
    hand = rig.parts["hand"]
    strategy = glove_strategy(rig, operator_side, operator_calibration if calibrated else "")
    expected = load_joint_map(joint_map_path(model, hand_side), hand.joints, hand.lower, hand.upper)
    if calibrated:
        expected = with_operator_ranges(expected,
                                        HandCalibration.load(operator_calibration).canonical_angle_ranges_rad)
    for angles in ANGLES:
        assert np.array_equal(hand_target(strategy, rig, hand_angles_rad={operator_side: angles}), expected(angles))
        keypoints = keypoints_from_angles(angles, operator_side)
        assert np.array_equal(hand_target(strategy, rig, hand_keypoints_m={operator_side: keypoints}),
                              expected(angles_from_keypoints(keypoints, operator_side)))
    assert strategy.hand_retargeter.failures.total() == 0


@pytest.mark.parametrize("model", HANDS)
@pytest.mark.parametrize("side", ["right", "left"])
def test_analog_closes_along_the_same_grasps(model, side):
    """Open .. fist through the joint map, then each measured grasp from its preshape to closed."""
    rig = hand_rig(model, side)
    hand = rig.parts["hand"]
    strategy = analog_strategy(rig, side)
    joint_map = load_joint_map(joint_map_path(model, side), hand.joints, hand.lower, hand.upper)
    closures = np.linspace(0.0, 1.0, 5)
    for closure in closures:
        assert np.array_equal(hand_target(strategy, rig, analog={"grip": closure}),
                              joint_map(OPEN_HAND + closure * (FIST - OPEN_HAND)))
    for name in ("level_pinch", "side_wrap"):
        hand_target(strategy, rig, analog={"grip": 0.0}, buttons={"click": True})
        assert strategy.grasps.name == name
        shape = GRASP_SHAPES[model][name]
        mirrored = mirrored_joints(model, side)  # a left hand's thumb roll and spreads turn the other way
        start, end = (hand_shape(hand.joints, q, hand.lower, hand.upper, mirrored)
                      for q in (shape.preshape, shape.closed))
        for closure in closures:  # closing only: a hold opening reads the measured hand
            assert np.array_equal(hand_target(strategy, rig, analog={"grip": closure}), start + closure * (end - start))
        hand_target(strategy, rig, analog={"grip": 0.0})
    assert strategy.hand_retargeter.failures.total() == 0


def held_and_counted(strategy: RigStrategy, rig: Rig, bad_frames: dict, good: np.ndarray, caplog) -> dict:
    """Feed each bad frame; every one must give the last good target. The failures counted, by reason."""
    before = strategy.hand_retargeter.failures.copy()
    with caplog.at_level(logging.WARNING):
        for frame in bad_frames.values():
            target = hand_target(strategy, rig, **frame)
            assert np.array_equal(target, good) and not strategy.hand_retargeter.last_frame_ok
    return dict(strategy.hand_retargeter.failures - before)


def test_a_gloves_bad_angles_are_held_and_counted(caplog):
    """Before: NaN angles became NaN targets for every joint, and a wrong length raised out of the control loop."""
    rig = hand_rig("linkerhand_o6", "right")
    strategy = glove_strategy(rig, "right")
    good = hand_target(strategy, rig, hand_angles_rad={"right": RELAXED_HAND})
    nan, degrees = RELAXED_HAND.copy(), np.degrees(RELAXED_HAND)
    nan[5] = np.nan
    bad = {"nan": {"hand_angles_rad": {"right": nan}},
           "19": {"hand_angles_rad": {"right": RELAXED_HAND[:19]}},
           "21": {"hand_angles_rad": {"right": np.r_[RELAXED_HAND, 0.0]}},
           "degrees": {"hand_angles_rad": {"right": degrees}},
           "zeros": {"hand_keypoints_m": {"right": np.zeros((21, 3))}}}  # keypoints: the same retargeter's checks
    counted = held_and_counted(strategy, rig, bad, good, caplog)
    assert counted == {"non_finite_input": 1, "bad_shape": 2, "implausible_angles": 1, "implausible_hand_size": 1}
    assert sum("bad_shape" in record.message for record in caplog.records) == 1  # warned once per reason
    assert np.array_equal(hand_target(strategy, rig, hand_angles_rad={"right": FIST}),
                          strategy.hand_retargeter.engine.map_angles(FIST))  # and the next good frame is followed
    assert strategy.hand_retargeter.last_frame_ok


def test_a_bad_grip_is_held_and_counted(caplog):
    """Before: a NaN grip became NaN targets, 7.0 closed the hand fully and -3 opened it."""
    rig = hand_rig("linkerhand_o6", "right")
    strategy = analog_strategy(rig, "right")
    good = hand_target(strategy, rig, analog={"grip": 0.4})
    bad = {"nan": {"analog": {"grip": float("nan")}}, "7": {"analog": {"grip": 7.0}},
           "-3": {"analog": {"grip": -3.0}}, "inf": {"analog": {"grip": float("inf")}}}
    counted = held_and_counted(strategy, rig, bad, good, caplog)
    assert counted == {"non_finite_input": 2, "implausible_closure": 2}
    assert sum("implausible_closure" in record.message for record in caplog.records) == 1
    # a hair beyond 1 is rounding: the closed hand
    assert np.array_equal(hand_target(strategy, rig, analog={"grip": 1.005}), hand_target(strategy, rig,
                                                                                        analog={"grip": 1.0}))


def test_the_held_thumb_post_stays_inside_the_joint_limits():
    """Letting go of a pinch holds the post where it is measured; a measurement beyond a limit is not a target."""
    rig = hand_rig("linkerhand_o6", "right")
    hand = rig.parts["hand"]
    strategy = analog_strategy(rig, "right")
    hand_target(strategy, rig, analog={"grip": 0.0}, buttons={"click": True})  # the level pinch
    closed = hand_target(strategy, rig, analog={"grip": 1.0})
    beyond = hand.upper + 0.1
    opening = strategy.targets(OperatorFrame(0, analog={"grip": 0.8}), {"hand": closed},
                               measured=lambda: {"hand": beyond})["hand"]
    yaw = hand.joints.index("thumb_cmc_yaw")  # the post: at its upper limit in the level pinch
    assert opening[yaw] == hand.upper[yaw] and np.all(opening <= hand.upper) and np.all(opening >= hand.lower)


def test_an_input_the_method_does_not_take_is_a_programming_error():
    with pytest.raises(TypeError, match="'teledex' retargeting takes no angles"):
        build_retargeter("linkerhand_o6", "teledex").retarget_angles(RELAXED_HAND)
    with pytest.raises(TypeError, match="'analog' retargeting takes no keypoints"):
        build_retargeter("linkerhand_o6", "analog").retarget(keypoints_from_angles(RELAXED_HAND, "right"))
