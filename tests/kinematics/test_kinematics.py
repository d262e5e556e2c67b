"""KinematicModel, solve_ik and URDF parsing: Jacobians against finite differences, IK convergence and settling,
and the error messages of bad URDFs."""


import numpy as np
import pinocchio as pin
import pytest

from teledex_lerobot.kinematics import (
    KinematicModel,
    UrdfError,
    catalogue,
    linker_a7_urdf_path,
    parse_urdf,
    solve_ik,
    urdf_path,
)
from teledex_lerobot.kinematics.urdf import DEFAULT_VELOCITY_LIMIT

AUTHORED = ["piper"] + [f"linkerhand_{m}_{s}" for m in ("o6", "l10", "l20") for s in ("left", "right")]


def load(name: str) -> KinematicModel:
    if name.startswith("a7_"):
        return KinematicModel.from_urdf(linker_a7_urdf_path(name.removeprefix("a7_")))
    return KinematicModel.from_urdf(urdf_path(name))


@pytest.fixture(scope="module")
def piper():
    return load("piper")


@pytest.fixture(scope="module")
def a7():
    return load("a7_right")


# ---- API basics ------------------------------------------------------------------------------------------------

def test_frame_positions_equal_frame_pose_translations(piper):
    q = np.array([0.2, 1.0, -1.3, 0.3, -0.4, 0.5, 0.04])
    frames = ["tcp", "link3", "finger_left"]
    for _ in range(2):  # second call goes through the frame-id cache
        positions = piper.frame_positions(q, frames)
        assert positions.shape == (3, 3)
        for frame, position in zip(frames, positions):
            np.testing.assert_allclose(position, piper.frame_pose(q, frame)[:3, 3], atol=1e-15)
    assert piper.frame_positions(q, ["tcp"]).shape == (1, 3)


def test_link_segments_join_parent_and_child_link_origins(piper):
    q = np.array([0.2, 1.0, -1.3, 0.3, -0.4, 0.5, 0.04])
    segments = piper.link_segments(q)
    joints = piper.description.joints
    assert segments.shape == (len(joints), 2, 3)
    for joint, (start, end) in zip(joints, segments):
        np.testing.assert_allclose(start, piper.frame_pose(q, joint.parent)[:3, 3], atol=1e-15)
        np.testing.assert_allclose(end, piper.frame_pose(q, joint.child)[:3, 3], atol=1e-15)


def test_clip_and_shape_checks(piper):
    q = np.array([9.0, -9.0, 9.0, 0.0, 0.0, 0.0, 1.0])
    np.testing.assert_array_equal(piper.clip(q), [2.6179, 0, 0, 0, 0, 0, 0.07])
    with pytest.raises(ValueError, match=r"expected q of shape \(7,\)"):
        piper.frame_pose(np.zeros(6), "tcp")


def test_require_names_the_missing_and_lists_the_valid(piper):
    piper.require_joints(["joint1", "gripper"])
    with pytest.raises(UrdfError, match=r"no actuated joint\(s\) \['joint9'\].*Valid actuated joints: \['joint1'"):
        piper.require_joints(["joint1", "joint9"])
    with pytest.raises(UrdfError, match=r"no frame\(s\) \['flange'\].*'tcp'"):
        piper.require_frames(["flange"])
    with pytest.raises(UrdfError, match="no frame"):
        piper.frame_pose(np.zeros(7), "flange")


def test_urdf_path_lists_available_models_when_unknown():
    assert urdf_path("piper") == urdf_path("piper.urdf")
    with pytest.raises(UrdfError, match=r"No URDF named 'ur5'.*'linkerhand_o6_left'.*'piper'"):
        urdf_path("ur5")


def test_a7_path_errors(monkeypatch):
    with pytest.raises(ValueError, match="side must be .right. or .left."):
        linker_a7_urdf_path("middle")
    monkeypatch.setattr(catalogue.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ModuleNotFoundError, match="linkerbot.*not installed"):
        linker_a7_urdf_path("right")


# ---- Jacobians -------------------------------------------------------------------------------------------------

def _finite_difference_jacobian(model: KinematicModel, q: np.ndarray, frame: str, step: float = 1e-6):
    columns = []
    for i in range(len(q)):
        plus, minus = q.copy(), q.copy()
        plus[i] += step
        minus[i] -= step
        pose_plus, pose_minus = model.frame_pose(plus, frame), model.frame_pose(minus, frame)
        linear = (pose_plus[:3, 3] - pose_minus[:3, 3]) / (2 * step)
        angular = pin.log3(pose_plus[:3, :3] @ pose_minus[:3, :3].T) / (2 * step)  # base-aligned axes
        columns.append(np.concatenate([linear, angular]))
    return np.array(columns).T


@pytest.mark.parametrize("name", AUTHORED + ["a7_right", "a7_left"])
def test_jacobians_match_finite_differences_for_every_frame(name):
    model = load(name)
    rng = np.random.default_rng(3)
    for _ in range(2):
        q = rng.uniform(model.lower, model.upper)
        for frame in model.frame_names:
            jacobian = model.frame_jacobian(q, frame)
            assert jacobian.shape == (6, len(model.joint_names))
            np.testing.assert_allclose(jacobian, _finite_difference_jacobian(model, q, frame), atol=1e-7,
                                       err_msg=f"{name} {frame}")


def test_jacobian_includes_mimic_joints():
    """Moving index_mcp_pitch on the O6 also bends the mimic PIP and DIP: the tip moves more than a rigid finger."""
    o6 = load("linkerhand_o6_right")
    q = np.zeros(6)
    column = o6.frame_jacobian(q, "index_tip")[:3, o6.joint_names.index("index_mcp_pitch")]
    mcp, tip = o6.frame_positions(q, ["index_mcp", "index_tip"])
    rigid_finger_speed = np.linalg.norm(tip - mcp)  # 1 rad/s about the MCP, no coupling
    assert np.linalg.norm(column) > 1.5 * rigid_finger_speed
    pose, jacobian = o6.frame_pose_and_jacobian(q, "index_tip")
    np.testing.assert_array_equal(pose, o6.frame_pose(q, "index_tip"))
    np.testing.assert_array_equal(jacobian, o6.frame_jacobian(q, "index_tip"))


# ---- IK --------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name,frame", [("piper", "tcp"), ("piper", "link6"), ("a7_right", "Right_Wrist_Roll_Link"),
                                        ("a7_left", "Left_Wrist_Roll_Link")])
def test_ik_reaches_random_reachable_targets(name, frame):
    model = load(name)
    rng = np.random.default_rng(4)
    for _ in range(100):
        q_true = rng.uniform(model.lower, model.upper)
        q_init = model.clip(q_true + rng.normal(0.0, 0.1, len(q_true)))  # warm start, as in a teleop loop
        target = model.frame_pose(q_true, frame)
        result = solve_ik(model, frame, target, q_init)
        assert result.converged, (q_true, q_init, result)
        reached = model.frame_pose(result.q, frame)
        assert np.linalg.norm(reached[:3, 3] - target[:3, 3]) <= 1e-3
        assert np.linalg.norm(pin.log3(target[:3, :3] @ reached[:3, :3].T)) <= 1e-2
        assert result.position_error_m <= 1e-3 and result.orientation_error_rad <= 1e-2
        assert np.all((result.q >= model.lower) & (result.q <= model.upper))


def test_ik_position_only_on_a_hand_fingertip():
    hand = load("linkerhand_l20_right")
    rng = np.random.default_rng(5)
    for _ in range(30):
        q_true = rng.uniform(hand.lower, hand.upper)
        target = hand.frame_pose(q_true, "index_tip")
        result = solve_ik(hand, "index_tip", target, hand.clip(q_true + rng.normal(0, 0.1, len(q_true))),
                          orientation_weight=0.0)
        assert result.converged and result.position_error_m <= 1e-3


def _weighted_cost(model, frame, target, q, orientation_weight):
    pose = model.frame_pose(q, frame)
    position = target[:3, 3] - pose[:3, 3]
    rotation = pin.log3(target[:3, :3] @ pose[:3, :3].T)
    return position @ position + orientation_weight**2 * rotation @ rotation


@pytest.mark.parametrize("orientation_weight", [0.0, 0.1])
def test_ik_settles_on_an_unreachable_target(piper, orientation_weight):
    target = np.eye(4)
    target[:3, 3] = [1.5, 0.5, 0.4]  # the Piper reaches about 0.65 m
    q_init = np.array([0.0, 1.0, -1.0, 0.0, 0.0, 0.0, 0.03])
    costs = [_weighted_cost(piper, "tcp", target, solve_ik(
        piper, "tcp", target, q_init, max_iters=k, orientation_weight=orientation_weight).q, orientation_weight)
        for k in range(0, 60, 3)]
    assert all(later <= earlier + 1e-15 for earlier, later in zip(costs, costs[1:])), "error never increases"
    result = solve_ik(piper, "tcp", target, q_init, max_iters=500, orientation_weight=orientation_weight)
    assert not result.converged and result.iterations < 500, "stops by itself once settled"
    assert np.all((result.q >= piper.lower) & (result.q <= piper.upper))
    again = solve_ik(piper, "tcp", target, result.q, max_iters=500, orientation_weight=orientation_weight)
    # Settled: solving again from there changes neither the error nor (noticeably) the joints.
    assert again.position_error_m == pytest.approx(result.position_error_m, abs=1e-5)
    assert again.orientation_error_rad == pytest.approx(result.orientation_error_rad, abs=1e-3)
    np.testing.assert_allclose(again.q, result.q, atol=0.05)
    assert costs[-1] == pytest.approx(_weighted_cost(piper, "tcp", target, result.q, orientation_weight), rel=1e-3)
    if orientation_weight == 0.0:
        # The settled pose is a (local) closest reachable point: no nearby configuration gets closer.
        distance = result.position_error_m
        assert distance == pytest.approx(np.linalg.norm(target[:3, 3] - piper.frame_pose(result.q, "tcp")[:3, 3]))
        rng = np.random.default_rng(7)
        for _ in range(200):
            nearby = piper.clip(result.q + rng.normal(0.0, 0.02, 7))
            assert np.linalg.norm(target[:3, 3] - piper.frame_pose(nearby, "tcp")[:3, 3]) >= distance - 1e-7


def test_ik_clips_the_initial_guess_and_checks_arguments(piper):
    target = piper.frame_pose(np.array([0.1, 1.2, -1.2, 0.1, 0.2, 0.3, 0.0]), "tcp")
    result = solve_ik(piper, "tcp", target, np.array([5.0, 5.0, 5.0, 5.0, 5.0, 5.0, 5.0]))
    assert np.all((result.q >= piper.lower) & (result.q <= piper.upper))
    with pytest.raises(ValueError, match="4x4"):
        solve_ik(piper, "tcp", target[:3], np.zeros(7))
    with pytest.raises(UrdfError, match="no frame"):
        solve_ik(piper, "gripper_tip", target, np.zeros(7))


# ---- URDF parsing ----------------------------------------------------------------------------------------------

def urdf(joints: str, links=("base", "a", "b", "c")) -> str:
    return '<robot name="t">' + "".join(f'<link name="{link}"/>' for link in links) + joints + "</robot>"


def revolute(name, parent, child, extra="", limit='<limit lower="-1" upper="1" velocity="2" effort="1"/>'):
    return (f'<joint name="{name}" type="revolute"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="0 0 0.1"/><axis xyz="0 1 0"/>{limit}{extra}</joint>')


def test_mimic_chains_resolve_to_the_actuated_source():
    text = urdf(revolute("j1", "base", "a")
                + revolute("j3", "b", "c", '<mimic joint="j2" multiplier="3" offset="0.5"/>')
                + revolute("j2", "a", "b", '<mimic joint="j1" multiplier="2" offset="0.1"/>'))
    description = parse_urdf(text)
    assert [j.name for j in description.actuated_joints] == ["j1"]
    j3 = description.resolved_mimics["j3"]
    assert (j3.joint, j3.multiplier, j3.offset) == ("j1", 6.0, pytest.approx(0.8))  # 3 * (2 q + 0.1) + 0.5


def test_mimic_chain_kinematics(tmp_path):
    path = tmp_path / "chain.urdf"
    path.write_text(urdf(revolute("j1", "base", "a")
                         + revolute("j2", "a", "b", '<mimic joint="j1" multiplier="2" offset="0.1"/>')
                         + revolute("j3", "b", "c", '<mimic joint="j2" multiplier="3" offset="0.5"/>')))
    model = KinematicModel.from_urdf(path)
    assert model.joint_names == ["j1"]
    q = np.array([0.2])
    relative = np.linalg.inv(model.frame_pose(q, "b")) @ model.frame_pose(q, "c")
    angle = pin.log3(relative[:3, :3])[1]  # about y
    assert angle == pytest.approx(3 * (2 * 0.2 + 0.1) + 0.5)
    np.testing.assert_allclose(model.frame_jacobian(q, "c"), _finite_difference_jacobian(model, q, "c"), atol=1e-7)


def test_continuous_joints_are_revolute_within_plus_minus_pi(tmp_path):
    path = tmp_path / "wheel.urdf"
    path.write_text(urdf('<joint name="spin" type="continuous"><parent link="base"/><child link="a"/>'
                         '<axis xyz="0 0 1"/></joint>', links=("base", "a")))
    model = KinematicModel.from_urdf(path)
    np.testing.assert_allclose([model.lower[0], model.upper[0]], [-np.pi, np.pi])
    assert model.velocity_limits[0] == DEFAULT_VELOCITY_LIMIT["continuous"]  # no <limit>: the stated default


def _error(text: str) -> str:
    with pytest.raises(UrdfError) as info:
        parse_urdf(text, source="bad.urdf")
    return str(info.value)


def test_missing_file_error(tmp_path):
    with pytest.raises(UrdfError, match="URDF file not found: .*nowhere.urdf"):
        KinematicModel.from_urdf(tmp_path / "nowhere.urdf")


def test_malformed_xml_error_names_the_line():
    message = _error('<robot name="t">\n<link name="a">\n</robot>')
    assert "Malformed XML" in message and "line 3" in message


def test_missing_link_error():
    message = _error(urdf(revolute("j1", "base", "ghost")))
    assert "'j1'" in message and "child link 'ghost'" in message and "not defined" in message


def test_mimic_of_a_missing_joint_error():
    message = _error(urdf(revolute("j1", "base", "a") + revolute("j2", "a", "b", '<mimic joint="j9"/>'),
                          links=("base", "a", "b")))
    assert "'j2' mimics 'j9'" in message and "does not exist" in message


def test_mimic_cycle_error():
    message = _error(urdf(revolute("j1", "base", "a")
                          + revolute("j2", "a", "b", '<mimic joint="j3"/>')
                          + revolute("j3", "b", "c", '<mimic joint="j2"/>')))
    assert "mimic cycle j2 -> j3 -> j2" in message


def test_missing_limits_error():
    message = _error(urdf(revolute("j1", "base", "a", limit="")))
    assert "'j1'" in message and "missing limit" in message and "<limit" in message
    message = _error(urdf(revolute("j1", "base", "a", limit='<limit lower="0" velocity="1" effort="1"/>')))
    assert "missing limit attribute(s) upper" in message


@pytest.mark.parametrize("limit", ['<limit lower="0" upper="1" velocity="0" effort="0"/>',
                                   '<limit lower="0" upper="1"/>'])
def test_zero_or_missing_velocity_and_effort_fall_back_with_a_warning(limit, caplog):
    """Vendors ship velocity="0" effort="0" or leave them out: load, use the stated default, and say so."""
    description = parse_urdf(urdf(revolute("j1", "base", "a", limit=limit), links=("base", "a")), "vendor.urdf")
    joint = description.joint("j1")
    assert joint.limits.velocity == DEFAULT_VELOCITY_LIMIT["revolute"] and np.isinf(joint.limits.effort)
    assert description.defaulted_limits == ("j1.velocity", "j1.effort")
    assert "vendor.urdf" in caplog.text and "j1.velocity" in caplog.text


def test_no_joints_error():
    assert "no movable joints" in _error(urdf("", links=("base",)))
    fixed_only = '<joint name="f" type="fixed"><parent link="base"/><child link="a"/></joint>'
    assert "no movable joints" in _error(urdf(fixed_only, links=("base", "a")))


@pytest.mark.parametrize("joint_type", ["floating", "planar"])
def test_floating_and_planar_joints_are_rejected(joint_type):
    text = urdf(f'<joint name="free" type="{joint_type}"><parent link="base"/><child link="a"/></joint>',
                links=("base", "a"))
    message = _error(text)
    assert f"'free' has type '{joint_type}'" in message and "not supported" in message


def test_structure_errors():
    assert "child of two joints" in _error(urdf(revolute("j1", "base", "a") + revolute("j2", "b", "a")))
    assert "exactly one root link" in _error(urdf(revolute("j1", "base", "a")))  # b and c are disconnected
    assert "defines joint 'j1' twice" in _error(urdf(revolute("j1", "base", "a") + revolute("j1", "a", "b")))
    assert "lower limit 1.0 > upper limit -1.0" in _error(urdf(revolute(
        "j1", "base", "a", limit='<limit lower="1" upper="-1" velocity="1" effort="1"/>'), links=("base", "a")))


def test_least_squares_core_finds_the_constrained_optimum_of_a_coupled_quadratic():
    """The shared IK/retargeting core: with one variable held at its limit, the other is re-solved given that move
    (clipping alone would leave it where the unconstrained step put it)."""
    from teledex_lerobot.kinematics.least_squares import DampedLeastSquaresSettings, minimise

    jacobian = np.array([[1.0, 1.0], [0.0, 0.1]])
    target = np.array([2.0, 0.0])
    linearise = lambda z: (jacobian @ z - target, jacobian)  # noqa: E731
    settings = DampedLeastSquaresSettings(max_iterations=20, step_tolerance=1e-12, initial_damping=1e-12,
                                          min_damping=1e-12)
    result = minimise(linearise, np.zeros(2), lower=[-1.0, -1.0], upper=[0.5, 1.0], settings=settings)
    # z0 is held at 0.5; the best z1 given that is (2 - 0.5) * 1 / (1 + 0.01) = 1.485..., clipped to its limit 1.0
    np.testing.assert_allclose(result.z, [0.5, 1.0], atol=1e-9)
    result = minimise(linearise, np.zeros(2), lower=[-1.0, -1.0], upper=[0.5, 3.0], settings=settings)
    np.testing.assert_allclose(result.z, [0.5, 1.5 / 1.01], atol=1e-6)
