"""Operator hand model, keypoint conventions, glove mapping and pinch poses."""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from teledex_lerobot.operator.glove import (
    GLOVE_SLOT_NAMES,
    MEASURED_GLOVE_SLOTS,
    UNMEASURED_CANONICAL_ANGLES,
    canonical_to_glove,
    glove_parameter_names,
    glove_to_canonical,
)
from teledex_lerobot.operator.hand_model import (
    AVERAGE_ADULT_HAND,
    HUMAN_ANGLE_LIMITS_RAD,
    HandGeometry,
    angles_from_keypoints,
    keypoints_from_angles,
    keypoints_in_wrist_frame,
)
from teledex_lerobot.operator.keypoints import (
    CANONICAL_ANGLE_NAMES,
    FINGER_CHAINS,
    FINGERTIP_INDICES,
    KEYPOINT_NAMES,
    THUMB_TIP,
    mediapipe_from_openxr,
    validate_keypoints,
)
from teledex_lerobot.operator.poses import FIST, OPEN_HAND, POWER_GRASP, RELAXED_HAND, solve_pinch

LOWER, UPPER = HUMAN_ANGLE_LIMITS_RAD.T
ANGLE = {name: i for i, name in enumerate(CANONICAL_ANGLE_NAMES)}


def random_angles(rng, count):
    return rng.uniform(LOWER, UPPER, size=(count, len(CANONICAL_ANGLE_NAMES)))


def with_angle(name, value, base=None):
    angles = np.zeros(20) if base is None else np.array(base, dtype=float)
    angles[ANGLE[name]] = value
    return angles


def within_limits(angles):
    return np.all(angles >= LOWER - 1e-12) and np.all(angles <= UPPER + 1e-12)


# --- conventions --------------------------------------------------------------------------------------------------


def test_name_lists_and_chains_are_consistent():
    assert len(KEYPOINT_NAMES) == 21 and KEYPOINT_NAMES[0] == "wrist"
    assert FINGERTIP_INDICES == (4, 8, 12, 16, 20)
    assert FINGER_CHAINS["index"] == (5, 6, 7, 8) and FINGER_CHAINS["thumb"] == (1, 2, 3, 4)
    assert [KEYPOINT_NAMES[i] for i in FINGERTIP_INDICES] == [f"{f}_tip" for f in FINGER_CHAINS]
    assert len(CANONICAL_ANGLE_NAMES) == 20 and HUMAN_ANGLE_LIMITS_RAD.shape == (20, 2)
    assert np.all(LOWER < 0) and np.all(UPPER > 0)  # zero (flat hand) is inside the human range


def test_validate_keypoints_names_the_problem():
    validate_keypoints(np.zeros((5, 21, 3)))
    with pytest.raises(ValueError, match=r"shape \(\.\.\., 21, 3\).*got shape \(20, 3\)"):
        validate_keypoints(np.zeros((20, 3)))
    bad = np.zeros((4, 21, 3))
    bad[2, 8, 1] = np.nan
    with pytest.raises(ValueError, match=r"NaN/inf.*sample \(2,\), keypoint 8 \(index_tip\)"):
        validate_keypoints(bad)
    with pytest.raises(ValueError, match="NaN/inf"):
        validate_keypoints(np.full((21, 3), np.inf))


def test_mediapipe_from_openxr_drops_palm_and_finger_metacarpals():
    joints = np.arange(26)[:, None] * np.ones(3)
    picked = mediapipe_from_openxr(joints)[:, 0]
    assert picked[0] == 1  # OpenXR wrist
    assert list(picked[list(FINGERTIP_INDICES)]) == [5, 10, 15, 20, 25]
    assert 0 not in picked and not {6, 11, 16, 21} & set(picked)
    with pytest.raises(ValueError, match="26, 3"):
        mediapipe_from_openxr(np.zeros((21, 3)))


# --- geometry and sign conventions --------------------------------------------------------------------------------


def test_zero_pose_is_a_flat_hand_in_the_wrist_frame():
    right = keypoints_from_angles(np.zeros(20), "right")
    assert np.allclose(right[0], 0.0)
    assert np.allclose(right[9, :2], 0.0) and right[9, 2] > 0  # middle MCP on +z
    fingers = right[5:]
    assert np.allclose(fingers[:, 1], 0.0)  # in the palm plane
    for chain in list(FINGER_CHAINS.values())[1:]:
        assert np.allclose(right[list(chain), 0], right[chain[0], 0])  # straight, parallel to z
    assert right[THUMB_TIP, 0] < 0 < right[20, 0]  # right hand: thumb at -x, pinky at +x
    hand_length_m = np.linalg.norm(right[12] - right[0])
    assert 0.17 < hand_length_m < 0.20
    left = keypoints_from_angles(np.zeros(20), "left")
    assert np.allclose(left, right * [-1, 1, 1])


@pytest.mark.parametrize(
    ("name", "keypoint", "axis", "direction"),
    [
        ("index_mcp_flex", 8, 1, +1),  # flexion toward the palm (+y)
        ("pinky_pip_flex", 20, 1, +1),
        ("index_mcp_abd", 8, 0, -1),  # index spreads toward the thumb (-x on a right hand)
        ("middle_mcp_abd", 12, 0, -1),  # middle: positive toward the thumb (radial)
        ("ring_mcp_abd", 16, 0, +1),  # ring and pinky spread toward the little-finger side
        ("pinky_mcp_abd", 20, 0, +1),
        ("thumb_cmc_flex", THUMB_TIP, 0, +1),  # thumb swings across the palm toward the pinky
        ("thumb_cmc_abd", THUMB_TIP, 1, +1),  # palmar abduction: out of the palm plane toward the palm side
        ("thumb_mcp_flex", THUMB_TIP, 1, +1),  # thumb flexion curls toward the palm ...
        ("thumb_ip_flex", THUMB_TIP, 0, +1),  # ... and toward the fingers
    ],
)
def test_angle_signs_follow_the_convention(name, keypoint, axis, direction):
    rest = keypoints_from_angles(np.zeros(20), "right")[keypoint, axis]
    moved = keypoints_from_angles(with_angle(name, 0.3), "right")[keypoint, axis]
    assert direction * (moved - rest) > 0.003


# --- round trips --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("side", ["right", "left"])
def test_angles_keypoints_round_trip_over_human_range(side):
    angles = random_angles(np.random.default_rng(0), 20000)
    keypoints = keypoints_from_angles(angles, side)
    assert keypoints.shape == (20000, 21, 3)
    assert np.max(np.abs(angles_from_keypoints(keypoints, side) - angles)) < 1e-6


def test_round_trip_at_the_limits_and_named_poses():
    poses = np.array([LOWER, UPPER, OPEN_HAND, RELAXED_HAND, FIST, POWER_GRASP])
    for side in ("right", "left"):
        recovered = angles_from_keypoints(keypoints_from_angles(poses, side), side)
        assert np.max(np.abs(recovered - poses)) < 1e-6


def test_round_trip_with_scale_and_other_hand_geometry():
    small_hand = HandGeometry(
        finger_mcp_positions_m=[
            [-0.021, 0.004, 0.080],
            [0.0, 0.0, 0.082],
            [0.017, 0.003, 0.077],
            [0.031, 0.004, 0.068],
        ],
        thumb_cmc_position_m=[-0.018, 0.010, 0.027],
        bone_lengths_m=np.array(AVERAGE_ADULT_HAND.bone_lengths_m) * 0.9,
    )
    angles = random_angles(np.random.default_rng(1), 2000)
    keypoints = keypoints_from_angles(angles, "right", scale=1.3, geometry=small_hand)
    assert np.max(np.abs(angles_from_keypoints(keypoints, "right") - angles)) < 1e-6
    batched = keypoints_from_angles(angles.reshape(40, 50, 20), "left")
    assert batched.shape == (40, 50, 21, 3)
    assert np.allclose(angles_from_keypoints(batched, "left"), angles.reshape(40, 50, 20))


def test_hand_geometry_rejects_a_frame_it_cannot_reproduce():
    off_axis_middle = [[-0.02, 0, 0.08], [0.01, 0, 0.09], [0.02, 0, 0.08], [0.03, 0, 0.07]]
    with pytest.raises(ValueError, match="middle MCP"):
        HandGeometry(off_axis_middle, [-0.02, 0, 0.03], np.ones((5, 3)))
    with pytest.raises(ValueError, match="shape"):
        HandGeometry(np.zeros((3, 3)), [0, 0, 0], np.ones((5, 3)))


def test_angles_do_not_depend_on_the_frame_the_keypoints_come_in():
    angles = random_angles(np.random.default_rng(2), 500)
    keypoints = keypoints_from_angles(angles, "left")
    rotation = Rotation.random(random_state=3)
    world = rotation.apply(keypoints.reshape(-1, 3)).reshape(keypoints.shape) + [0.4, -0.1, 1.2]
    assert np.allclose(keypoints_in_wrist_frame(world, "left"), keypoints, atol=1e-12)
    assert np.max(np.abs(angles_from_keypoints(world, "left") - angles)) < 1e-6


# --- robustness on keypoints the model did not make ---------------------------------------------------------------


def rebuilt_with_other_bones(keypoints, rng, length_spread=0.2, noise_m=0.001):
    """The same bone directions with every bone (wrist->MCP included) rescaled, plus tracking noise."""
    out = keypoints.copy()
    for chain in FINGER_CHAINS.values():
        points = (0,) + chain
        for parent, child in zip(points[:-1], points[1:]):
            factor = rng.uniform(1 - length_spread, 1 + length_spread, size=(len(keypoints), 1))
            out[:, child] = out[:, parent] + factor * (keypoints[:, child] - keypoints[:, parent])
    out[:, 1:] += np.clip(rng.normal(0.0, noise_m / 2, size=out[:, 1:].shape), -noise_m, noise_m)
    return out


def test_other_bone_lengths_and_noise_give_close_finite_angles_within_limits():
    rng = np.random.default_rng(4)
    angles = random_angles(rng, 5000)
    keypoints = rebuilt_with_other_bones(keypoints_from_angles(angles, "right"), rng)
    recovered = angles_from_keypoints(keypoints, "right")
    assert np.isfinite(recovered).all() and within_limits(recovered)
    error = np.abs(recovered - angles)
    assert np.median(error) < 0.05 and np.percentile(error, 95) < 0.2


def test_degenerate_keypoints_give_finite_angles_within_limits():
    rng = np.random.default_rng(5)
    line = np.linspace(0.0, 0.2, 21)[:, None] * [0.0, 0.0, 1.0]  # every bone collinear
    coincident = np.zeros((21, 3))
    fingers_folded_onto_wrist = keypoints_from_angles(np.zeros(20), "right")
    fingers_folded_onto_wrist[5:] = 0.0
    straight_into_palm = keypoints_from_angles(with_angle("index_mcp_flex", np.pi / 2), "right")
    cases = np.stack(
        [
            line,
            coincident,
            fingers_folded_onto_wrist,
            straight_into_palm,
            rng.normal(0.0, 0.1, size=(21, 3)),
            1e6 * rng.normal(size=(21, 3)),
            1e-12 * rng.normal(size=(21, 3)),
        ]
    )
    for side in ("right", "left"):
        recovered = angles_from_keypoints(cases, side)
        assert np.isfinite(recovered).all() and within_limits(recovered)


def test_angles_from_keypoints_rejects_nan():
    keypoints = keypoints_from_angles(np.zeros(20), "right")
    keypoints[4, 0] = np.nan
    with pytest.raises(ValueError, match="thumb_tip"):
        angles_from_keypoints(keypoints, "right")
    with pytest.raises(ValueError, match="side"):
        angles_from_keypoints(np.zeros((21, 3)), "both")


# --- pinch solve --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("finger", ["index", "middle", "ring", "pinky"])
def test_solve_pinch_brings_the_tips_together_within_human_limits(finger):
    pose = solve_pinch(finger, RELAXED_HAND)
    keypoints = keypoints_from_angles(pose, "right")
    tip = FINGER_CHAINS[finger][-1]
    assert np.linalg.norm(keypoints[tip] - keypoints[THUMB_TIP]) < 0.5e-3
    assert within_limits(pose)
    others = [i for i in FINGERTIP_INDICES[1:] if i != tip]
    assert np.all(np.linalg.norm(keypoints[others] - keypoints[THUMB_TIP], axis=1) > 0.015)


# --- glove --------------------------------------------------------------------------------------------------------


def test_glove_layout_names():
    assert len(GLOVE_SLOT_NAMES) == 24
    assert glove_parameter_names("right")[:2] == ("r0", "r1") and glove_parameter_names("left")[23] == "l23"
    assert UNMEASURED_CANONICAL_ANGLES == ("middle_mcp_abd",)
    assert {3, 11, 21, 22, 23}.isdisjoint(MEASURED_GLOVE_SLOTS) and len(MEASURED_GLOVE_SLOTS) == 19


@pytest.mark.parametrize(
    ("slot", "degrees", "name", "sign"),
    [
        (6, -30.0, "index_mcp_flex", +1),  # pitch negative = flexion
        (5, -60.0, "index_pip_flex", +1),
        (4, -20.0, "index_dip_flex", +1),
        (7, -10.0, "index_mcp_abd", +1),  # negative yaw = index spreading
        (15, 10.0, "ring_mcp_abd", +1),  # positive yaw = ring/little spreading
        (19, 10.0, "pinky_mcp_abd", +1),
        (18, -45.0, "pinky_mcp_flex", +1),
        (0, -30.0, "thumb_ip_flex", +1),
        (1, -20.0, "thumb_mcp_flex", +1),
        (2, -30.0, "thumb_cmc_flex", +1),
        (20, -15.0, "thumb_cmc_abd", +1),
    ],
)
def test_glove_signs(slot, degrees, name, sign):
    glove = np.zeros(24)
    glove[slot] = degrees
    canonical = glove_to_canonical(glove, "right")
    assert canonical[ANGLE[name]] == pytest.approx(sign * np.radians(abs(degrees)))
    assert np.count_nonzero(canonical) == 1
    assert np.allclose(glove_to_canonical(glove, "left"), canonical)  # HandDriver uses one layout for both hands


def test_canonical_glove_round_trips():
    angles = random_angles(np.random.default_rng(6), 3000)
    measurable = angles.copy()
    measurable[:, ANGLE["middle_mcp_abd"]] = 0.0
    glove = canonical_to_glove(angles, "right")
    assert glove.shape == (3000, 24) and np.all(glove[:, [3, 11, 21, 22, 23]] == 0.0)
    assert np.max(np.abs(glove_to_canonical(glove, "right") - measurable)) < 1e-12
    assert np.max(np.abs(canonical_to_glove(glove_to_canonical(glove, "right"), "right") - glove)) < 1e-9


def test_glove_input_is_clipped_and_checked():
    wild = np.full(24, -200.0)
    assert within_limits(glove_to_canonical(wild, "right"))
    bad = np.zeros(24)
    bad[5] = np.nan
    with pytest.raises(ValueError, match="index_pip_pitch"):
        glove_to_canonical(bad, "right")
    with pytest.raises(ValueError, match=r"\(\.\.\., 24\)"):
        glove_to_canonical(np.zeros(20), "right")
