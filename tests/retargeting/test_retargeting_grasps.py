"""A person's hand grasps with the robot: the human hand model's pinch and wrap (operator/object_grasps.py), the
retargeter's grasp anchors that turn them into the world's measured grasps (retargeting/grasp_anchors.py), the
operator's calibration that stretches their range of motion onto the robot's (coverage), and the keypoint route in
the world: a person's hand, never fitted through the retargeter, assembles the cube and inserts the bottle."""

import copy
import dataclasses

import numpy as np
import pytest
import reference_assets

from teledex_lerobot.control.config import ControlConfig
from teledex_lerobot.control.hand_grasps import GRASP_SHAPES, grasp_anchors, hand_shape
from teledex_lerobot.control.strategy import RigStrategy
from teledex_lerobot.operator.hand_model import HUMAN_ANGLE_LIMITS_RAD, keypoints_from_angles
from teledex_lerobot.operator.keypoints import FINGER_CHAINS, THUMB_TIP
from teledex_lerobot.operator.object_grasps import human_grasps, pinch_pose, wrap_pose
from teledex_lerobot.operator.poses import OPEN_HAND
from teledex_lerobot.operator.stream import OperatorStream
from teledex_lerobot.paths import CONFIGS_DIR
from teledex_lerobot.presets import load_preset
from teledex_lerobot.retargeting import HandCalibration, HandRetargeter, RetargetingConfig, build_retargeter
from teledex_lerobot.rig import Rig
from teledex_lerobot.world.episode import EpisodeOutcome, control_tick
from teledex_lerobot.world.expert import ScriptedExpert
from teledex_lerobot.world.operator_expert import OperatorExpert
from teledex_lerobot.world.world import World, WorldConfig

PERSON = human_grasps()


def within_human_limits(angles) -> bool:
    return bool(np.all(angles >= HUMAN_ANGLE_LIMITS_RAD[:, 0] - 1e-9)
                and np.all(angles <= HUMAN_ANGLE_LIMITS_RAD[:, 1] + 1e-9))


@pytest.mark.parametrize("gap_m", [0.08, 0.05, 0.02])
def test_the_pinch_puts_the_thumb_tip_at_the_gap_from_the_index_and_middle_tips(gap_m):
    angles = pinch_pose(gap_m)
    points = keypoints_from_angles(angles, "right")
    for finger in ("index", "middle"):
        assert np.linalg.norm(points[FINGER_CHAINS[finger][-1]] - points[THUMB_TIP]) == pytest.approx(gap_m, abs=2e-3)
    assert within_human_limits(angles)


def test_the_wrap_lays_the_fingers_and_the_thumb_on_the_cylinder_and_a_size_out_of_reach_is_refused():
    closed = keypoints_from_angles(wrap_pose(0.04), "right")
    tips = [FINGER_CHAINS[finger][-1] for finger in FINGER_CHAINS]
    # round a cylinder across the palm: every fingertip in front of the palm, the thumb's on the other face from
    # the fingers' (it closes the ring)
    assert (closed[tips, 1] > 0.02).all()
    finger_radius_m = 0.009
    assert np.linalg.norm(closed[THUMB_TIP] - closed[FINGER_CHAINS["middle"][-1]]) > 0.04 + 2 * finger_radius_m
    assert within_human_limits(wrap_pose(0.04)) and within_human_limits(wrap_pose(0.10))
    with pytest.raises(ValueError, match="cannot make a wrap round 300 mm.*choose a size the hand spans"):
        wrap_pose(0.30)


def o6_retargeter(anchored: bool = True) -> tuple[HandRetargeter, list[str]]:
    rig = Rig.from_preset(load_preset("piper_linkerhand_o6_single"))
    strategy = RigStrategy(rig, ControlConfig.load("world_expert_keypoints").strategy)
    retargeter = strategy.hand_retargeter
    if not anchored:
        retargeter = HandRetargeter(retargeter.model, "teledex", "right", retargeter.config)
    return retargeter, retargeter.joint_names


def person_pinch(closure: float, scale: float = 1.0, seed: int = 0) -> np.ndarray:
    """A person's pinch: their own hand size and a habitual offset of every joint (0.05 rad), and 1 mm of jitter."""
    rng = np.random.default_rng(seed)
    angles = np.clip(PERSON["pinch"].at(closure) + rng.normal(0, 0.05, 20), *HUMAN_ANGLE_LIMITS_RAD.T)
    return keypoints_from_angles(angles, "right", scale) + rng.normal(0, 0.001, (21, 3))


def test_a_persons_pinch_makes_the_measured_level_pinch_and_an_open_hand_is_retargeted_as_before():
    anchored, joints = o6_retargeter()
    plain, _ = o6_retargeter(anchored=False)
    shape = GRASP_SHAPES["linkerhand_o6"]["level_pinch"]
    preshape = hand_shape(joints, shape.preshape, anchored.lower, anchored.upper)
    closed = hand_shape(joints, shape.closed, anchored.lower, anchored.upper)
    yaw = joints.index("thumb_cmc_yaw")
    for scale, seed in ((0.92, 1), (1.0, 2), (1.08, 3)):
        anchored.reset()
        plain.reset()
        opened, squeezed = person_pinch(0.0, scale, seed), person_pinch(1.0, scale, seed)
        # without anchors the thumb is nowhere near the post the pinch needs (1.36) when the hand is shaped
        assert plain.retarget(opened)[yaw] < 1.0
        assert np.abs(anchored.retarget(opened) - preshape).max() < 0.15
        assert anchored.grasp_match.name == "level_pinch" and anchored.grasp_match.weight > 0.8
        assert np.abs(anchored.retarget(squeezed) - closed).max() < 0.15
    anchored.reset()
    plain.reset()
    open_hand = keypoints_from_angles(OPEN_HAND, "right")
    assert np.array_equal(anchored.retarget(open_hand), plain.retarget(open_hand))
    assert anchored.grasp_match is None


def test_letting_go_of_a_pinch_holds_the_thumb_post_where_it_is_measured():
    retargeter, joints = o6_retargeter()
    yaw = joints.index("thumb_cmc_yaw")
    measured = retargeter.retarget(person_pinch(1.0)).copy()
    measured[yaw] = 1.26  # the post deflected 0.1 rad by the object it holds
    opening = retargeter.retarget(person_pinch(0.4), lambda: measured)
    assert opening[yaw] == pytest.approx(1.26, abs=0.02)  # held where measured: it cannot spring into the object
    assert retargeter.retarget(person_pinch(1.0), lambda: measured)[yaw] == pytest.approx(1.36, abs=0.02)


def test_anchors_only_where_the_hand_has_measured_grasps():
    rig = Rig.from_preset(load_preset("piper_linkerhand_o6_single"))
    hand = rig.parts["hand"]
    args = (hand.model.joint_names, hand.model.lower, hand.model.upper, "right", RetargetingConfig().grasp_anchors)
    assert grasp_anchors(["fist"], "linkerhand_o6", *args) is None
    assert grasp_anchors(["level_pinch"], "my_urdf_hand", *args) is None
    assert list(grasp_anchors(["level_pinch", "side_wrap"], "linkerhand_o6", *args).robot_paths) == [
        "level_pinch", "side_wrap"]
    with pytest.raises(ValueError, match="grasp anchors act on keypoint retargeting"):
        HandRetargeter(hand.model, "joint_mapping", "right", RetargetingConfig(),
                       anchors=grasp_anchors(["level_pinch"], "linkerhand_o6", *args))


# ---- coverage ------------------------------------------------------------------------------------------------------

def coverage(retargeter: HandRetargeter, keypoints) -> np.ndarray:
    retargeter.reset()
    joints, ok = retargeter.retarget_sequence(keypoints)
    low, high = np.percentile(joints[ok], (2, 98), axis=0)
    return (high - low) / (retargeter.upper - retargeter.lower)


def test_calibrating_on_an_open_close_session_stretches_the_o6_thumb_yaw_over_its_range(tmp_path):
    """The open/close stream moves the O6's thumb yaw over 0.02-0.90 of 0-1.36 rad through TeleDex: after the
    calibration (the session's joint ranges, as teledex-calibrate-hand writes them) the same motion covers it."""
    session = OperatorStream.load(CONFIGS_DIR / "streams" / "open_close.npz").hand_keypoints_m
    plain = build_retargeter("linkerhand_o6", "teledex", "right")
    yaw = plain.joint_names.index("thumb_cmc_yaw")
    before = coverage(plain, session)
    assert before[yaw] < 0.7
    calibration = plain.calibration
    calibration.joint_ranges_rad = plain.joint_ranges(session)
    calibration.save(tmp_path / "alice.yaml")
    calibrated = build_retargeter("linkerhand_o6", "teledex", "right", calibration=tmp_path / "alice.yaml")
    after = coverage(calibrated, session)
    assert after[yaw] >= 0.95
    # the session's own extremes beyond its 2nd-98th percentiles widen the range they are stretched from
    assert (after >= before - 1e-9).all() and (after >= 0.9).all()


def test_motion_beyond_the_calibration_sessions_range_is_never_clipped_and_reaches_at_least_as_far():
    """Calibrated on the closed half of the open/close stream, then used on its open half: motion the session never
    made. Stretched from a fixed range, that motion fell below the range and was clipped at the limit (the O6's
    thumb yaw and four fingers did not move at all: 0 % of their range, 19-36 % without the stretch); now the range
    widens to it, so every joint reaches at least as far as without the stretch, and no output step is larger than
    the session's stretch makes the solve's (the widening moves no joint by itself)."""
    stream = OperatorStream.load(CONFIGS_DIR / "streams" / "open_close.npz").hand_keypoints_m
    plain = build_retargeter("linkerhand_o6", "teledex", "right")
    solved, ok = plain.retarget_sequence(stream)
    closure = solved[:, plain.joint_names.index("index_mcp_pitch")]
    closed = ok & (closure >= np.median(closure[ok]))
    session, held_out = stream[closed], stream[~closed]
    ranges = plain.joint_ranges(session)
    calibration = dataclasses.replace(plain.calibration, joint_ranges_rad=ranges)
    calibrated = build_retargeter("linkerhand_o6", "teledex", "right", calibration=calibration)
    unstretched, stretched = coverage(plain, held_out), coverage(calibrated, held_out)
    assert (stretched >= unstretched - 1e-9).all(), (unstretched, stretched)
    slope = (plain.upper - plain.lower) / np.array([ranges[joint][1] - ranges[joint][0] for joint in plain.joint_names])
    calibrated.reset()
    plain.reset()
    steps = np.abs(np.diff(calibrated.retarget_sequence(held_out)[0], axis=0)).max(axis=0)
    plain_steps = np.abs(np.diff(plain.retarget_sequence(held_out)[0], axis=0)).max(axis=0)
    assert (steps <= slope * plain_steps + 1e-6).all(), (steps, slope * plain_steps)


def test_a_joint_locked_by_its_limits_stays_finite_under_a_calibration_with_ranges():
    """A file may lock a joint (lower == upper); the calibration's ranges name the others. The locked joint is left
    as solved: it used to be stretched from its limits onto its limits, 0/0, and every output was NaN."""
    plain = build_retargeter("linkerhand_o6", "teledex", "right")
    locked = plain.joint_names.index("ring_mcp_pitch")
    model = copy.deepcopy(plain.model)
    model.upper[locked] = model.lower[locked]
    calibration = dataclasses.replace(plain.calibration, joint_ranges_rad={"thumb_cmc_yaw": [0.1, 0.8]})
    retargeter = HandRetargeter(model, "teledex", "right", plain.config, calibration)
    session = OperatorStream.load(CONFIGS_DIR / "streams" / "open_close.npz").hand_keypoints_m
    joints = np.array([retargeter.retarget(frame) for frame in session[::10]])
    assert np.isfinite(joints).all() and retargeter.last_frame_ok
    assert np.all(joints[:, locked] == model.lower[locked])


def test_joint_ranges_for_another_hand_are_refused_with_the_fix():
    calibration = build_retargeter("linkerhand_o6", "teledex", "right").calibration
    calibration.joint_ranges_rad = {"thumb_cmc_roll": [0.0, 1.0]}
    with pytest.raises(ValueError, match=r"thumb_cmc_roll.*re-run teledex-calibrate-hand"):
        build_retargeter("linkerhand_o6", "teledex", "right", calibration=calibration)


@pytest.mark.skipif(not reference_assets.available(), reason=reference_assets.MISSING)
def test_on_real_motion_the_calibration_reaches_the_thumbs_range_on_motion_it_never_saw():
    """dex-retargeting's recorded hand: calibrated on its first half, measured on its second. The L10's thumb yaw
    and roll (59 % and 75 % of their range before) and the L20's thumb roll (59 %) reach >= 90 % (the average
    hand's calibration with the session's joint ranges; benchmarks/retargeting_coverage.py has every joint)."""
    motion = reference_assets.human_recording() @ reference_assets.DEX_TO_OURS.T
    session, held_out = motion[:310], motion[310:]
    for hand, joints in (("linkerhand_l10", ("thumb_cmc_yaw", "thumb_cmc_roll")), ("linkerhand_l20",
                                                                                 ("thumb_cmc_roll",))):
        plain = build_retargeter(hand, "teledex", "right")
        calibration = HandCalibration(**{**vars(plain.calibration),
                                         "joint_ranges_rad": plain.joint_ranges(session)})
        calibrated = build_retargeter(hand, "teledex", "right", calibration=calibration)
        before, after = coverage(plain, held_out), coverage(calibrated, held_out)
        for joint in joints:
            index = plain.joint_names.index(joint)
            assert before[index] < 0.8 and after[index] >= 0.9, (hand, joint, before[index], after[index])


# ---- the world ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("task", "seeds"), [("cube_assembly", (0, 7)), ("bottle_peg_in_hole", (0,))])
def test_the_keypoint_route_with_a_persons_hand_solves_the_task(task, seeds):
    """The person's hand (human hand model, a different person per seed) through the keypoint parser, TeleDex with
    the grasp anchors and the control chain: the half cube is pinched, lifted, placed and let go."""
    rig = Rig.from_preset(load_preset("piper_linkerhand_o6_single"))
    world = World(rig, WorldConfig(task=task))
    person = OperatorExpert(rig, ScriptedExpert(rig, task))
    for seed in seeds:
        world.reset(seed)
        person.reset(world)
        outcome = EpisodeOutcome(world)
        matched = set()
        for _ in range(int(world.task.episode_s * 25)):
            control_tick(world, person.act(world), 25)
            match = person.controller.strategy.hand_retargeter.grasp_match
            matched.add(None if match is None else match.name)
            if outcome.update():
                break
        assert outcome.stage == "success", (seed, outcome.as_dict())
        assert {"level_pinch" if task == "cube_assembly" else "side_wrap"} <= matched
