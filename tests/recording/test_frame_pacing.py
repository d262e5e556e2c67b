"""A camera slower than the control loop never slows the loop: observations then take the camera's newest frame
instead of waiting for the next one; a camera at least as fast as the loop is waited for (fresh frames, one
instant per observation). Judged on the decisions, on a simulated clock, not on this machine's timing."""

import numpy as np

from lerobot_robot_teledex import TeledexArm, TeledexArmConfig
from lerobot_robot_teledex.frame_pacing import FramePacing
from teledex_lerobot.clock import LockstepClock

MS = 1_000_000


def decisions(loop_hz: float, camera_fps: float, ticks: int = 30) -> list[bool]:
    pacing, waits = FramePacing(), []
    for k in range(ticks):
        pacing.observation_started(int(k * 1e9 / loop_hz))
        waits.append(pacing.wait_for_next_frame(camera_fps))
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
        pacing.wait_for_next_frame(25)
    learned = pacing.loop_period_ns
    pacing.observation_started(5 * 40 * MS + 500 * MS)  # that observation waited half a second
    assert pacing.loop_period_ns == learned


class NewestFrameOnly:
    """A camera that fails the test if the robot waits on it."""

    fps, width, height = 30, 8, 6

    def __init__(self):
        self.newest_reads = 0

    def connect(self, *_):
        pass

    @property
    def is_connected(self):
        return True

    def disconnect(self):
        pass

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
