"""Our WebXR page in a real headless Chromium, with navigator.xr emulated as a Quest 3 by Meta's IWER
(tests/browser.py): it opens over HTTPS with the self-signed certificate, connects its WSS socket, enters VR on a click,
streams the controllers (buttons drive the state machine, the trigger and a controller motion move the robot's arm)
and then the tracked hands (25 joints each), and shows the teleop's status, robot faults included, on the page and on
its in-headset panel."""

import io
import threading
import time

import numpy as np
import pytest
from browser import Chromium, require_browser
from test_teleop_inputs import PRESET, free_tcp_port

from teledex_lerobot.control.state_machine import TeleopState


def wait_until(condition, timeout_s=10.0):
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


class Loop:
    """The control loop (lerobot-teleoperate's): teleop -> robot at ~100 Hz in a thread; the arm commands kept."""

    def __init__(self, teleop, robot):
        self.teleop, self.robot, self.arm = teleop, robot, []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        keys = self.teleop.rig.parts["arm"].keys
        while not self._stop.is_set():
            sent = self.robot.send_action(self.teleop.get_action())
            self.arm.append([sent[k] for k in keys])
            time.sleep(0.01)

    def stop(self):
        self._stop.set()
        self._thread.join(timeout=5)


def press(page, hand, button):
    page.evaluate(f"xrDevice.controllers.{hand}.updateButtonValue('{button}', 1)")
    time.sleep(0.15)
    page.evaluate(f"xrDevice.controllers.{hand}.updateButtonValue('{button}', 0)")


def red_pixels(png: bytes) -> int:
    """How many screenshot pixels are the panel's fault red (the scene around it is near black)."""
    from PIL import Image

    red, green, blue = np.moveaxis(np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int), -1, 0)
    return int(np.sum((red > 90) & (green < 50) & (blue < 50)))


def test_emulated_quest_page_drives_the_robot(tmp_path):
    from lerobot_robot_teledex import Teledex, TeledexConfig
    from lerobot_teleoperator_teledex import TeledexXR, TeledexXRConfig

    chromium, iwer = require_browser()
    port = free_tcp_port()
    teleop = TeledexXR(TeledexXRConfig(preset=PRESET, source="webxr", port=port, certificate_dir=str(tmp_path)))
    robot = Teledex(TeledexConfig(backend="fake"))
    teleop.connect()
    robot.connect()
    loop = Loop(teleop, robot)
    browser = Chromium(chromium)
    try:
        page = browser.open(f"https://127.0.0.1:{port}/", iwer)
        page.enter_vr()
        wait_until(lambda: teleop.frame is not None and "right_controller" in teleop.frame.poses)
        frame = teleop.frame
        assert set(frame.poses) == {"head", "left_controller", "right_controller"} and not frame.bad_fields
        assert frame.sender_time_ns is not None and frame.capture_ns <= frame.received_ns

        press(page, "left", "x-button")  # X: ZeroPos
        wait_until(lambda: teleop.state_machine.state == TeleopState.ZERO_POS)
        press(page, "left", "y-button")  # Y: Teleoperation
        wait_until(lambda: teleop.state_machine.state == TeleopState.TELEOPERATION)
        page.wait_for("document.getElementById('status').textContent.includes('State: Teleoperation')")
        assert "Buttons: X L1, Y L2, B R1, A R2" in page.evaluate("document.getElementById('status').textContent")

        start = teleop.frame.poses["right_controller"][:3].copy()
        page.evaluate("xrDevice.controllers.right.updateButtonValue('trigger', 1)")
        time.sleep(0.3)
        for _ in range(20):  # the controller 20 cm forward (XR -z) over 1 s, trigger held
            page.evaluate("xrDevice.controllers.right.position.z -= 0.01")
            time.sleep(0.05)
        time.sleep(0.5)
        moved = teleop.frame.poses["right_controller"][:3] - start
        assert moved == pytest.approx([0.2, 0.0, 0.0], abs=0.01)  # operator frame: x forward
        arm = np.array(loop.arm)
        assert np.ptp(arm[-150:], axis=0).max() > 0.05  # the arm followed

        teleop.report_robot_faults({"hand": "feedback timeout"})
        page.wait_for("document.getElementById('status').textContent.includes('FAULT hand: feedback timeout')")
        time.sleep(0.3)  # the panel repaints on the next XR frame
        png = page.screenshot_png()  # IWER shows the headset's view (the XR framebuffer) on the page
        (tmp_path / "headset_view.png").write_bytes(png)
        assert red_pixels(png) > 3000  # the status panel, red with a fault (about 200 x 60 px at this distance)

        # a second headset's page, while this one tracks: refused, it says so in red and shows nothing of the robot
        other = browser.open(f"https://127.0.0.1:{port}/", iwer, new_tab=True)
        other.wait_for("document.getElementById('status').textContent.includes('REFUSED')", 30)
        assert other.evaluate("document.getElementById('status').className") == "bad"
        assert "State:" not in other.evaluate("document.getElementById('status').textContent")
        assert other.evaluate("window.teledexView.page.scene === null && "
                              "Object.keys(window.teledexView.view.frames).length === 0")
        other.call("Page.close")  # the tab goes, and the operator's comes back to the front (hidden, it draws nothing)
        other.close()
        page.call("Page.bringToFront")

        page.evaluate("xrDevice.primaryInputMode = 'hand'")  # hand tracking instead of controllers
        wait_until(lambda: set(teleop.frame.hand_keypoints_m) == {"left", "right"})
        frame = teleop.frame
        assert frame.invalid_devices == {} and frame.hand_high_quality == {"left": True, "right": True}
        assert all(frame.hand_keypoints_valid(side).all() for side in ("left", "right"))
        assert 0.05 < np.linalg.norm(frame.hand_keypoints_m["right"][12]) < 0.25  # middle tip from the wrist, m
    finally:
        loop.stop()
        browser.close()
        teleop.disconnect()
        robot.disconnect()


def test_the_page_draws_a_vendor_urdfs_meshes_and_gets_them_again_after_a_reload(tmp_path):
    """The headset draws each link of a URDF with visual geometry as its mesh, moved by the scene messages: every
    triangle of the body message is drawn in the emulated Quest (counted by the page: `teledexView.drawn()`)."""
    import base64

    from vendor_urdf import vendor_package

    from teledex_lerobot.inputs import InputReceiver, parse_xr_state
    from teledex_lerobot.inputs.webxr import WebXRSource
    from teledex_lerobot.presets import PartSpec
    from teledex_lerobot.rig import Rig
    from teledex_lerobot.viewer.headset import HeadsetScene

    chromium, iwer = require_browser()
    scene = HeadsetScene(Rig.from_parts(PartSpec(str(vendor_package(tmp_path, rings=60, sides=60))), None))
    triangles = sum(len(base64.b64decode(m["triangles"])) // 12 for m in scene.body_message()["meshes"])
    source = WebXRSource("127.0.0.1", 0, certificate_dir=tmp_path)
    source.start(InputReceiver(parse_xr_state))
    stop = threading.Event()

    def views():  # the arm moving, ten views a second
        while not stop.wait(0.1):
            q = {"arm": np.array([0.5 * np.sin(time.monotonic()), -0.5, 0.3])}
            source.publish_view(lambda q=q: scene.message(q, q), {}, time.monotonic_ns(), scene.body_message)

    sender = threading.Thread(target=views, daemon=True)
    sender.start()
    browser = Chromium(chromium)
    try:
        page = browser.open(source.url, iwer)
        page.wait_for("!document.getElementById('enter-vr').disabled", 30)
        page.click("#enter-vr")
        page.wait_for(f"(window.teledexView.drawn() || {{}}).mesh_vertices === {3 * triangles}", 30)
        page.call("Page.reload")  # a new connection: the body comes again
        page.wait_for("document.getElementById('status').textContent.includes('Connected to TeleDex')", 30)
        page.wait_for("((window.teledexView.page.body || [])[0] || []).length === 4", 30)  # one rig's
    finally:
        stop.set()
        sender.join(timeout=5)
        browser.close()
        source.stop()
