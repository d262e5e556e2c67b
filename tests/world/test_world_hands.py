"""More hands in the MuJoCo world: the palm is built for a hand URDF whatever way its axes point (or one clear error
says why not); the LinkerHand L10 and L20 have measured grasps with which the scripted expert solves the cube.

The test hands are written here from one template: three fingers and a thumb in our hand convention (fingers along
+z, palm toward +y), turned so that the fingers point along +x, +y or -z of the URDF's root link. Only the root's
child joints carry the turn (their origins' xyz and rpy), as in a vendor file whose base frame is not ours; the
fingers below them are the same in every variant.
"""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from teledex_lerobot.presets import PartSpec, load_preset
from teledex_lerobot.rig import Rig
from teledex_lerobot.world.mjcf import hand_palm
from teledex_lerobot.world.world import World, WorldConfig

# finger -> where it leaves the palm (its first joint's origin in the hand frame, m)
FINGER_BASES = {"f1": (-0.02, 0.0, 0.09), "f2": (0.0, 0.0, 0.095), "f3": (0.02, 0.0, 0.088)}
THUMB_BASE = (-0.03, 0.012, 0.03)
SEGMENTS_M = (0.045, 0.03, 0.025)
# The hand frame's axes in the root link's frame, per variant: where the fingers (hand +z) point in the root frame.
TURNS = {
    "fingers_along_x": Rotation.from_euler("xyz", (90, 0, 90), degrees=True),  # hand z -> root +x
    "fingers_along_y": Rotation.from_euler("x", -90, degrees=True),  # hand z -> root +y
    "fingers_along_minus_z": Rotation.from_euler("x", 180, degrees=True),  # hand z -> root -z
}


def _fmt(values) -> str:
    return " ".join(f"{float(v):.9g}" for v in values)


def _joint(name, parent, child, xyz, rpy=(0, 0, 0), axis=None, limit=(0.0, 1.5), kind="revolute"):
    moving = (f'<axis xyz="{_fmt(axis)}"/><limit lower="{limit[0]}" upper="{limit[1]}" velocity="3" effort="1"/>'
              if kind != "fixed" else "")
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{_fmt(xyz)}" rpy="{_fmt(rpy)}"/>{moving}</joint>')


def hand_urdf(turn: Rotation, bases=None, thumb_base=THUMB_BASE, name="test_hand") -> str:
    """A right hand with three fingers and a thumb, its hand frame turned by `turn` in its root link."""
    bases = FINGER_BASES if bases is None else bases
    links, joints = ["mount"], []

    def from_root(xyz, rpy=(0.0, 0.0, 0.0)):  # a root child joint's origin, the hand frame turned into the root's
        return turn.apply(xyz), (turn * Rotation.from_euler("xyz", rpy)).as_euler("xyz")

    for finger, base in bases.items():
        chain = [f"{finger}_proximal", f"{finger}_middle", f"{finger}_distal", f"{finger}_tip"]
        links += chain
        joints.append(_joint(f"{finger}_mcp", "mount", chain[0], *from_root(base), axis=(-1, 0, 0)))
        joints += [_joint(f"{finger}_{j}", chain[i], chain[i + 1], (0, 0, SEGMENTS_M[i]), axis=(-1, 0, 0))
                   for i, j in enumerate(("pip", "dip"))]
        joints.append(_joint(f"{finger}_tip_fixed", chain[2], chain[3], (0, 0, SEGMENTS_M[2]), kind="fixed"))
    thumb = ["thumb_rotator", "thumb_proximal", "thumb_distal", "thumb_tip"]
    links += thumb
    # the thumb leans 40 deg toward the thumb side (-x) and 20 deg out of the palm, its curl about its own x
    joints.append(_joint("thumb_yaw", "mount", thumb[0], *from_root(thumb_base, (-0.35, -0.7, 0.0)),
                         axis=(0, 0, 1), limit=(0.0, 1.2)))
    joints.append(_joint("thumb_pitch", thumb[0], thumb[1], (0, 0, 0.01), axis=(-1, 0, 0), limit=(0.0, 1.0)))
    joints.append(_joint("thumb_ip", thumb[1], thumb[2], (0, 0, 0.04), axis=(-1, 0, 0), limit=(0.0, 1.0)))
    joints.append(_joint("thumb_tip_fixed", thumb[2], thumb[3], (0, 0, 0.03), kind="fixed"))
    body = "".join(f'<link name="{link}"/>' for link in links) + "".join(joints)
    return f'<?xml version="1.0"?>\n<robot name="{name}">{body}</robot>\n'


def _write(tmp_path, text: str, name: str):
    path = tmp_path / f"{name}.urdf"
    path.write_text(text)
    return path


def _hand_world(path) -> World:
    return World(Rig.from_parts(arm=None, hand=PartSpec(str(path))), WorldConfig(task="cube_assembly"))


@pytest.mark.parametrize("variant", sorted(TURNS))
def test_world_builds_a_palm_between_the_wrist_and_the_finger_bases(tmp_path, variant):
    turn = TURNS[variant]
    world = _hand_world(_write(tmp_path, hand_urdf(turn), variant))
    model, data = world.model, world.data
    palm = model.geom("hand/palm")
    half = model.geom_size[palm.id]
    assert np.all(half > 1e-3)
    # In the palm box's frame: the wrist (the root's origin) at one end of it, the finger bases at the other,
    # every base within its width; the box's long axis along where the fingers point.
    box_rotation, box_centre = data.geom_xmat[palm.id].reshape(3, 3), data.geom_xpos[palm.id]
    local = lambda p: box_rotation.T @ (p - box_centre)  # noqa: E731
    root = world.body_pose("hand/mount")
    wrist = local(root[:3, 3])
    bases = np.array([local(world.body_position(f"hand/{finger}_proximal")) for finger in FINGER_BASES])
    assert wrist[2] == pytest.approx(-half[2], abs=1e-6)
    assert bases[:, 2].max() == pytest.approx(half[2], abs=1e-6)
    assert np.all(np.abs(bases[:, 0]) < half[0]) and np.all(np.abs(bases[:, 1]) < half[1])
    along = box_rotation[:, 2]
    expected = root[:3, :3] @ turn.apply([0.0, 0.0, 1.0])
    assert along @ expected > np.cos(np.radians(1))
    normal = box_rotation[:, 1]  # out of the palm face: the side the fingers flex toward
    assert normal @ (root[:3, :3] @ turn.apply([0.0, 1.0, 0.0])) > np.cos(np.radians(1))


@pytest.mark.parametrize("variant", sorted(TURNS))
def test_hand_closes_on_nothing_without_nan(tmp_path, variant):
    world = _hand_world(_write(tmp_path, hand_urdf(TURNS[variant]), variant))
    hand = world.rig.parts["hand"]
    world.set_targets("hand", hand.upper)
    world.step(world.steps_for(1.5))
    assert np.all(np.isfinite(world.data.qpos)) and np.all(np.isfinite(world.data.qvel))
    np.testing.assert_allclose(world.joint_positions("hand"), hand.upper, atol=0.05)
    world.set_targets("hand", hand.lower)
    world.step(world.steps_for(1.5))
    assert np.all(np.isfinite(world.data.qpos))
    np.testing.assert_allclose(world.joint_positions("hand"), hand.lower, atol=0.05)


def test_our_hands_keep_their_axis_aligned_palm():
    """The O6, L10 and L20 (fingers along +z, palm toward +y): the palm is the box it always was, from the wrist
    to the farthest knuckle, across the four knuckles plus a finger bone's radius, 22 mm thick (13 behind)."""
    for model in ("linkerhand_o6", "linkerhand_l10", "linkerhand_l20"):
        for side, knuckles_x in (("right", (-0.022, 0.038)), ("left", (-0.038, 0.022))):
            palm = hand_palm(Rig.from_parts(arm=None, hand=PartSpec(model, side)).parts["hand"].model, side)
            assert palm.link == "hand_base"
            np.testing.assert_array_equal(palm.rotation, np.eye(3))
            low, high = palm.centre_m - palm.half_size_m, palm.centre_m + palm.half_size_m
            np.testing.assert_allclose([low[0], high[0]], [knuckles_x[0] - 0.0085, knuckles_x[1] + 0.0085],
                                       atol=1e-9)
            np.testing.assert_allclose([low[1], high[1], low[2], high[2]], [-0.0132, 0.0088, 0.0, 0.095], atol=1e-9)


def test_a_hand_without_a_palm_is_one_clear_error(tmp_path):
    text = hand_urdf(TURNS["fingers_along_x"], bases={"f1": (0.0, 0.0, 0.09)}, thumb_base=THUMB_BASE,
                     name="one_finger")
    text = text.replace(text[text.index('<joint name="thumb_yaw"'):text.index("</robot>")], "")  # no thumb
    for link in ("thumb_rotator", "thumb_proximal", "thumb_distal", "thumb_tip"):
        text = text.replace(f'<link name="{link}"/>', "")
    path = _write(tmp_path, text, "one_finger")
    with pytest.raises(ValueError) as error:
        _hand_world(path)
    message = str(error.value)
    assert "\n" not in message
    assert str(path) in message and "root link 'mount'" in message and "fingers cannot be told apart" in message
    assert "geom" not in message  # not MuJoCo's compiler message


def test_a_hand_rooted_at_its_knuckles_gets_a_palm_behind_them_and_a_warning(tmp_path, caplog):
    """Every finger base at the root (a URDF rooted at the knuckles, as SimLab's Allegro): no link marks the wrist,
    so the layout places it a human palm's length behind the middle knuckle, says so, and the world's palm box
    reaches back to it."""
    bases = {finger: (0.0, 0.0, 0.0) for finger in FINGER_BASES}
    path = _write(tmp_path, hand_urdf(TURNS["fingers_along_x"], bases=bases, thumb_base=(0.0, 0.0, 0.0),
                                      name="rooted_at_the_knuckles"), "rooted_at_the_knuckles")
    world = _hand_world(path)
    assert "the wrist is placed" in caplog.text
    palm = hand_palm(world.rig.parts["hand"].model, "right")
    assert 2 * palm.half_size_m[2] > 0.05  # from the placed wrist to the knuckles


def test_every_vendor_hand_of_the_reference_checkout_builds_and_closes():
    """dex-urdf's hand URDFs (tests/reference_assets.py; skipped without them), whose base frames all differ from
    ours: each builds a world with a palm and closes on nothing without NaN. (Before the palm followed the fingers,
    the Allegro files failed with MuJoCo's "size 2 must be positive in geom 'hand/palm'", and the Ability and SVH
    ones on their rounded inertias.) The bimanual Shadow file is two hands: one clear error."""
    import reference_assets

    if not reference_assets.DEX_URDF_HANDS.is_dir():
        pytest.skip(reference_assets.MISSING)
    paths = sorted(p for p in reference_assets.DEX_URDF_HANDS.glob("**/*.urdf") if not p.stem.endswith("_glb"))
    assert paths
    for path in paths:
        side = "left" if "left" in path.stem else "right"
        if path.stem == "bimanual":
            with pytest.raises(ValueError, match="fingers cannot be told apart"):
                World(Rig.from_parts(arm=None, hand=PartSpec(str(path), side)), WorldConfig(task="cube_assembly"))
            continue
        world = World(Rig.from_parts(arm=None, hand=PartSpec(str(path), side)), WorldConfig(task="cube_assembly"))
        assert np.all(world.model.geom_size[world.model.geom("hand/palm").id] > 1e-3), path
        world.set_targets("hand", world.rig.parts["hand"].upper)
        world.step(world.steps_for(1.0))
        assert np.all(np.isfinite(world.data.qpos)), path


# ---- the L10 and L20: grasps and the scripted expert -------------------------------------------------------------

OBJECT = {"cube_assembly": "cube_top", "bottle_peg_in_hole": "bottle"}


@pytest.mark.parametrize("hand", ["linkerhand_l10", "linkerhand_l20"])
@pytest.mark.parametrize("task", sorted(OBJECT))
def test_grasp_holds_on_the_grasp_rig(hand, task):
    from teledex_lerobot.world.grasp_rig import LIFT_M, GraspRig
    from teledex_lerobot.world.grasps import grasp_for

    rig = GraspRig(PartSpec(hand), task)
    result = rig.trial(grasp_for(hand, task), OBJECT[task], hold_s=3.0)
    assert result.lifted_m > 0.9 * LIFT_M and result.slip_m < 0.002 and result.rotation_rad < np.radians(3)
    if task == "cube_assembly":  # and with the hand landing 5 mm short of where it should (toward the thumb)
        assert rig.trial(grasp_for(hand, task), OBJECT[task], hold_s=1.0, offset_m=(-0.005, 0.0, 0.0)).held


@pytest.mark.parametrize("preset", ["piper_linkerhand_l10_single", "piper_linkerhand_l20_single",
                                    "linker_a7_linkerhand_l20_single"])
def test_scripted_expert_assembles_the_cube_with_the_l10_and_l20(preset):
    from teledex_lerobot.world.episode import run_expert_episode
    from teledex_lerobot.world.expert import ScriptedExpert

    rig = Rig.from_preset(load_preset(preset))
    world = World(rig, WorldConfig(task="cube_assembly"))
    expert = ScriptedExpert(rig, "cube_assembly")
    for seed in (3, 17, 29):
        succeeded, _ = run_expert_episode(world, expert, seed)
        assert succeeded, f"seed {seed}"
        assert not world.hand_touches("cube_top")


def test_an_ik_start_for_an_arm_names_the_arms_joints():
    from teledex_lerobot.world.grasps import GRASPS

    grasp = GRASPS["linkerhand_l20"]["cube_assembly"]
    arm = Rig.from_preset(load_preset("linker_a7_linkerhand_l20_single")).parts["arm"]
    [start] = grasp.ik_starts("linker_a7", arm.model.joint_names, arm.home_full)
    assert start[arm.model.joint_names.index("Right_Shoulder_Yaw_Joint")] == -1.0
    assert grasp.ik_starts("piper", ["joint1"], np.zeros(1)) == ()  # the Piper reaches the pinch from home
    with pytest.raises(ValueError, match=r"ik_start_by_arm\.linker_a7 names joints"):
        grasp.ik_starts("linker_a7", ["joint1", "joint2"], np.zeros(2))
