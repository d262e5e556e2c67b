"""The world robot's start, as a loaded machine meets it: the physics thread iterates parts that never change under it
(a part connecting or disconnecting while the thread is mid-step breaks nothing), and a world camera whose first
frame takes long (its OpenGL context is built then: seconds on a loaded machine) does not fail the start, while one
whose renderer fails, or never renders, ends it in one line naming the camera. The races are forced with events."""

import threading
import time

import pytest

from lerobot_robot_teledex.cameras import render_camera
from lerobot_robot_teledex.cameras.config_world_camera import TeledexWorldCameraConfig
from lerobot_robot_teledex.cameras.world_camera import TeledexWorldCamera
from lerobot_robot_teledex.robots.config_teledex import TeledexConfig
from teledex_lerobot.errors import DeviceError
from teledex_lerobot.presets import load_preset
from teledex_lerobot.rig import Rig
from teledex_lerobot.world.devices import make_world_devices

# Longer than the 2 s the camera's warm-up allowed before: a first frame that slow failed the start.
SLOW_FIRST_FRAME_S = 3.0


@pytest.fixture
def world_devices():
    config = TeledexConfig(backend="mujoco", preset_cameras=False)
    devices = make_world_devices(Rig.from_preset(load_preset(config.preset)), config)
    yield devices
    for device in devices.values():
        device.disconnect()


def _hold_the_physics_thread_in_its_parts_loop(device, failures: list, monkeypatch) -> tuple[threading.Event, ...]:
    """The physics thread stops inside its loop over the parts (in `device`'s first apply_due) until `go` is set;
    `progressed` is set when it steps again, or when it died (its exception in `failures`)."""
    inside, go, progressed = threading.Event(), threading.Event(), threading.Event()
    calls = []
    apply_due = device.apply_due

    def held(tick_ns):
        calls.append(tick_ns)
        if len(calls) == 1:
            inside.set()
            go.wait(60)
        elif len(calls) == 2:
            progressed.set()
        apply_due(tick_ns)

    device.apply_due = held
    previous_hook = threading.excepthook

    def died(args):
        failures.append(args.exc_value)
        progressed.set()
        previous_hook(args)

    monkeypatch.setattr(threading, "excepthook", died)
    return inside, go, progressed


@pytest.mark.parametrize("change", ["connect", "disconnect"])
def test_a_part_that_connects_or_disconnects_while_the_physics_thread_steps_breaks_nothing(world_devices, change,
                                                                                           monkeypatch):
    arm, hand = world_devices["arm"], world_devices["hand"]
    failures: list[BaseException] = []
    if change == "disconnect":
        hand.connect()
    inside, go, progressed = _hold_the_physics_thread_in_its_parts_loop(arm, failures, monkeypatch)
    arm.connect()
    assert inside.wait(60)
    getattr(hand, change)()  # while the physics thread is between two parts
    go.set()
    assert progressed.wait(60)
    assert not failures, failures
    assert arm.runner._thread.is_alive()


def _world_camera(renderer_render) -> TeledexWorldCamera:
    """A world camera of a real-time world whose renderer's render() is `renderer_render(render)`."""
    config = TeledexConfig(backend="mujoco", preset_cameras=False,
                           cameras={"top": TeledexWorldCameraConfig(view="oblique", width=64, height=48, fps=25)})
    devices = make_world_devices(Rig.from_preset(load_preset(config.preset)), config)
    camera = TeledexWorldCamera(config.cameras["top"])
    camera.attach_world(next(iter(devices.values())).runner)
    renderer = camera.world_renderer
    assert renderer is not None
    render = renderer.render
    renderer.render = lambda: renderer_render(render)
    return camera


def test_a_camera_whose_first_frame_is_slow_does_not_fail_the_start():
    rendered = []

    def slow_first(render):  # the first render builds the OpenGL context: seconds on a loaded machine
        if not rendered:
            time.sleep(SLOW_FIRST_FRAME_S)
        rendered.append(True)
        return render()

    camera = _world_camera(slow_first)
    camera.connect()
    try:
        assert camera.read_latest(max_age_ms=60_000).shape == (48, 64, 3)
    finally:
        camera.disconnect()


def test_a_camera_that_cannot_render_ends_the_start_in_one_line_naming_it():
    def fails(_render):
        raise RuntimeError("eglInitialize failed")

    camera = _world_camera(fails)
    with pytest.raises(DeviceError, match=r"TeledexWorldCamera\(oblique\) cannot render: RuntimeError: "
                                          r"eglInitialize failed; .*MUJOCO_GL=egl"):
        camera.connect()


def test_a_camera_that_never_renders_ends_the_start_in_one_line_naming_it(monkeypatch):
    monkeypatch.setattr(render_camera, "FIRST_FRAME_TIMEOUT_S", 0.2)
    released = threading.Event()

    def never(render):
        released.wait(60)
        return render()

    camera = _world_camera(never)
    try:
        with pytest.raises(DeviceError, match=r"TeledexWorldCamera\(oblique\): no first frame within 0.2 s.*lower the "
                                              "camera's width, height or fps"):
            camera.connect()
    finally:
        released.set()  # its capture thread, told to stop, ends with that render
