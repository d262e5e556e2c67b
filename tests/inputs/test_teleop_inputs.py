"""The live input teleoperators, over loopback with the recorded datagram fixtures (configs/streams/*.datagrams.jsonl):
glove (UDP), XR controllers (local socket), XR hand tracking (the WebXR page's WSS socket), keypoints (UDP), leader
arm (in-process and replayed), file replay, and one master driving two followers.

Senders are paced by the control ticks, not the wall clock (`Ticks`): a datagram recorded at t is sent once the loop
has ticked t / TICK_S times, so a starved loop sees the same stream per tick as an idle one, and what is judged is
what the code does with it."""

import socket
import threading
import time

import numpy as np
import pytest

from lerobot_robot_teledex import Teledex, TeledexConfig, TeledexFollowers, TeledexFollowersConfig
from lerobot_teleoperator_teledex import (
    TeledexGlove,
    TeledexGloveConfig,
    TeledexKeypoints,
    TeledexKeypointsConfig,
    TeledexLeaderArm,
    TeledexLeaderArmConfig,
    TeledexXR,
    TeledexXRConfig,
)
from teledex_lerobot.clock import now_ns
from teledex_lerobot.control.state_machine import TeleopState
from teledex_lerobot.inputs import encode_xr_state
from teledex_lerobot.inputs.datagram_file import read_datagrams
from teledex_lerobot.paths import STREAMS_DIR

PRESET = "piper_linkerhand_o6_single"
TICK_S = 0.01


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def free_tcp_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as probe:
        return probe.getsockname()[1]


def fixture(name):
    return read_datagrams(STREAMS_DIR / f"{name}.datagrams.jsonl")[1]


class Ticks:
    """The control loop's tick count, which the senders wait on."""

    def __init__(self):
        self.count = 0
        self._changed = threading.Condition()

    def advance(self) -> None:
        with self._changed:
            self.count += 1
            self._changed.notify_all()

    def wait(self, ticks: int) -> None:
        """Until `ticks` more ticks have run."""
        self.wait_until(self.count + ticks)

    def wait_until(self, tick: int) -> None:
        with self._changed:
            self._changed.wait_for(lambda: self.count >= tick, timeout=30)

    def pace(self, datagrams, speed: float = 1.0):
        """The recorded (t_ns, bytes) datagrams, each when the loop has ticked up to its time (played at `speed`)."""
        start = self.count
        for t_ns, data in datagrams:
            self.wait_until(start + round(t_ns / 1e9 / speed / TICK_S))
            yield data


def send_paced(ticks: Ticks, datagrams, address, speed: float = 1.0) -> None:
    family = socket.AF_UNIX if isinstance(address, str) else socket.AF_INET
    with socket.socket(family, socket.SOCK_DGRAM) as sock:
        for data in ticks.pace(datagrams, speed):
            sock.sendto(data, address)


def drive(teleop, send, robot=None, seconds=None, while_connected=None):
    """Run `send(ticks)` in a thread while ticking get_action (-> robot) every ~TICK_S until it is done; actions in
    order. Without a robot, a perfect one: it is measured exactly where it was last sent (at home first).
    `while_connected(teleop)` runs after the last tick, before the teleop disconnects."""
    ticks = Ticks()
    sender = threading.Thread(target=send, args=(ticks,), daemon=True)
    teleop.connect()
    if robot is not None:
        robot.connect()
    actions = []
    try:
        sender.start()
        homes = {prefix: c.rig.join({role: part.home for role, part in c.rig.parts.items()})
                 for prefix, c in teleop.followers.items()}
        teleop.send_feedback({prefix + key: q for prefix, home in homes.items() for key, q in home.items()})
        while sender.is_alive() or (seconds and ticks.count * TICK_S < seconds):
            if robot is not None:
                robot.get_observation()  # a TeleDex robot tells the teleoperator where it is
            action = teleop.get_action()
            # on this machine's clock (another clock's epoch would be hours away), and never from the future
            assert teleop.sample_capture_ns is None or 0 <= now_ns() - teleop.sample_capture_ns < 60e9
            actions.append(robot.send_action(action) if robot is not None else action)
            if robot is None:
                teleop.send_feedback(action)
            ticks.advance()
            time.sleep(TICK_S)
        sender.join(timeout=10)
        if while_connected is not None:
            while_connected(teleop)
    finally:
        teleop.disconnect()
        if robot is not None:
            robot.disconnect()
    return actions


def values(actions, keys):
    return np.array([[action[k] for k in keys] for action in actions])


def assert_within_limits(part, q):
    assert np.all(q >= part.lower - 1e-9) and np.all(q <= part.upper + 1e-9)


def test_glove_over_udp_closes_the_hand_and_counts_bad_packets():
    port = free_port()
    teleop = TeledexGlove(TeledexGloveConfig(preset=PRESET, port=port))
    robot = Teledex(TeledexConfig(backend="fake"))
    assert teleop.action_features == robot.action_features

    seen = {}

    def send(ticks):
        seen["receiver"] = teleop.receiver
        send_paced(ticks, fixture("glove_open_close") + [(8_100_000_000, b"\x00garbage"), (8_110_000_000, b'{"g":')],
                   ("127.0.0.1", port), speed=8.0)
        for _ in range(1000):  # until the receiver has taken the last packet
            if teleop.receiver.parse_failures == 2:
                break
            ticks.wait(1)

    actions = drive(teleop, send, robot)
    receiver = seen["receiver"]
    hand, arm = teleop.rig.parts["hand"], teleop.rig.parts["arm"]
    q = values(actions, hand.keys)
    assert_within_limits(hand, q)
    span = (q.max(0) - q.min(0)) / (hand.upper - hand.lower)
    assert np.all(span[2:] > 0.5), span  # the four finger flexions close over most of their range
    assert np.allclose(values(actions, arm.keys), arm.home, atol=1e-6)  # a glove alone does not move the arm
    assert teleop.state_machine.state == TeleopState.TELEOPERATION  # auto_start: L1, then L2 at the zero pose
    assert teleop.receiver is None  # disconnected
    assert receiver.parse_failures == 2 and receiver.packets == len(fixture("glove_open_close"))


def test_xr_controller_over_local_socket(tmp_path):
    path = str(tmp_path / "xr.sock")
    teleop = TeledexXR(TeledexXRConfig(preset=PRESET, source="unix", socket_path=path))
    reach = fixture("xr_controller_reach")
    actions = drive(teleop, lambda ticks: (ticks.wait(10), send_paced(ticks, reach, path, 3.0)))
    arm, hand = teleop.rig.parts["arm"], teleop.rig.parts["hand"]
    # buttons X then Y: ZeroPos, Teleoperation; the trigger held: the arm follows the circle; the grip: a fist
    assert teleop.state_machine.state == TeleopState.TELEOPERATION
    q_arm, q_hand = values(actions, arm.keys), values(actions, hand.keys)
    assert_within_limits(arm, q_arm)
    assert np.ptp(q_arm, axis=0).max() > 0.05
    assert np.all(q_hand.max(0) - q_hand.min(0) > 0.3 * (hand.upper - hand.lower))


def test_xr_hand_tracking_over_the_webxr_socket(tmp_path):
    import ssl

    from sockets import connect

    port = free_tcp_port()
    teleop = TeledexXR(TeledexXRConfig(preset=PRESET, source="webxr", port=port, control="xr_hand_tracking",
                                       auto_start=True, certificate_dir=str(tmp_path)))

    def send(ticks):
        trust = ssl.create_default_context(cafile=tmp_path / "cert.pem")  # the certificate made on connect
        with connect(f"wss://127.0.0.1:{port}/ws", ssl=trust) as client:
            for data in ticks.pace(fixture("xr_hand_tracking"), speed=4.0):
                client.send(data.decode())

    actions = drive(teleop, send)
    hand = teleop.rig.parts["hand"]
    q = values(actions, hand.keys)
    assert_within_limits(hand, q)
    assert np.all(np.ptp(q, axis=0)[2:] > 0.3 * (hand.upper - hand.lower)[2:])
    assert teleop.receiver is None


def test_keypoint_stream_moves_arm_and_hand():
    port = free_port()
    teleop = TeledexKeypoints(TeledexKeypointsConfig(preset=PRESET, port=port))
    actions = drive(teleop, lambda ticks: send_paced(ticks, fixture("wrist_motion"), ("127.0.0.1", port), 5.0))
    arm = teleop.rig.parts["arm"]
    q = values(actions, arm.keys)
    assert_within_limits(arm, q)
    assert np.ptp(q, axis=0).max() > 0.05


def test_leader_arm_in_process_and_replayed():
    teleop = TeledexLeaderArm(TeledexLeaderArmConfig(leader_backend="fake", preset="piper_linkerhand_o6_single"))
    arm = teleop.rig.parts["arm"]
    target = arm.home + np.array([0.3, -0.2, 0.2, 0.1, -0.2, 0.3])

    def move_leader(ticks):
        ticks.wait(20)
        leader = teleop._source.part  # every actuated joint of the leader Piper: joint1..joint6 and the gripper
        teleop._source.device.command(np.r_[target, leader.home[leader.joints.index("gripper")]])
        ticks.wait(80)

    actions = drive(teleop, move_leader)
    assert values(actions, arm.keys)[-1] == pytest.approx(target, abs=1e-3)
    replay = TeledexLeaderArm(TeledexLeaderArmConfig(preset=PRESET, source="replay", replay_file="leader_arm_wave",
                                                     replay_speed=3, replay_loop=False))
    q = values(drive(replay, lambda ticks: ticks.wait(200)), arm.keys)
    assert np.ptp(q[:, 0]) > 0.3 and np.ptp(q[:, 4]) > 0.2  # joint1 and joint5 wave, the others hold
    assert np.ptp(q[:, [1, 2, 3, 5]], axis=0).max() < 1e-6


def test_one_master_two_followers_each_with_its_own_chain():
    followers = {"left": "piper_linkerhand_o6_single", "right": "piper_linkerhand_o6_single"}
    teleop = TeledexXR(TeledexXRConfig(source="udp", port=free_port(), followers=followers,
                                       follower_controls={"left": "xr_left_hybrid"}))
    robot = TeledexFollowers(TeledexFollowersConfig(followers=followers, backend="fake", with_cameras=False))
    assert teleop.action_features == robot.action_features
    assert all(k.startswith(("left_", "right_")) for k in robot.action_features)
    port = teleop.config.port

    def send(ticks):
        start = np.array([0.35, 0.2, 1.0, 0.0, 0.0, 0.0, 1.0])
        datagrams = []
        for k in range(150):
            left = start + [0.0, 0.0, 0.001 * k, 0, 0, 0, 0]  # the left hand rises with its trigger held
            buttons = {"primary": 10 <= k < 12, "secondary": 20 <= k < 22}  # X (ZeroPos), Y (Teleoperation)
            datagrams.append((k * 10_000_000, encode_xr_state(controllers={
                "left": {"pose": left, "trigger": 1.0 if k > 30 else 0.0, "grip": 1.0, **buttons},
                "right": {"pose": start, "trigger": 0.0, "grip": 0.0}})))
        send_paced(ticks, datagrams, ("127.0.0.1", port))

    actions = drive(teleop, send, robot)
    left_arm = values(actions, [f"left_{k}" for k in teleop.followers["left_"].rig.parts["arm"].keys])
    right_arm = values(actions, [f"right_{k}" for k in teleop.followers["right_"].rig.parts["arm"].keys])
    left_hand = values(actions, [f"left_{k}" for k in teleop.followers["left_"].rig.parts["hand"].keys])
    assert np.ptp(left_arm, axis=0).max() > 0.05  # follows the left controller
    assert np.ptp(right_arm, axis=0).max() < 1e-6  # the right trigger is never pressed
    assert left_hand[-1].mean() > left_hand[0].mean()  # left grip closes the left hand


def test_two_controllers_drive_a_bimanual_robot_left_to_left_and_each_arm_engages_on_its_own():
    """A several-rig preset with one control config: each follower is worked by the operator's hand on its side
    (the left rig by the left controller), and each arm's engagement is its own trigger's: releasing the left
    trigger holds the left arm while the right one goes on following."""
    robot = TeledexFollowers(TeledexFollowersConfig(preset="bimanual_piper_linkerhand_l10", backend="fake",
                                                    with_cameras=False))
    teleop = TeledexXR(TeledexXRConfig(source="udp", port=free_port()))
    port = teleop.config.port
    start = {"left": np.array([0.35, 1.0, -0.2, 0.0, 0.0, 0.0, 1.0]),
             "right": np.array([-0.35, 1.0, -0.2, 0.0, 0.0, 0.0, 1.0])}

    def send(ticks):
        datagrams = []
        for k in range(260):
            buttons = {"primary": 10 <= k < 12, "secondary": 20 <= k < 22}  # X (ZeroPos), Y (Teleoperation)
            moved = 0.001 * max(k - 40, 0)
            datagrams.append((k * 10_000_000, encode_xr_state(controllers={
                # both move from tick 40; the left trigger is held from 30 to 120, the right from 30 to the end
                "left": {"pose": start["left"] + [0, moved, 0, 0, 0, 0, 0], "trigger": float(30 < k < 120),
                         **buttons},
                "right": {"pose": start["right"] + [0, 0, -moved, 0, 0, 0, 0], "trigger": float(k > 30)}})))
        send_paced(ticks, datagrams, ("127.0.0.1", port))

    robot.connect()  # the robot first: the teleoperator drives the rigs it announces
    try:
        assert teleop.followers["left_"].config.strategy.arm_pose_source == "left_controller"
        assert teleop.followers["left_"].config.strategy.anchor_input == "left_trigger"
        assert teleop.followers["right_"].config.strategy.arm_pose_source == "right_controller"
    finally:
        robot.disconnect()
    actions = drive(teleop, send, robot)
    arm = {side: values(actions, [f"{side}_{k}" for k in teleop.followers[f"{side}_"].rig.parts["arm"].keys])
           for side in ("left", "right")}
    assert np.ptp(arm["left"][40:115], axis=0).max() > 0.05  # the left arm follows its controller while engaged
    released = slice(160, len(actions))  # well after the left trigger's release (the output chain has settled)
    assert np.ptp(arm["left"][released], axis=0).max() < 1e-3  # ...and holds once its trigger is released
    assert np.ptp(arm["right"][released], axis=0).max() > 0.05  # while the right one follows on
