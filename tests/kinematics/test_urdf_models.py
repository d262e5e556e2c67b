"""The URDFs we author (configs/urdf/) and the Linker A7 URDF from linkerbot: names, limits, mimics, frames,
the hand base-frame convention, left/right mirroring, and Piper FK against piper_sdk's own FK."""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from teledex_lerobot.kinematics import KinematicModel, linker_a7_urdf_path, urdf_path

MIRROR = np.diag([-1.0, 1.0, 1.0])
FINGERS = ("index", "middle", "ring", "pinky")
KEYPOINTS = [f"{f}_{k}" for f in FINGERS for k in ("mcp", "pip", "dip", "tip")] + [
    "thumb_cmc", "thumb_mcp", "thumb_ip", "thumb_tip"]
TIPS = ["thumb_tip", "index_tip", "middle_tip", "ring_tip", "pinky_tip"]

# (name, lower, upper) in command order, exactly as the devices define them.
HAND_JOINTS = {
    ("o6", "left"): [("thumb_cmc_pitch", 0, 0.58), ("thumb_cmc_yaw", 0, 1.36)] + [
        (f"{f}_mcp_pitch", 0, 1.6) for f in FINGERS],
    ("l10", "left"): [
        ("thumb_cmc_pitch", 0, 1.45), ("thumb_cmc_yaw", 0, 1.43), ("index_mcp_pitch", 0, 1.62),
        ("middle_mcp_pitch", 0, 1.62), ("ring_mcp_pitch", 0, 1.62), ("pinky_mcp_pitch", 0, 1.62),
        ("index_mcp_roll", 0, 0.26), ("ring_mcp_roll", -0.26, 0), ("pinky_mcp_roll", -0.26, 0),
        ("thumb_cmc_roll", -0.52, 1.01)],
    ("l20", "left"): [("thumb_cmc_pitch", 0, 0.87)] + [(f"{f}_mcp_pitch", 0, 1.4) for f in FINGERS] + [
        ("thumb_cmc_yaw", -0.297, 0.683)] + [(f"{f}_mcp_yaw", -0.26, 0.26) for f in FINGERS] + [
        ("thumb_cmc_roll", 0.122, 1.78), ("thumb_ip", 0, 1.29)] + [(f"{f}_dip", 0, 1.08) for f in FINGERS],
}
# Joints whose sign flips between the left and right file (stated in the URDF headers).
SIGN_FLIPPED = {"o6": set(), "l20": set(),
                "l10": {"index_mcp_roll", "ring_mcp_roll", "pinky_mcp_roll", "thumb_cmc_roll"}}


def _right_joints(model):
    joints = []
    for name, lower, upper in HAND_JOINTS[(model, "left")]:
        if name in SIGN_FLIPPED[model]:
            lower, upper = -upper, -lower
        if model == "l20" and name == "thumb_cmc_roll":
            lower = 0.0
        joints.append((name, lower, upper))
    return joints


for _model in ("o6", "l10", "l20"):
    HAND_JOINTS[(_model, "right")] = _right_joints(_model)
# The vendor's right L10 has other ranges than its left one (LinkerHand/utils/mapping.py; devices/linkerhand/
# byte_map.py), in the right file's sign convention.
_L10_RIGHT_RANGES = {"thumb_cmc_pitch": (0, 0.75), "index_mcp_roll": (-0.21, 0.26), "ring_mcp_roll": (0, 0.21),
                     "pinky_mcp_roll": (0, 0.34)}
HAND_JOINTS[("l10", "right")] = [(name, *_L10_RIGHT_RANGES.get(name, (lower, upper)))
                                 for name, lower, upper in HAND_JOINTS[("l10", "right")]]

HANDS = sorted(HAND_JOINTS)
AUTHORED = ["piper"] + [f"linkerhand_{model}_{side}" for model, side in HANDS]


@pytest.fixture(scope="module")
def models():
    return {name: KinematicModel.from_urdf(urdf_path(name)) for name in AUTHORED}


def hand(models, model, side):
    return models[f"linkerhand_{model}_{side}"]


def test_every_authored_urdf_loads(models):
    for name, model in models.items():
        assert model.name == name
        assert len(model.joint_names) > 0
        assert np.all(model.lower <= model.upper)
        assert np.all((model.velocity_limits > 0) & np.isfinite(model.velocity_limits))


# ---- Piper -----------------------------------------------------------------------------------------------------

def test_piper_joints_and_limits(models):
    piper = models["piper"]
    assert piper.joint_names == [f"joint{i}" for i in range(1, 7)] + ["gripper"]
    np.testing.assert_array_equal(piper.lower, [-2.6179, 0, -2.967, -1.745, -1.22, -2.09439, 0])
    np.testing.assert_array_equal(piper.upper, [2.6179, 3.14, 0, 1.745, 1.22, 2.09439, 0.07])
    assert np.all((piper.velocity_limits[:6] >= 2.0) & (piper.velocity_limits[:6] <= 4.0))
    piper.require_frames([f"link{i}" for i in range(1, 7)] + ["gripper_base", "tcp", "hand_mount"])


def test_piper_fingers_mimic_the_opening_width(models):
    piper = models["piper"]
    mimics = piper.description.resolved_mimics
    assert (mimics["gripper_finger_left"].joint, mimics["gripper_finger_left"].multiplier) == ("gripper", 0.5)
    assert (mimics["gripper_finger_right"].joint, mimics["gripper_finger_right"].multiplier) == ("gripper", -0.5)
    for width in (0.0, 0.03, 0.07):
        q = np.array([0.3, 1.2, -1.0, 0.4, 0.5, -0.6, width])
        left, right, tcp = piper.frame_positions(q, ["finger_left", "finger_right", "tcp"])
        assert np.linalg.norm(left - right) == pytest.approx(width, abs=1e-12)
        np.testing.assert_allclose((left + right) / 2, tcp, atol=1e-12)


def test_piper_hand_mount_is_the_flange_and_tcp_is_ahead_of_it(models):
    piper = models["piper"]
    q = np.array([-0.5, 0.8, -1.5, 1.0, -0.7, 1.9, 0.02])
    flange = piper.frame_pose(q, "link6")
    np.testing.assert_allclose(piper.frame_pose(q, "hand_mount"), flange, atol=1e-12)
    tcp_in_flange = np.linalg.inv(flange) @ piper.frame_pose(q, "tcp")
    np.testing.assert_allclose(tcp_in_flange[:3, :3], np.eye(3), atol=1e-12)
    np.testing.assert_allclose(tcp_in_flange[:3, 3], [0, 0, 0.1425], atol=1e-9)


def test_piper_flange_matches_piper_sdk_forward_kinematics(models):
    from piper_sdk import C_PiperForwardKinematics

    piper = models["piper"]
    sdk = C_PiperForwardKinematics(dh_is_offset=1)
    rng = np.random.default_rng(0)
    compared = 0
    for _ in range(250):
        q = rng.uniform(piper.lower, piper.upper)
        x_mm, y_mm, z_mm, rx_deg, ry_deg, rz_deg = sdk.CalFK(list(q[:6]))[5]  # link6, extrinsic XYZ Euler
        if abs(abs(ry_deg) - 90.0) < 1.0:
            continue  # the SDK snaps pitch to +-90 deg within 1e-4 of gimbal lock; its angles are inexact there
        pose = piper.frame_pose(q, "link6")
        sdk_rotation = Rotation.from_euler("xyz", [rx_deg, ry_deg, rz_deg], degrees=True).as_matrix()
        position_error_mm = np.linalg.norm(pose[:3, 3] * 1000.0 - [x_mm, y_mm, z_mm])
        rotation_error_deg = np.degrees(Rotation.from_matrix(sdk_rotation.T @ pose[:3, :3]).magnitude())
        assert position_error_mm < 0.1, (q, position_error_mm)
        assert rotation_error_deg < 0.01, (q, rotation_error_deg)
        compared += 1
    assert compared >= 200


def test_piper_zero_pose_is_the_sdk_zero_pose(models):
    piper = models["piper"]
    pose = piper.frame_pose(np.zeros(7), "link6")
    np.testing.assert_allclose(pose[:3, 3] * 1000, [56.128, 0, 213.266], atol=1e-3)
    np.testing.assert_allclose(Rotation.from_matrix(pose[:3, :3]).as_euler("xyz", degrees=True), [0, 85, 0],
                               atol=1e-6)


# ---- hands -----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("model,side", HANDS)
def test_hand_joint_names_order_and_limits(models, model, side):
    expected = HAND_JOINTS[(model, side)]
    urdf = hand(models, model, side)
    assert urdf.joint_names == [name for name, _, _ in expected]
    np.testing.assert_array_equal(urdf.lower, [lower for _, lower, _ in expected])
    np.testing.assert_array_equal(urdf.upper, [upper for _, _, upper in expected])


@pytest.mark.parametrize("model,side", HANDS)
def test_hand_has_keypoint_frames_and_base(models, model, side):
    urdf = hand(models, model, side)
    urdf.require_frames(KEYPOINTS)
    assert urdf.description.root_link == "hand_base"


@pytest.mark.parametrize("side", ["left", "right"])
def test_o6_mimics_follow_the_device_couplings(models, side):
    mimics = hand(models, "o6", side).description.resolved_mimics
    assert (mimics["thumb_ip"].joint, mimics["thumb_ip"].multiplier) == ("thumb_cmc_pitch", pytest.approx(1.86))
    for finger in FINGERS:
        dip = mimics[f"{finger}_dip"]
        assert (dip.joint, dip.multiplier) == (f"{finger}_mcp_pitch", pytest.approx(0.89))


def _joint_value_from_links(urdf: KinematicModel, q: np.ndarray, joint) -> float:
    """The joint's position recovered from the poses of its parent and child links (independent of mimic code)."""
    parent, child = (urdf.frame_pose(q, link) for link in (joint.parent, joint.child))
    origin = np.eye(4)
    origin[:3, :3] = Rotation.from_euler("xyz", joint.origin_rpy).as_matrix()
    origin[:3, 3] = joint.origin_xyz
    motion = np.linalg.inv(origin) @ np.linalg.inv(parent) @ child
    if joint.type == "prismatic":
        return float(motion[:3, 3] @ joint.axis)
    return float(Rotation.from_matrix(motion[:3, :3]).as_rotvec() @ joint.axis)


@pytest.mark.parametrize("name", AUTHORED)
def test_every_mimic_joint_moves_as_its_resolved_source_says(models, name):
    urdf = models[name]
    description = urdf.description
    assert description.resolved_mimics, "every authored model has mimic joints"
    q = np.random.default_rng(1).uniform(urdf.lower, urdf.upper)
    for joint in description.joints:
        if not joint.is_moving:
            continue
        if joint.name in description.resolved_mimics:
            mimic = description.resolved_mimics[joint.name]
            expected = mimic.multiplier * q[urdf.joint_names.index(mimic.joint)] + mimic.offset
        else:
            expected = q[urdf.joint_names.index(joint.name)]
        assert _joint_value_from_links(urdf, q, joint) == pytest.approx(expected, abs=1e-9), joint.name


@pytest.mark.parametrize("model,side", HANDS)
def test_hand_zero_pose_is_flat_open_along_z(models, model, side):
    urdf = hand(models, model, side)
    q0 = np.zeros(len(urdf.joint_names))  # exactly zero, even where a range excludes 0 (L20 left thumb roll)
    positions = urdf.frame_positions(q0, urdf.frame_names)
    middle_tip = positions[urdf.frame_names.index("middle_tip")]
    assert middle_tip[2] == positions[:, 2].max()
    np.testing.assert_allclose(urdf.frame_positions(q0, ["middle_mcp"])[0][:2], 0.0, atol=1e-12)
    for finger in FINGERS:
        mcp, pip, dip, tip = urdf.frame_positions(q0, [f"{finger}_{k}" for k in ("mcp", "pip", "dip", "tip")])
        for point in (pip, dip, tip):  # straight along +z, in the palm plane
            np.testing.assert_allclose(point[:2], mcp[:2], atol=1e-12)
        assert mcp[2] < pip[2] < dip[2] < tip[2]
        assert 0.079 <= tip[2] - mcp[2] <= 0.100, "finger length, human-like"
    palm_length = urdf.frame_positions(q0, ["middle_mcp"])[0][2]
    assert 0.09 <= palm_length <= 0.10


@pytest.mark.parametrize("model,side", HANDS)
def test_hand_x_axis_points_to_pinky_on_right_and_thumb_on_left(models, model, side):
    urdf = hand(models, model, side)
    q0 = np.zeros(len(urdf.joint_names))
    thumb, index, _, _, pinky = urdf.frame_positions(q0, TIPS)[:, 0]
    sign = 1.0 if side == "right" else -1.0
    assert sign * thumb < sign * index < 0 < sign * pinky


@pytest.mark.parametrize("model,side", HANDS)
def test_flexion_moves_fingertips_toward_palm_side(models, model, side):
    urdf = hand(models, model, side)
    q = urdf.clip(np.zeros(len(urdf.joint_names)))
    flexors = {f: [j for j in (f"{f}_mcp_pitch", f"{f}_dip") if j in urdf.joint_names] for f in FINGERS}
    flexors["thumb"] = [j for j in ("thumb_cmc_pitch", "thumb_ip") if j in urdf.joint_names]
    for finger, joints in flexors.items():
        for joint in joints:
            bent = q.copy()
            bent[urdf.joint_names.index(joint)] += 0.3
            before, after = (urdf.frame_positions(pose, [f"{finger}_tip"])[0] for pose in (q, bent))
            assert after[1] - before[1] > 0.005, (joint, before, after)
    fist = urdf.frame_positions(urdf.upper, [f"{f}_tip" for f in FINGERS])
    assert np.all(fist[:, 1] > 0.01), "a closed hand curls the fingertips in front of the palm"


@pytest.mark.parametrize("model", ["o6", "l10", "l20"])
def test_left_hand_is_the_mirror_of_the_right(models, model):
    left, right = hand(models, model, "left"), hand(models, model, "right")
    assert left.joint_names == right.joint_names
    assert left.frame_names == right.frame_names
    signs = np.array([-1.0 if name in SIGN_FLIPPED[model] else 1.0 for name in left.joint_names])
    rng = np.random.default_rng(2)
    for _ in range(20):
        q_left = rng.uniform(left.lower, left.upper)
        np.testing.assert_allclose(left.frame_positions(q_left, left.frame_names),
                                   right.frame_positions(signs * q_left, right.frame_names) @ MIRROR, atol=1e-12)
    flipped = (signs < 0) & ~np.isin(left.joint_names, list(_L10_RIGHT_RANGES) if model == "l10" else [])
    np.testing.assert_array_equal(right.lower[flipped], -left.upper[flipped])
    np.testing.assert_array_equal(right.upper[flipped], -left.lower[flipped])


# ---- Linker Arm A7 (URDF from the linkerbot wheel) -------------------------------------------------------------

@pytest.mark.parametrize("side", ["right", "left"])
def test_a7_urdf_loads_with_seven_joints(side):
    path = linker_a7_urdf_path(side)
    assert path.is_file() and "linkerbot" in path.parts
    a7 = KinematicModel.from_urdf(path)
    prefix = side.capitalize()
    assert a7.joint_names == [f"{prefix}_{j}_Joint" for j in (
        "Shoulder_Pitch", "Shoulder_Roll", "Shoulder_Yaw", "Elbow_Pitch", "Wrist_Yaw", "Wrist_Pitch", "Wrist_Roll")]
    a7.require_frames([f"{prefix}_Wrist_Roll_Link", "Base_Link"])
