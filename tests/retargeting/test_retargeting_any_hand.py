"""A hand URDF the code has never seen: other link names, a rotated root, a continuous joint and a mimic chain."""

import numpy as np
from scipy.spatial.transform import Rotation

from teledex_lerobot.kinematics import KinematicModel
from teledex_lerobot.operator.keypoints import FINGERTIP_INDICES
from teledex_lerobot.operator.stream import OperatorStream
from teledex_lerobot.paths import STREAMS_DIR
from teledex_lerobot.retargeting import build_retargeter
from teledex_lerobot.retargeting.hand_layout import build_layout, reference_pose

# Root rotation of the unseen hand: its fingers point along the URDF's -x, its palm faces -z.
MOUNT_RPY = (0.4, -1.2, 2.0)


def _joint(name, kind, parent, child, xyz, axis=(1, 0, 0), limits=(0.0, 1.6), rpy=(0, 0, 0), mimic=None):
    limit = "" if kind == "continuous" else f'<limit lower="{limits[0]}" upper="{limits[1]}" velocity="3" effort="1"/>'
    mimic_tag = f'<mimic joint="{mimic[0]}" multiplier="{mimic[1]}" offset="0"/>' if mimic else ""
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{" ".join(map(str, xyz))}" rpy="{" ".join(map(str, rpy))}"/>'
            f'<axis xyz="{" ".join(map(str, axis))}"/>{limit}{mimic_tag}</joint>')


def unseen_hand_urdf() -> str:
    """Right hand in our operator convention below a rotated mount; names unlike any we know."""
    links, joints = ["world_adapter", "palm"], [_joint("mount", "fixed", "world_adapter", "palm", (0, 0, 0),
                                                         rpy=MOUNT_RPY)]
    roots = {"a": (-0.025, 0, 0.09), "b": (0, 0, 0.094), "c": (0.021, 0, 0.088), "d": (0.04, 0, 0.08)}
    lengths = {"a": (0.045, 0.026, 0.022), "b": (0.05, 0.03, 0.024), "c": (0.047, 0.028, 0.022),
               "d": (0.037, 0.022, 0.02)}
    for finger, root in roots.items():
        names = [f"{finger}{i}" for i in range(4)] + [f"{finger}_nail"]
        links += names
        joints.append(_joint(f"{finger}_spread", "revolute", "palm", names[0], root, axis=(0, -1, 0),
                             limits=(-0.3, 0.3)))
        joints.append(_joint(f"{finger}_flex1", "revolute", names[0], names[1], (0, 0, 0), axis=(-1, 0, 0)))
        joints.append(_joint(f"{finger}_flex2", "revolute", names[1], names[2], (0, 0, lengths[finger][0]),
                             axis=(-1, 0, 0)))
        joints.append(_joint(f"{finger}_flex3", "revolute", names[2], names[3], (0, 0, lengths[finger][1]),
                             axis=(-1, 0, 0), mimic=(f"{finger}_flex2", 0.8)))
        joints.append(_joint(f"{finger}_nail_fix", "fixed", names[3], names[4], (0, 0, lengths[finger][2])))
    # thumb: a continuous rotation about the palm's long axis, then swing and two flexions (a mimic chain)
    thumb = ["t0", "t1", "t2", "t3", "t4", "t_nail"]
    links += thumb
    joints += [
        _joint("t_rot", "continuous", "palm", "t0", (-0.02, 0.01, 0.03), axis=(0, 0, 1)),
        _joint("t_swing", "revolute", "t0", "t1", (0, 0, 0), axis=(0, -1, 0), limits=(-0.3, 0.9),
               rpy=(0, -0.6, 0)),
        _joint("t_flex1", "revolute", "t1", "t2", (0, 0, 0.042), axis=(-1, 0, 0), limits=(0, 1.2)),
        _joint("t_flex2", "revolute", "t2", "t3", (0, 0, 0.032), axis=(-1, 0, 0), limits=(0, 1.3)),
        _joint("t_flex3", "revolute", "t3", "t4", (0, 0, 0.0), axis=(-1, 0, 0), limits=(0, 1.3),
               mimic=("t_flex2", 0.5)),
        _joint("t_nail_fix", "fixed", "t4", "t_nail", (0, 0, 0.028)),
    ]
    body = "".join(f'<link name="{link}"/>' for link in links) + "".join(joints)
    return f'<robot name="never_seen_hand">{body}</robot>'


def test_unseen_hand_is_discovered_and_retargets(tmp_path):
    path = tmp_path / "never_seen_hand.urdf"
    path.write_text(unseen_hand_urdf())
    retargeter = build_retargeter(str(path), "teledex", "right")
    layout = retargeter.layout
    assert layout.source == "geometry"
    assert layout.finger_names == ("thumb", "index", "middle", "ring", "pinky")
    assert layout.fingertip_frames == ("t_nail", "a_nail", "b_nail", "c_nail", "d_nail")
    mount = Rotation.from_euler("xyz", MOUNT_RPY).as_matrix()
    assert np.allclose(layout.base_rotation, mount.T, atol=1e-9)  # the rotated root is undone
    assert "t_rot" in retargeter.joint_names and "a_flex3" not in retargeter.joint_names

    keypoints = OperatorStream.load(STREAMS_DIR / "open_close.npz").hand_keypoints_m[::2].astype(float)
    joints, ok = retargeter.retarget_sequence(keypoints)
    assert ok.all()
    assert np.all(joints >= retargeter.lower) and np.all(joints <= retargeter.upper)
    scale = np.mean(retargeter.calibration.segment_scales["middle"])
    tips = np.array([retargeter.fingertip_positions(q) for q in joints])
    errors = np.linalg.norm(tips - scale * keypoints[:, list(FINGERTIP_INDICES)], axis=-1)
    assert errors[:, 1:].mean() < 0.01  # the four fingers follow within a centimetre on average
    for method in ("dexpilot",):
        assert build_retargeter(str(path), method, "right").retarget_sequence(keypoints[:30])[1].all()


def flange_mounted_hand_urdf(rest_curl: float = 0.45) -> str:
    """A right hand in our operator convention whose root is a mounting flange 3 cm behind the wrist, turned
    arbitrarily (MOUNT_RPY), whose palm link sits at the knuckles (9 cm ahead of the wrist) and whose fingers rest
    curled `rest_curl` rad at their knuckles (zero angles are not a flat hand): what vendor files do, one each."""
    mount = Rotation.from_euler("xyz", MOUNT_RPY).as_matrix()
    links = ["flange", "palm"]
    joints = [_joint("flange_to_palm", "fixed", "flange", "palm", tuple(mount @ [0.0, 0.0, 0.12]), rpy=MOUNT_RPY)]
    for finger, x in {"a": -0.025, "b": 0.0, "c": 0.021, "d": 0.04}.items():
        names = [f"{finger}{i}" for i in range(3)] + [f"{finger}_nail"]
        links += names
        # the knuckle's zero is turned rest_curl toward the palm (+y): the finger rests curled
        joints.append(_joint(f"{finger}_flex1", "revolute", "palm", names[0], (x, 0, 0), axis=(-1, 0, 0),
                             limits=(-0.3, 1.2), rpy=(-rest_curl, 0, 0)))
        joints.append(_joint(f"{finger}_flex2", "revolute", names[0], names[1], (0, 0, 0.045), axis=(-1, 0, 0)))
        joints.append(_joint(f"{finger}_flex3", "revolute", names[1], names[2], (0, 0, 0.027), axis=(-1, 0, 0)))
        joints.append(_joint(f"{finger}_nail_fix", "fixed", names[2], names[3], (0, 0, 0.022)))
    links += ["t0", "t1", "t2", "t_nail"]
    joints += [_joint("t_rot", "revolute", "palm", "t0", (-0.02, 0.01, -0.06), axis=(0, 0, 1), limits=(0.0, 1.5)),
               _joint("t_flex1", "revolute", "t0", "t1", (0, 0, 0), axis=(0, -1, 0), rpy=(0, -0.6, 0)),
               _joint("t_flex2", "revolute", "t1", "t2", (0, 0, 0.04), axis=(-1, 0, 0)),
               _joint("t_nail_fix", "fixed", "t2", "t_nail", (0, 0, 0.03))]
    body = "".join(f'<link name="{link}"/>' for link in links) + "".join(joints)
    return f'<robot name="flange_hand">{body}</robot>'


def test_base_frame_and_wrist_on_a_flange_mounted_hand_resting_curled(tmp_path):
    """The frame follows the wrist line (flange -> middle knuckle), not the curled fingers; the wrist is the flange
    (the attachment), not the palm link's origin at the knuckles."""
    path = tmp_path / "flange_hand.urdf"
    path.write_text(flange_mounted_hand_urdf())
    model = KinematicModel.from_urdf(path)
    layout = build_layout(model, "right")
    assert layout.finger_names == ("thumb", "index", "middle", "ring", "pinky")
    q = reference_pose(model)
    palm = model.frame_pose(q, layout.palm_link)
    # the hand's true operator frame, in root (flange) coordinates: the palm link's axes
    truth = palm[:3, :3].T @ model.frame_pose(q, "palm")[:3, :3]
    inferred = layout.base_rotation @ truth
    angle = np.degrees(np.arccos(np.clip((np.trace(inferred) - 1) / 2, -1, 1)))
    assert angle < 5.0, f"base frame {angle:.1f} degrees off the convention"
    wrist_in_palm = np.linalg.inv(model.frame_pose(q, "palm")) @ palm @ np.append(layout.wrist_offset_m, 1.0)
    np.testing.assert_allclose(wrist_in_palm[:3], [0.0, 0.0, -0.12], atol=0.005)  # the flange, 3 cm behind the wrist
