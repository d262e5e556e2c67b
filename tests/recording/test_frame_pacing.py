"""A camera slower than the control loop never slows the loop: observations then take the camera's newest frame
instead of waiting for the next one; a camera at least as fast as the loop is waited for (fresh frames, one
instant per observation). Slower is what the camera delivers, not only what its fps says (a rendered camera on a
loaded machine). Judged on the decisions, on a simulated clock, not on this machine's timing."""

import numpy as np

from lerobot_robot_teledex import TeledexArm, TeledexArmConfig
from lerobot_robot_teledex.robots.frame_pacing import FramePacing
from teledex_lerobot.clock import LockstepClock

MS = 1_000_000


def decisions(loop_hz: float, camera_fps: float, ticks: int = 30) -> list[bool]:
    pacing, waits = FramePacing(), []
    for k in range(ticks):
        pacing.observation_started(int(k * 1e9 / loop_hz))
        waits.append(pacing.wait_for_next_frame("front", camera_fps))
    return waits


def test_a_loop_faster_than_the_camera_never_waits():
    assert not any(decisions(loop_hz=100, camera_fps=30))
    assert not any(decisions(loop_hz=50, camera_fps=30))


def test_a_camera_at_least_as_fast_as_the_loop_is_waited_for_once_the_loop_rate_is_known():
    waits = decisions(loop_hz=25, camera_fps=25)
    assert not any(waits[:3]) and all(waits[3:])  # three intervals learn the loop's period
    assert all(decisions(loop_hz=25, camera_fps=30)[3:])


def test_intervals_that_waited_do_not_teach_the_loop_period():
    """A wait stretches the interval it falls in; learning from it would lock a fast loop to the camera."""
    pacing = FramePacing()
    for k in range(5):  # a 25 Hz loop with a 25 fps camera: waits from the fourth observation on
        pacing.observation_started(k * 40 * MS)
        pacing.wait_for_next_frame("front", 25)
    learned = pacing.loop_period_ns
    pacing.observation_started(5 * 40 * MS + 500 * MS)  # that observation waited half a second
    assert pacing.loop_period_ns == learned


class StubCamera:
    """Connects and disconnects as a camera does; its frames are the subclass's."""

    def connect(self, *_):
        pass

    @property
    def is_connected(self):
        return True

    def disconnect(self):
        pass


class NewestFrameOnly(StubCamera):
    """A camera that fails the test if the robot waits on it."""

    fps, width, height = 30, 8, 6

    def __init__(self):
        self.newest_reads = 0

    def async_read(self, timeout_ms=0):
        raise AssertionError("waited for the next frame of a camera slower than the loop")

    def read_latest(self, max_age_ms=0):
        self.newest_reads += 1
        return np.zeros((self.height, self.width, 3), np.uint8)


def test_robot_at_100_hz_with_a_30_fps_camera_takes_the_newest_frame(monkeypatch):
    robot = TeledexArm(TeledexArmConfig(backend="fake"))
    camera = NewestFrameOnly()
    robot.cameras = {"front": camera}
    robot.connect()
    clock = LockstepClock()  # a clock that moves only when the test says
    monkeypatch.setattr(TeledexArm, "clock", property(lambda _: clock))
    try:
        for _ in range(20):
            clock.advance(10 * MS)
            assert robot.get_observation()["front"].shape == (6, 8, 3)
    finally:
        robot.disconnect()
    assert camera.newest_reads == 20


class LateFrames(StubCamera):
    """A 25 fps camera that delivers a frame every 77 ms (as the world's 640x480 camera did on a loaded 2-core
    machine); it counts the observations that waited for it."""

    fps, width, height = 25, 8, 6
    interval_ns = 77 * MS

    def __init__(self, clock: LockstepClock):
        self.clock = clock
        self.waits = 0

    @property
    def capture_ns(self) -> int:
        return self.clock.now_ns() // self.interval_ns * self.interval_ns

    def async_read(self, timeout_ms=0):
        self.waits += 1
        return np.zeros((self.height, self.width, 3), np.uint8)

    def read_latest(self, max_age_ms=0):
        return np.zeros((self.height, self.width, 3), np.uint8)


def test_a_camera_that_delivers_fewer_frames_than_its_fps_is_no_longer_waited_for(monkeypatch):
    """The loop at 25 Hz would follow it down to 13 Hz; once four of its frames have shown its rate, the loop takes
    its newest frame each tick instead (the sync check judges that frame's age)."""
    robot = TeledexArm(TeledexArmConfig(backend="fake"))
    clock = LockstepClock()
    camera = LateFrames(clock)
    robot.cameras = {"front": camera}
    robot.connect()
    monkeypatch.setattr(TeledexArm, "clock", property(lambda _: clock))
    try:
        for _ in range(50):
            clock.advance(40 * MS)
            robot.get_observation()
    finally:
        robot.disconnect()
    assert camera.waits <= 6  # the ticks before the camera's rate was known
