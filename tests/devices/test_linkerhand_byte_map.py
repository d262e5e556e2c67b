"""The LinkerHand byte mapping (devices/linkerhand/byte_map.py) against the vendor's own published files,
linker-bot/linkerhand-python-sdk: our table is its LinkerHand/utils/mapping.py, and the byte vectors its SDK sends
for named poses (config/L10_positions.yaml; the presets of its GUI, example/gui_control/config/constants.py) give
the expected finger shapes in our URDFs: the open hand fans the fingers out and swings the thumb out to the side,
the fist curls everything in front of the palm, the pinches close the thumb on the index finger.

The vendor's facts come from tests/fixtures/linkerhand_sdk.json everywhere (numbers read from those files, with
their commit), and from the files themselves too where a checkout of the SDK is here (LINKERHAND_SDK, see
tests/reference_assets.py), where the fixture must also equal them."""

import numpy as np
import pytest
import reference_assets

from teledex_lerobot.devices.linkerhand import protocol as lp
from teledex_lerobot.devices.linkerhand.byte_map import VENDOR_MAPPING, byte_scale
from teledex_lerobot.kinematics import KinematicModel
from teledex_lerobot.kinematics.catalogue import resolve_urdf

CODES = {"linkerhand_o6": "O6", "linkerhand_l10": "L10", "linkerhand_l20": "L20"}
SIDES = ("left", "right")
FINGERS = ("thumb", "index", "middle", "ring", "pinky")
# Joints whose sign flips between our left and right URDF (their headers' mirror rule).
MIRROR_SIGN_FLIPPED = {"linkerhand_l10": {"index_mcp_roll", "ring_mcp_roll", "pinky_mcp_roll", "thumb_cmc_roll"},
                       "linkerhand_l20": set()}
SDK = reference_assets.linkerhand_sdk()


@pytest.fixture(scope="module", params=["fixture", *(["sdk"] if SDK else [])])
def vendor(request) -> dict:
    """The vendor's facts: mapping (mapping.py's lists), gui_presets (per model), l10_positions (per side)."""
    if request.param == "sdk":
        return reference_assets.linkerhand_facts(SDK)
    return reference_assets.load_fixture(reference_assets.LINKERHAND_FIXTURE)


def test_the_fixture_is_what_the_vendors_files_say():
    if SDK is None:
        pytest.skip(reference_assets.MISSING_LINKERHAND)
    fixture = reference_assets.load_fixture(reference_assets.LINKERHAND_FIXTURE)
    assert reference_assets.facts_only(fixture) == reference_assets.linkerhand_facts(SDK), (
        f"tests/fixtures/{reference_assets.LINKERHAND_FIXTURE} (commit {fixture['provenance']['commit']}) is not what "
        f"the SDK at {SDK} says: check our mapping against the change, then run tests/fixtures/regenerate.py")


class Hand:
    """Our URDF of one model and side, posed by the vendor's byte vectors through our mapping."""

    def __init__(self, model: str, side: str):
        self.layout = lp.layout_for(model)
        self.urdf = KinematicModel.from_urdf(resolve_urdf(model, side))
        dof = self.layout.dof
        self.scale = byte_scale(model, side, self.urdf.lower[:dof], self.urdf.upper[:dof])
        self.toward_thumb = 1.0 if side == "left" else -1.0  # +x points to the thumb on a left hand (URDF headers)

    def tips(self, vendor_bytes) -> dict[str, np.ndarray]:
        raw = np.asarray(vendor_bytes)
        if len(raw) == self.layout.raw_size and self.layout.raw_size != self.layout.dof:
            raw = raw[list(self.layout.joint_to_raw)]  # the L20's 20 bytes, 4 of them reserved
        q = self.scale.to_radians(raw)
        return dict(zip(FINGERS, self.urdf.frame_positions(q, [f"{f}_tip" for f in FINGERS]), strict=True))

    def lateral_mm(self, tip: np.ndarray) -> float:
        """How far toward the thumb side of the hand a point is."""
        return 1000 * self.toward_thumb * tip[0]


def _distance_mm(a: np.ndarray, b: np.ndarray) -> float:
    return 1000 * float(np.linalg.norm(a - b))


@pytest.mark.parametrize("model, side", sorted(VENDOR_MAPPING))
def test_our_urdf_limits_are_the_vendors_ranges_in_our_convention(model, side):
    urdf = KinematicModel.from_urdf(resolve_urdf(model, side))
    joints = VENDOR_MAPPING[model, side]
    np.testing.assert_array_equal(urdf.lower[:len(joints)], [joint.our_range[0] for joint in joints])
    np.testing.assert_array_equal(urdf.upper[:len(joints)], [joint.our_range[1] for joint in joints])


@pytest.mark.parametrize("model, side", sorted(VENDOR_MAPPING))
def test_our_table_is_the_vendors_mapping_file(vendor, model, side):
    arrays = vendor["mapping"]
    prefix = f"{CODES[model].lower()}_{side[0]}"
    lows, highs, directions = (arrays[f"{prefix}_{name}"] for name in ("min", "max", "derict"))
    for joint in VENDOR_MAPPING[model, side]:
        assert joint.vendor_range == (lows[joint.index], highs[joint.index]), (model, side, joint)
        assert joint.direction == directions[joint.index], (model, side, joint)
    mapped = {joint.index for joint in VENDOR_MAPPING[model, side]}
    assert mapped == set(range(len(lows))) - set(range(11, 15) if model == "linkerhand_l20" else ())


@pytest.mark.parametrize("model, spread, together", [("linkerhand_l10", "侧摆1", "侧摆2"),
                                                     ("linkerhand_l20", "张开", "握拳")])
@pytest.mark.parametrize("side", SIDES)
def test_the_open_spread_fans_the_fingers_out(vendor, model, spread, together, side):
    """The spread bytes of the vendor's poses: the index tip toward the thumb side, the pinky tip away from it."""
    hand, presets = Hand(model, side), vendor["gui_presets"][CODES[model]]
    fanned, closed = hand.tips(presets[spread]), hand.tips(presets[together])
    assert hand.lateral_mm(fanned["index"]) - hand.lateral_mm(closed["index"]) > 10
    assert hand.lateral_mm(closed["pinky"]) - hand.lateral_mm(fanned["pinky"]) > 10


@pytest.mark.parametrize("model", ["linkerhand_l10", "linkerhand_l20"])
@pytest.mark.parametrize("side", SIDES)
def test_the_open_hand_swings_the_thumb_out_and_the_fist_curls_it_in(vendor, model, side):
    hand, presets = Hand(model, side), vendor["gui_presets"][CODES[model]]
    open_hand, fist = hand.tips(presets["张开"]), hand.tips(presets["握拳"])
    # open: the thumb stands out beyond the index finger on the thumb side, every finger extended
    assert hand.lateral_mm(open_hand["thumb"]) - hand.lateral_mm(open_hand["index"]) > 50
    assert all(open_hand[finger][2] > 0.15 for finger in FINGERS[1:])
    # fist: every tip curled in front of the palm (+y), the thumb well closer to the index than when open
    assert all(fist[finger][1] > 0.01 for finger in FINGERS)
    assert _distance_mm(fist["thumb"], fist["index"]) < 0.6 * _distance_mm(open_hand["thumb"], open_hand["index"])


@pytest.mark.parametrize("side", SIDES)
def test_the_l20_ok_gesture_closes_the_thumb_on_the_index_tip(vendor, side):
    hand, presets = Hand("linkerhand_l20", side), vendor["gui_presets"]["L20"]
    ok, open_hand = hand.tips(presets["OK"]), hand.tips(presets["张开"])
    assert _distance_mm(ok["thumb"], ok["index"]) < 25  # a pinch (our URDF's fingertips are points)
    assert _distance_mm(open_hand["thumb"], open_hand["index"]) > 100


@pytest.mark.parametrize("side", SIDES)
def test_the_l10_pinches_close_the_thumb_on_the_index(vendor, side):
    """Our L10 URDF is not the vendor's geometry (its thumb is shorter and set further back), so its 1 cm pinch
    leaves 4-5 cm between our fingertips; what must hold is the order of the pinches and that they close the gap."""
    hand, poses, presets = Hand("linkerhand_l10", side), vendor["l10_positions"][side], vendor["gui_presets"]["L10"]
    gap = {name: _distance_mm(*(hand.tips(poses[name])[finger] for finger in ("thumb", "index")))
           for name in ("张开", "捏合5CM", "捏合1CM")}
    assert gap["捏合1CM"] <= gap["捏合5CM"] < 0.8 * gap["张开"], gap
    ok, open_hand = hand.tips(presets["OK"]), hand.tips(presets["张开"])
    assert _distance_mm(ok["thumb"], ok["index"]) < 0.5 * _distance_mm(open_hand["thumb"], open_hand["index"])


@pytest.mark.parametrize("model", ["linkerhand_l10", "linkerhand_l20"])
def test_the_same_bytes_mean_the_mirrored_motion_on_both_hands(model):
    """The vendor sends the same poses to both hands (L10_positions.yaml): equal bytes give the joint angles our
    URDFs' mirror rule pairs (equal, or negated on the L10's spreads and thumb rotation), wherever the two hands'
    ranges correspond (the right L10's other ranges aside)."""
    left, right = (Hand(model, side) for side in SIDES)
    flipped = MIRROR_SIGN_FLIPPED[model]
    for index, name in enumerate(left.urdf.joint_names[:left.layout.dof]):
        sign = -1.0 if name in flipped else 1.0
        lows = sorted((sign * left.urdf.lower[index], sign * left.urdf.upper[index]))
        if not np.allclose(lows, (right.urdf.lower[index], right.urdf.upper[index])):
            continue
        for raw in (0, 64, 200, 255):
            bytes_ = np.full(left.layout.dof, raw)
            assert right.scale.to_radians(bytes_)[index] == pytest.approx(
                sign * left.scale.to_radians(bytes_)[index]), (name, raw)
