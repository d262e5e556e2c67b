"""The per-frame TimeSync check and the sync-validation wrapper around any LeRobot robot."""

import time
from functools import cached_property

import pytest
from lerobot.robots import Robot, RobotConfig

from lerobot_robot_teledex import Teledex, TeledexConfig
from lerobot_robot_teledex.sync_validated import ROBOT_SOURCE, SyncValidatedRobot
from teledex_lerobot.capabilities import RecordableRobot
from teledex_lerobot.clock import now_ns
from teledex_lerobot.sync import SyncPolicy, validate_timestamps

MS = 1_000_000


def test_valid_when_fresh_and_consistent():
    now = 10_000 * MS
    packet = validate_timestamps({"arm": now - 5 * MS, "hand": now - 60 * MS, "cam": now - 20 * MS}, now, SyncPolicy())
    assert packet.valid and packet.fresh and packet.consistent
    assert packet.max_diff_ns == 55 * MS and packet.max_diff_ms == pytest.approx(55.0)
    assert packet.timestamps_ns["hand"] == now - 60 * MS and packet.checked_ns == now


def test_inconsistent_beyond_tolerance():
    now = 10_000 * MS
    packet = validate_timestamps({"arm": now, "cam": now - 101 * MS}, now, SyncPolicy(tolerance_ms=100))
    assert not packet.valid and packet.fresh and not packet.consistent


def test_stale_and_missing_sources():
    now = 10_000 * MS
    packet = validate_timestamps({"arm": now - 1500 * MS, "cam": None, "hand": now}, now, SyncPolicy())
    assert not packet.valid and not packet.fresh
    assert packet.stale_sources == ("arm", "cam")


def test_policy_rejects_nonsense():
    with pytest.raises(ValueError):
        SyncPolicy(tolerance_ms=0)


def test_wrapper_on_teledex_robot_reports_every_source():
    robot = SyncValidatedRobot(Teledex(TeledexConfig(backend="sim")))
    robot.connect()
    try:
        observation = robot.get_observation()
        packet = robot.validate({"input": now_ns()})
        assert set(packet.timestamps_ns) == {"arm", "hand", "top", "wrist", "input"}
        assert packet.valid, packet
        assert set(observation) == set(robot.observation_features)  # the observation itself is unchanged
    finally:
        robot.disconnect()


class _PlainCameraStandIn:
    """What LeRobot's camera threads expose: the capture time on time.perf_counter."""

    def __init__(self, age_s: float):
        self.latest_timestamp = time.perf_counter() - age_s
        self.is_connected = True


class _PlainRobotConfig(RobotConfig):
    pass


class _PlainRobot(Robot):
    """A LeRobot robot that knows nothing of TeleDex."""

    config_class = _PlainRobotConfig
    name = "plain"

    def __init__(self, camera_age_s: float):
        super().__init__(_PlainRobotConfig())
        self.cameras = {"wrist": _PlainCameraStandIn(camera_age_s)}
        self._connected = False

    @cached_property
    def observation_features(self):
        return {"j.pos": float}

    @cached_property
    def action_features(self):
        return {"j.pos": float}

    @property
    def is_connected(self):
        return self._connected

    def connect(self, calibrate=True):
        self._connected = True

    @property
    def is_calibrated(self):
        return True

    def calibrate(self):
        pass

    def configure(self):
        pass

    def get_observation(self):
        return {"j.pos": 0.0}

    def send_action(self, action):
        return action

    def disconnect(self):
        self._connected = False


@pytest.mark.parametrize(("camera_age_s", "valid"), [(0.01, True), (0.3, False)])
def test_wrapper_on_any_lerobot_robot(camera_age_s, valid):
    robot = SyncValidatedRobot(_PlainRobot(camera_age_s), SyncPolicy(tolerance_ms=100))
    robot.connect()
    assert robot.get_observation() == {"j.pos": 0.0}
    packet = robot.validate()
    assert set(packet.timestamps_ns) == {ROBOT_SOURCE, "wrist"}
    assert packet.valid is valid
    assert packet.max_diff_ms == pytest.approx(camera_age_s * 1e3, abs=5)
    assert robot.name == "plain"  # LeRobot's Robot interface passes through to the robot


def test_the_wrapper_answers_what_the_recording_asks_and_forwards_nothing_else():
    plain = SyncValidatedRobot(_PlainRobot(0.01))
    assert isinstance(plain, RecordableRobot)
    assert not plain.lockstep and not plain.judges_episodes
    assert plain.episode_outcome() is None and plain.world_episode() is None
    assert not plain.start_episode(0)  # no episodes to start: the input is not told
    assert plain.device_faults() == {} and plain.fault_lookback_ns == 0
    assert not hasattr(plain, "is_calibrated")  # anything else is the robot's own: plain.robot
    teledex = SyncValidatedRobot(Teledex(TeledexConfig(backend="fake", preset_cameras=False)))
    assert teledex.robot.world is None and not teledex.judges_episodes
    teledex.connect()
    try:
        assert teledex.start_episode(0)  # a TeleDex robot is told, with nothing to lay out: the input restarts
    finally:
        teledex.disconnect()


def test_a_device_gives_the_report_nearest_a_past_instant_not_its_latest():
    """read_nearest, which the observation samples each part with: for an instant between two older reports, the
    nearer of them (the robot-level test below cannot tell nearest from latest: its frames are fresh)."""
    robot = Teledex(TeledexConfig(backend="sim"))
    robot.connect()
    arm = robot.devices["arm"]
    try:
        deadline = time.monotonic() + 10
        while len(arm._reported) < 20 and time.monotonic() < deadline:
            time.sleep(0.01)
        stamps = sorted(state.capture_ns for state in arm._reported)
        assert len(stamps) >= 20, "the simulated arm stopped reporting"
        early, late = stamps[-12], stamps[-11]
        assert arm.read_nearest(early + (late - early) // 4).capture_ns == early
        assert arm.read_nearest(late - (late - early) // 4).capture_ns == late
    finally:
        robot.disconnect()


def test_observation_parts_are_sampled_at_the_camera_frame_time():
    """Each part's measurement is the one reported nearest the newest camera frame (top or wrist: the instant the
    observation describes): of the arm's reports around that frame's capture, the one before or the one after it.
    Judged on the reports' own stamps, not a bound in milliseconds, which the arm thread's slips on a loaded machine
    would break by chance."""
    robot = SyncValidatedRobot(Teledex(TeledexConfig(backend="sim")))
    robot.connect()
    arm = robot.robot.devices["arm"]
    try:
        frames = set()
        deadline = time.monotonic() + 60
        while len(frames) < 25 and time.monotonic() < deadline:  # 25 distinct camera frames, not one read 25 times
            called_ns = now_ns()
            robot.get_observation()
            stamps = robot.last_timestamps_ns
            if stamps["top"] in frames:
                time.sleep(0.005)
                continue
            frames.add(stamps["top"])
            frame_ns = max(stamps[camera] for camera in robot.robot.cameras)
            reported = sorted(state.capture_ns for state in arm._reported)
            before = [t for t in reported if t <= frame_ns]
            after = [t for t in reported if t > frame_ns]
            around = before[-1:] + after[:1]
            assert before and stamps["arm"] in around, (stamps, around)
            if len(around) == 2 and around[1] < called_ns - 5 * MS:  # both surely reported before the read
                assert stamps["arm"] == min(around, key=lambda t: abs(t - frame_ns)), (stamps, around)
        assert len(frames) == 25, "the simulated camera stopped delivering frames"
    finally:
        robot.disconnect()
