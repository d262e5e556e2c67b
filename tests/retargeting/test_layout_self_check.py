"""The inferred hand frame is checked against the hand's own kinematics before use (hand_layout._verify_frame):
the fingers curl toward its palm face, the thumb sits on the side its `side` says and opposes toward that face, and
its z follows the wrist line from the hand's mount to the middle finger's root. Hands built here from our LinkerHand
URDFs provoke each way the inference can be fooled; each is resolved (frame within a few degrees of the truth,
known because the test built it) or refused in one line naming the file, the links and the setting.

The LinkerHand URDFs are drawn in the operator wrist frame (hand_base: origin at the wrist, +z toward the middle
MCP, +y out of the palm), so their true frame is the identity in hand_base coordinates.
"""

import logging
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
import reference_assets
from scipy.spatial.transform import Rotation

from teledex_lerobot.errors import ModelError
from teledex_lerobot.kinematics import KinematicModel
from teledex_lerobot.operator.hand_model import HUMAN_ANGLE_LIMITS_RAD, keypoints_from_angles
from teledex_lerobot.paths import URDF_DIR
from teledex_lerobot.retargeting import HandRetargeter, RetargetingConfig
from teledex_lerobot.retargeting.hand_layout import HandednessError, build_layout, reference_pose

RESOLVED_DEG = 3.0  # "resolved right": within this of the frame the test built
BUILT_IN = sorted(URDF_DIR.glob("linkerhand_*.urdf"))


def _angle_deg(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.degrees(np.arccos(np.clip((np.trace(a @ b.T) - 1.0) / 2.0, -1.0, 1.0))))


def _operator_from_root(model: KinematicModel, layout) -> np.ndarray:
    """operator coords = R @ root-link coords, at the reference pose."""
    palm = model.frame_pose(reference_pose(model), layout.palm_link)[:3, :3]
    return layout.base_rotation @ palm.T


def _side(path: Path) -> str:
    return "left" if "left" in path.stem else "right"


def _mounted(source: Path, path: Path, xyz, rpy=(0.0, 0.0, 0.0), rename: dict | None = None) -> Path:
    """`source` under a new root link `mount`, hand_base at `xyz`, turned by `rpy` in it (a fixed joint); links in
    `rename` renamed (to hide our standard frame names from the layout). Written to `path`."""
    robot = ET.parse(source).getroot()
    for element in robot.iter():
        for key in ("name", "link"):
            if element.tag in ("link", "parent", "child") and element.get(key) in (rename or {}):
                element.set(key, rename[element.get(key)])
    ET.SubElement(robot, "link", name="mount")
    joint = ET.SubElement(robot, "joint", name="mount_to_hand", type="fixed")
    ET.SubElement(joint, "parent", link="mount")
    ET.SubElement(joint, "child", link="hand_base")
    ET.SubElement(joint, "origin", xyz=" ".join(map(str, xyz)), rpy=" ".join(map(str, rpy)))
    ET.ElementTree(robot).write(path)
    return path


def _middle_root(source: Path) -> np.ndarray:
    """Where the middle finger's first joint sits, in hand_base coordinates."""
    model = KinematicModel.from_urdf(source)
    return model.frame_pose(reference_pose(model), "middle_proximal")[:3, 3]


# Hiding `thumb_cmc` makes the layout read the fingers from the geometry instead of our standard names.
SOURCES = {"standard names": None, "geometry": {"thumb_cmc": "thumb_cmc_marker"}}


@pytest.mark.parametrize("path", BUILT_IN, ids=lambda p: p.stem)
def test_the_built_in_hands_pass_the_self_check(path, caplog):
    with caplog.at_level(logging.WARNING):
        model = KinematicModel.from_urdf(path)
        layout = build_layout(model, _side(path))
    assert not layout.notes and _angle_deg(_operator_from_root(model, layout), np.eye(3)) < 1.0


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("path", BUILT_IN, ids=lambda p: p.stem)
def test_a_hand_used_as_the_other_side_is_refused_naming_the_side(tmp_path, path, source):
    """A left file given as a right hand (and the reverse) is never read as a hand of the other side: its frame
    would be 180 degrees off."""
    hand = _mounted(path, tmp_path / path.name, (0, 0, 0), rename=SOURCES[source])
    wrong = "right" if _side(path) == "left" else "left"
    with pytest.raises(HandednessError) as refused:
        build_layout(KinematicModel.from_urdf(hand), wrong)
    message = str(refused.value)
    assert "\n" not in message and str(hand) in message and "thumb_tip" in message
    assert f"set side to {_side(path)}" in message and refused.value.side == _side(path)
    assert isinstance(refused.value, ModelError)


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("offset", [0.0, 0.03])
@pytest.mark.parametrize("axis", "xyz")
@pytest.mark.parametrize("name", ["linkerhand_l20_right", "linkerhand_o6_right", "linkerhand_l10_left"])
def test_a_palm_turned_half_a_turn_is_resolved_or_refused(tmp_path, name, axis, offset, source):
    """The root -> palm joint turned 180 degrees about x, y or z (hand_base at the root, or 3 cm along the root's z:
    then the root lies behind the wrist or toward the knuckles): the frame must follow the hand, or be refused."""
    rpy = np.pi * np.eye(3)["xyz".index(axis)]
    hand = _mounted(URDF_DIR / f"{name}.urdf", tmp_path / f"{name}.urdf", (0, 0, offset), rpy, SOURCES[source])
    model = KinematicModel.from_urdf(hand)
    truth = Rotation.from_euler("xyz", rpy).as_matrix().T  # operator = hand_base coords = R_joint^T @ mount coords
    try:
        layout = build_layout(model, "left" if "left" in name else "right")
    except ModelError as refused:
        assert "\n" not in str(refused) and str(hand) in str(refused) and "base_rotation" in str(refused)
    else:
        assert _angle_deg(_operator_from_root(model, layout), truth) < RESOLVED_DEG


@pytest.mark.parametrize("source", SOURCES)
def test_a_root_at_the_knuckles_is_resolved(tmp_path, source):
    """The root moved to the middle finger's root: no link marks the wrist; it is placed a palm's length behind, and
    the frame still follows the fingers."""
    path = URDF_DIR / "linkerhand_l20_right.urdf"
    hand = _mounted(path, tmp_path / path.name, -_middle_root(path), rename=SOURCES[source])
    model = KinematicModel.from_urdf(hand)
    layout = build_layout(model, "right")
    assert any("no link origin fixed to the palm lies where a wrist could be" in note for note in layout.notes)
    assert _angle_deg(_operator_from_root(model, layout), np.eye(3)) < RESOLVED_DEG
    # the wrist: about a palm's length behind the knuckles, where hand_base (the true wrist) sits
    np.testing.assert_allclose(layout.wrist_offset_m, -_middle_root(path), atol=0.01)


@pytest.mark.parametrize("source", SOURCES)
def test_a_mount_off_the_wrist_line_is_refused_naming_base_rotation(tmp_path, source):
    """The root a palm's length behind the knuckles but 44 degrees toward the back of the hand: outside the cone a
    wrist may lie in, so the inference takes the fingers' direction, which the mount contradicts. Given
    base_rotation, the hand is used as told."""
    path = URDF_DIR / "linkerhand_l20_right.urdf"
    knuckle = _middle_root(path)
    tilt = np.radians(44.0)
    mount = knuckle - np.linalg.norm(knuckle) * np.array([0.0, -np.sin(tilt), np.cos(tilt)])
    hand = _mounted(path, tmp_path / path.name, -mount, rename=SOURCES[source])
    with pytest.raises(ModelError) as refused:
        build_layout(KinematicModel.from_urdf(hand), "right")
    message = str(refused.value)
    assert "\n" not in message and str(hand) in message and "base_rotation" in message
    assert "from mount to" in message and "middle_knuckle" in message and "44 degrees" in message

    model = KinematicModel.from_urdf(hand)
    layout = build_layout(model, "right", base_rotation=np.eye(3))
    assert _angle_deg(_operator_from_root(model, layout), np.eye(3)) < 1e-6


@pytest.mark.parametrize("name", sorted(reference_assets.load_fixture(reference_assets.VENDOR_FIXTURE)["hands"]))
def test_a_vendor_hand_used_as_the_other_side_is_refused_or_has_no_sides(tmp_path, name):
    """Every vendor hand (tests/fixtures/vendor_hands.json) given as the other side is refused naming the side,
    except the three-finger Dex3, whose thumb sits mid-way across its two fingers: no side can be read, and the
    inference says so in its notes."""
    hand = reference_assets.VENDOR_HANDS[name]
    model = KinematicModel.from_urdf(reference_assets.write_vendor_hands(tmp_path)[name])
    wrong = "right" if hand["side"] == "left" else "left"
    if name.startswith("unitree_dex3"):
        assert any("flex toward the back" in note for note in build_layout(model, wrong).notes)
        return
    with pytest.raises(HandednessError, match=f"set side to {hand['side']}"):
        build_layout(model, wrong)


@pytest.mark.parametrize("method", ["teledex", "dexpilot", "joint_mapping", "analog"])
def test_a_left_hand_led_by_a_right_operator_follows_the_mirrored_hand(method):
    """A right operator on a left robot hand: the hand is read on its own side (its palm toward the palm, never
    flipped), and the operator's hand drives it as the same grasp of a left operator would (the keypoint methods
    mirror its positions across the palm; joint mapping reads its angles)."""
    model = KinematicModel.from_urdf(URDF_DIR / "linkerhand_l20_left.urdf")
    crossed = HandRetargeter(model, method, "right", RetargetingConfig())
    same = HandRetargeter(model, method, "left", RetargetingConfig())
    assert crossed.mirrored == (method in ("teledex", "dexpilot")) and not same.mirrored  # positions are mirrored
    assert np.allclose(crossed.layout.base_rotation, same.layout.base_rotation)
    if method == "analog":
        return  # a trigger's closure: no hand to mirror
    low, high = HUMAN_ANGLE_LIMITS_RAD.T
    for share in (0.0, 0.3, 0.6):
        angles = low + share * (high - low)
        assert np.allclose(crossed.retarget(keypoints_from_angles(angles, "right")),
                           same.retarget(keypoints_from_angles(angles, "left")), atol=1e-3)
