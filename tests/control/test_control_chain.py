"""The control chain: config defaults, output chain, relative arm shaping, state machine, starting from the measured
pose, stale-input protection and recovery, the strategy scheduler, gestures, diagnostics."""

import logging

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from teledex_lerobot.control.config import ControlConfig, OutputChainConfig, RelativeArmConfig
from teledex_lerobot.control.diagnostics import Diagnostics
from teledex_lerobot.control.gestures import PinchButtons
from teledex_lerobot.control.output_chain import CriticallyDampedSmoother, OutputChain, WeightedAverage
from teledex_lerobot.control.relative_arm import CartesianRelativeArm
from teledex_lerobot.control.rig_controller import RigController
from teledex_lerobot.control.state_machine import ButtonKeys, TeleopState, TeleopStateMachine
from teledex_lerobot.control.strategy import RigStrategy
from teledex_lerobot.errors import UserError
from teledex_lerobot.inputs.frame import OperatorFrame
from teledex_lerobot.operator.poses import FIST
from teledex_lerobot.presets import PartSpec, load_preset
from teledex_lerobot.rig import Rig

MS = 1_000_000
START = np.array([0.35, -0.20, 1.00, 0.0, 0.0, 0.0, 1.0])


@pytest.fixture(scope="module")
def rig():
    return Rig.from_preset(load_preset("piper_linkerhand_o6_single"))


def moved(pose, dx=0.0, dy=0.0, dz=0.0, yaw=0.0):
    pose = np.array(pose, dtype=float)
    pose[:3] += [dx, dy, dz]
    pose[3:] = (Rotation.from_euler("z", yaw) * Rotation.from_quat(pose[3:])).as_quat()
    return pose


def frame(t_ms, pose=START, trigger=1.0, **extra):
    return OperatorFrame(received_ns=int(t_ms * MS), poses={"right_controller": np.asarray(pose, float)},
                         analog={"right_trigger": trigger, "right_grip": 0.0}, **extra)


def unknown_pose():
    return None


def test_defaults_are_the_guides():
    c = ControlConfig.load()
    assert c.strategy.anchor_threshold == 0.5 and c.stale_timeout_ms == 200
    assert (c.relative_arm.translation_dead_zone_m, c.relative_arm.rotation_dead_zone_rad) == (0.015, 0.035)
    assert c.relative_arm.translation_scale == pytest.approx(1.44)
    assert (c.relative_arm.max_translation_m, c.relative_arm.max_rotation_rad) == (0.5, 1.45)
    assert c.output.average_weights == [0.1, 0.2, 0.3, 0.4] and c.output.smoother_omega_rad_s == 30


def test_config_files_load_and_unknown_keys_fail(tmp_path):
    for name in ("xr_hybrid", "xr_hand_tracking", "glove_direct", "keypoints_hybrid", "leader_direct"):
        ControlConfig.load(name)
    bad = tmp_path / "bad.yaml"
    bad.write_text("relative_arm: {scale: 2}\n")
    with pytest.raises(ValueError, match="relative_arm.*scale.*not valid"):
        ControlConfig.load(str(bad))
    bad.write_text("output: {max_velocity_rad_s: fast}\n")
    with pytest.raises(ValueError, match="output.max_velocity_rad_s"):
        ControlConfig.load(str(bad))
    with pytest.raises(ValueError, match="strategy"):
        ControlConfig.load({"strategy": {"strategy": "telepathy"}})


def test_weighted_average_and_smoother():
    average = WeightedAverage([0.1, 0.2, 0.3, 0.4])
    average(np.zeros(1))
    assert average(np.ones(1))[0] == pytest.approx(0.4)  # history [0, 0, 0, 1]
    smoother = CriticallyDampedSmoother(30.0)
    smoother.reset(np.zeros(1))
    path = np.array([smoother(np.ones(1), 0.01)[0] for _ in range(100)])
    assert np.all(np.diff(path) >= -1e-12) and path.max() <= 1.0  # critically damped: no overshoot
    assert path[-1] == pytest.approx(1.0, abs=1e-6)
    # exact update: one 0.1 s step equals ten 0.01 s steps
    a, b = CriticallyDampedSmoother(30.0), CriticallyDampedSmoother(30.0)
    a.reset(np.zeros(1)), b.reset(np.zeros(1))
    for _ in range(10):
        a(np.ones(1), 0.01)
    assert b(np.ones(1), 0.1)[0] == pytest.approx(a.position[0])


def test_output_chain_soft_limits_and_rate_limit():
    config = OutputChainConfig()
    chain = OutputChain(np.array([-1.0, -1.0]), np.array([1.0, 1.0]), np.zeros(2), config)
    previous = chain.last_sent
    for _ in range(300):
        sent = chain(np.array([5.0, -0.3]), 0.01)
        assert np.all(np.abs(sent - previous) <= config.max_velocity_rad_s * 0.01 + 1e-12)
        assert sent[0] <= 1.0 - config.soft_limit_margin_rad + 1e-12
        previous = sent
    assert sent == pytest.approx([0.98, -0.3], abs=1e-3)
    assert np.array_equal(chain(np.array([np.nan, 0.0]), 0.01), sent)  # non-finite: hold


def test_relative_arm_anchor_dead_zone_scale_and_clamp(rig):
    arm = CartesianRelativeArm(rig.parts["arm"], RelativeArmConfig())
    part = arm.part
    home = part.home
    mount = part.model.frame_pose(part.full_configuration(home), part.mount_frame)
    assert np.array_equal(arm(moved(START, dx=0.1), home), home)  # first frame only anchors
    assert arm.anchored
    assert np.allclose(arm(moved(START, dx=0.1 + 0.01), home), home, atol=1e-9)  # inside the 15 mm dead zone

    def reached(q):
        return part.model.frame_pose(part.full_configuration(q), part.mount_frame)[:3, 3] - mount[:3, 3]

    q = arm(moved(START, dx=0.1, dz=0.05), home)
    assert reached(q) == pytest.approx([0.0, 0.0, (0.05 - 0.015) * 1.44], abs=1e-3)
    arm.reset()
    arm(START, home)
    q = arm(moved(START, dz=2.0), home)  # 1 m jumps and beyond: clamped to 0.5 m around the anchor
    assert np.linalg.norm(reached(q)) <= 0.5 + 1e-3
    assert np.array_equal(arm(START, home, engaged=False), home) and not arm.anchored


def test_state_machine_transitions(caplog):
    machine = TeleopStateMachine()
    assert machine.state == TeleopState.EMERGENCY
    with caplog.at_level(logging.INFO):
        assert not machine.press("L2")  # Teleoperation only from ZeroPos
    assert "L2 ignored in Emergency" in caplog.text
    assert machine.press("L1") and machine.state == TeleopState.ZERO_POS
    assert not machine.press("R2")  # Down only from Emergency or Teleoperation
    assert machine.press("L2") and machine.state == TeleopState.TELEOPERATION
    assert not machine.press("L2")  # already teleoperating (ZeroPos, L1, is reachable from here: test_operator_control)
    assert machine.press("R2") and machine.state == TeleopState.DOWN
    assert machine.press("L1") and machine.state == TeleopState.ZERO_POS
    assert machine.press("R1") and machine.state == TeleopState.EMERGENCY
    assert machine.press("R2") and machine.state == TeleopState.DOWN
    assert machine.press("ENGAGE") and machine.state == TeleopState.ZERO_POS  # one button steps forward
    assert machine.press("ENGAGE") and machine.state == TeleopState.TELEOPERATION
    assert not machine.press("ENGAGE") and machine.state == TeleopState.TELEOPERATION
    keys = ButtonKeys({"X": "L1", "B": "R1"})
    assert keys.presses({"X": True}) == ["L1"] and keys.presses({"X": True}) == []  # held: once
    assert keys.presses({"X": False, "B": True}) == ["R1"]


def at_home(rig):
    return {role: part.home.copy() for role, part in rig.parts.items()}


def teleoperating(rig, **overrides) -> RigController:
    controller = RigController(rig, ControlConfig.load("xr_hybrid", **overrides))
    controller.seed(at_home(rig))
    controller.state_machine.press("L1")
    controller.state_machine.press("L2")
    return controller


def test_starts_where_the_robot_is_and_emergency_holds_there(rig):
    """No command before the measured pose is known; Emergency holds the measured pose exactly, whatever the
    input; ZeroPos, asked for, then ramps home."""
    controller = RigController(rig, ControlConfig.load("xr_hybrid"))
    with pytest.raises(UserError, match="measured pose is unknown"):
        controller.step(frame(0), 0, unknown_pose)
    standing = {"arm": rig.parts["arm"].home + 0.3, "hand": rig.parts["hand"].home + 0.1}
    for t in range(10):
        out = controller.step(frame(t * 10, moved(START, dx=0.3)), t * 10 * MS, lambda: standing)
        assert all(np.array_equal(out[r], standing[r]) for r in out)
    controller.state_machine.press("L1")
    for t in range(10, 200):
        controller.step(None, t * 10 * MS, unknown_pose)
    assert controller.at(controller.home, 1e-3)
    # entering Emergency again holds where the robot is measured, not where it was last sent
    controller.state_machine.press("R1")
    elsewhere = {role: q + 0.01 for role, q in controller.home.items()}
    out = controller.step(None, 200 * 10 * MS, lambda: elsewhere)
    assert all(np.array_equal(out[r], elsewhere[r]) for r in out)


def test_first_frame_after_press_only_anchors_then_follows(rig):
    controller = teleoperating(rig)
    t = 0
    for t in range(5):  # released: nothing moves
        out = controller.step(frame(t * 10, trigger=0.0), t * 10 * MS, unknown_pose)
    home = out["arm"].copy()
    # a press far away only anchors
    out = controller.step(frame(60, moved(START, dz=0.1), trigger=0.6), 60 * MS, unknown_pose)
    assert np.allclose(out["arm"], home)
    for t in range(7, 100):
        out = controller.step(frame(t * 10, moved(START, dz=0.15), trigger=0.6), t * 10 * MS, unknown_pose)
    assert not np.allclose(out["arm"], home, atol=0.01)


def test_stale_input_holds_then_resumes_re_anchored_after_a_long_gap(rig):
    """The stream stops: after 200 ms the last command is held. It resumes 1.5 s later with the trigger still held,
    20 cm away: no re-press is needed and nothing jumps (the first fresh frame re-anchors); then the arm
    follows again."""
    controller = teleoperating(rig)
    now = 0
    for now in range(0, 300, 10):
        pressed = frame(now, trigger=0.0 if now < 50 else 1.0, pose=moved(START, dz=0.001 * now))
        controller.step(pressed, now * MS, unknown_pose)
    last = frame(now, pose=moved(START, dz=0.3))
    controller.step(last, now * MS, unknown_pose)
    before = controller.last_sent["arm"]
    for later in range(now + 10, now + 1500, 10):  # the stream stops: after 200 ms, hold what was sent
        out = controller.step(last, later * MS, unknown_pose)
    assert controller.stale and controller.stale_events == 1 and controller.activity.startswith("holding: input")
    held = out["arm"]
    assert np.max(np.abs(held - before)) <= 20 * controller.config.output.max_velocity_rad_s * 0.01
    out = controller.step(frame(now + 1500, moved(START, dz=0.5)), (now + 1500) * MS, unknown_pose)
    assert np.allclose(out["arm"], held, atol=1e-9) and not controller.stale  # re-anchored there: no jump
    for t in range(now + 1510, now + 1800, 10):
        out = controller.step(frame(t, moved(START, dz=0.55)), t * MS, unknown_pose)
    assert not np.allclose(out["arm"], held, atol=0.01) and controller.activity == "following"


def test_after_a_blip_the_arm_goes_where_the_operator_went_meanwhile(rig):
    """A 300 ms gap while the operator keeps moving: when the stream returns the arm follows on from the same anchor,
    to where the hand is now (the motion made during the gap is not lost), no joint faster than the output chain's
    limit; the same motion with no gap ends at the same place."""
    arm_chain = rig.parts["arm"]

    def flange(q):
        return arm_chain.model.frame_pose(arm_chain.full_configuration(q), arm_chain.mount_frame)[:3, 3]

    def run(gap: bool) -> tuple[np.ndarray, list[np.ndarray]]:
        controller = teleoperating(rig)
        sent = []
        for now in range(0, 2000, 10):  # pressed at 50 ms, rising 8 cm from 100 ms to 900 ms, then still
            rise = float(np.clip(0.0001 * (now - 100), 0.0, 0.08))
            silent = gap and 400 <= now < 700
            out = controller.step(None if silent and now > 400 else frame(now if not silent else 400,
                                  trigger=0.0 if now < 50 else 1.0, pose=moved(START, dz=rise)), now * MS,
                                  unknown_pose)
            sent.append(out["arm"])
        assert controller.stale_events == int(gap) and controller.activity == "following"
        return flange(sent[-1]), sent

    with_gap, sent = run(gap=True)
    without, _ = run(gap=False)
    assert np.linalg.norm(with_gap - without) < 0.002  # where the operator's hand says, gap or not
    limit = OutputChainConfig().max_velocity_rad_s * 0.01
    assert np.max(np.abs(np.diff(sent, axis=0))) <= limit + 1e-9  # the catching up within the speed limit


def test_a_motion_resumed_after_a_long_gap_crosses_no_dead_zone_again(rig):
    """After a gap long enough to re-anchor, the arm follows the operator's next centimetre at once (the dead zone is
    for the start of an engagement; crossed again after every gap it lost 1.5 cm of motion each time). A fresh press
    still has its dead zone."""
    arm_chain = rig.parts["arm"]

    def flange(out):
        return arm_chain.model.frame_pose(arm_chain.full_configuration(out["arm"]), arm_chain.mount_frame)[:3, 3]

    def run(gap: bool) -> float:
        controller = teleoperating(rig)
        now, out = 0, None
        for now in range(0, 600, 10):  # pressed at 50 ms, then rising 5 cm over half a second
            rise = 0.0 if now < 100 else min(0.05, 0.0001 * (now - 100))
            out = controller.step(frame(now, trigger=0.0 if now < 50 else 1.0, pose=moved(START, dz=rise)),
                                  now * MS, unknown_pose)
        if gap:
            for later in range(now + 10, now + 1500, 10):  # a second and a half without a packet
                out = controller.step(None if later > now + 10 else frame(now, pose=moved(START, dz=0.05)),
                                      later * MS, unknown_pose)
            assert controller.stale
            now += 1500
        controller.step(frame(now, pose=moved(START, dz=0.05)), now * MS, unknown_pose)  # back: re-anchors here
        held = flange(controller.last_sent)
        for later in range(now + 10, now + 400, 10):  # 1 cm further up, then still
            out = controller.step(frame(later, pose=moved(START, dz=0.06)), later * MS, unknown_pose)
        return float(flange(out)[2] - held[2])

    after_gap = run(gap=True)
    scale = RelativeArmConfig().translation_scale
    assert after_gap == pytest.approx(0.01 * scale, abs=0.002)  # the whole centimetre, times the gain
    fresh = teleoperating(rig)  # a fresh press: 1 cm stays inside the 1.5 cm dead zone
    fresh.step(frame(0, trigger=1.0), 0, unknown_pose)
    before = flange(fresh.last_sent)
    for t in range(10, 400, 10):
        out = fresh.step(frame(t, pose=moved(START, dz=0.01)), t * MS, unknown_pose)
    assert np.allclose(flange(out), before, atol=1e-4)


def test_strategy_is_chosen_by_config(rig):
    direct = RigStrategy(rig, ControlConfig.load("leader_direct").strategy)
    hybrid = RigStrategy(rig, ControlConfig.load("xr_hybrid").strategy)
    assert direct.arm_control is None and hybrid.arm_control is not None
    reference = {"arm": rig.parts["arm"].home, "hand": rig.parts["hand"].home}
    leader = dict(zip(rig.parts["arm"].joints, [0.1, 0.9, -0.9, 0.0, 0.5, 0.2]))
    targets = direct.targets(OperatorFrame(0, joint_positions=leader, hand_angles_rad={"right": FIST}), reference)
    assert targets["arm"] == pytest.approx([0.1, 0.9, -0.9, 0.0, 0.5, 0.2])
    assert np.all(targets["hand"] > rig.parts["hand"].home)  # a fist closes the hand
    closed = hybrid.targets(OperatorFrame(0, analog={"right_grip": 1.0}), reference)
    assert np.all(closed["hand"] >= targets["hand"] - 1e-9) and np.array_equal(closed["arm"], reference["arm"])
    with pytest.raises(ValueError, match="direct"):
        RigStrategy(rig, ControlConfig.load({"strategy": {"strategy": "direct", "hand_method": "teledex"}}).strategy)
    hand_only = Rig.from_parts(None, PartSpec("linkerhand_l10"))
    assert "arm" not in RigStrategy(hand_only, ControlConfig.load("glove_direct").strategy).targets(
        OperatorFrame(0, hand_angles_rad={"right": FIST}), {"hand": hand_only.parts["hand"].home})


def test_pinch_gesture_buttons_with_hysteresis():
    pinches = PinchButtons(close_m=0.015, open_m=0.03)
    hand = np.zeros((21, 3))

    def gap(metres):
        hand[8] = hand[4] + [metres, 0.0, 0.0]  # index tip beside the thumb tip
        return pinches({"left": hand.copy()})["left_pinch"]

    assert not gap(0.05) and gap(0.01)
    assert gap(0.02)  # between the thresholds: stays pressed
    assert not gap(0.04) and not gap(0.02)  # released; between the thresholds again: stays released


def test_diagnostics_line():
    diagnostics = Diagnostics(1.0)
    assert diagnostics.maybe_report(0, input_age_ms=None, packets=0, parse_failures=0, triggers=(0, 0), stale=True,
                                    state="Emergency") is None
    for _ in range(100):
        diagnostics.add_tick(0.001, 0.0005)
    line = diagnostics.maybe_report(1_000_000_000, input_age_ms=12.0, packets=100, parse_failures=3,
                                    triggers=(0.0, 0.87), stale=False, state="Teleoperation")
    for field in ("input_age_ms=12", "packets=100(total=100)", "parse_fail=3(total=3)", "feedback_hz=100.0",
                  "ik_ms(avg/max)=0.50/0.50", "control_ms(avg/max)=1.00/1.00", "trigger(L/R)=0.00/0.87",
                  "stale=False"):
        assert field in line


def test_a_trigger_dropped_as_bad_is_not_a_release(rig):
    """On entering Teleoperation the arm engages only once every trigger reads released; a trigger whose value was
    dropped as out of range is unknown, not released."""
    controller = teleoperating(rig)
    for t in range(0, 100, 10):
        controller.step(frame(t), t * MS, unknown_pose)
    assert controller.require_release  # entering teleoperation with the trigger held
    bad = frame(110, trigger=0.0)
    del bad.analog["right_trigger"]
    bad.bad_fields.append("right_controller.trigger: 5.0 outside 0..1")
    controller.step(bad, 110 * MS, unknown_pose)
    assert controller.require_release
    controller.step(frame(120, trigger=0.0), 120 * MS, unknown_pose)
    assert not controller.require_release
