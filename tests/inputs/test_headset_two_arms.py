"""Both hands of one person in the headset (issue 33 part 4): teledex-record (the installed command) runs the two-rig
world (bimanual_piper_linkerhand_l10, the handover's layout) with the WebXR input; in headless Chromium an emulated
Quest 3 (IWER) holds both controllers. The page shows the three cameras (the shared top view and each hand's wrist),
draws both robots and has a status line per arm; the left controller drives the left rig and the right the right,
each engaged by its own trigger: releasing the left trigger holds the left arm while the right one follows on. With
TELEDEX_SCREENSHOT=1 the two-armed headset view is saved as docs/headset_two_arms.png."""

import json
import os
import pathlib
import subprocess
import time

import numpy as np
import pandas as pd
import pytest
from browser import Chromium, require_browser
from commands import command, command_env
from test_headset_person import STATION_ENCODER
from test_teleop_inputs import free_tcp_port
from test_webxr_record import wait_for_listener

pytestmark = [pytest.mark.slow, pytest.mark.long]

PRESET = "bimanual_piper_linkerhand_l10"
SCREENSHOT = pathlib.Path(__file__).parents[2] / "docs" / "headset_two_arms.png"
CAMERAS = ("left_top", "left_wrist", "right_wrist")
EPISODE_S = 60
STEP_S = 0.05


def _move(page, side: str, offset_m: tuple[float, float, float]) -> None:
    """One controller's position, offset from where it started (XR frame: x right, y up, z backward)."""
    x, y, z = offset_m
    page.evaluate(f"(() => {{ const c = xrDevice.controllers.{side}; const s = window.startPositions.{side};"
                  f"c.position.x = s[0] + {x:.4f}; c.position.y = s[1] + {y:.4f}; c.position.z = s[2] + {z:.4f};"
                  "})()")


def _sweep(page, side: str, start, end, seconds: float) -> None:
    steps = max(1, round(seconds / STEP_S))
    for k in range(1, steps + 1):
        _move(page, side, tuple(np.add(start, np.multiply(np.subtract(end, start), k / steps))))
        time.sleep(STEP_S)


def _trigger(page, side: str, value: float) -> None:
    page.evaluate(f"xrDevice.controllers.{side}.updateButtonValue('trigger', {value})")


def _press(page, side: str, button: str) -> None:
    for value in (1, 0):
        page.evaluate(f"xrDevice.controllers.{side}.updateButtonValue('{button}', {value})")
        time.sleep(0.3)


def _status(page) -> str:
    return page.evaluate("document.getElementById('status').textContent")


def test_both_controllers_drive_their_own_arm_through_the_headset_page(tmp_path):
    chromium, iwer = require_browser()
    port = free_tcp_port()
    root, log = tmp_path / "ds", tmp_path / "record.log"
    recorder = subprocess.Popen(
        command("teledex-record", "--robot.type=teledex_followers", f"--robot.preset={PRESET}",
                "--robot.backend=mujoco", "--robot.world.task=handover", "--robot.world.seed=3",
                "--teleop.type=teledex_xr", "--teleop.id=t", "--teleop.source=webxr", f"--teleop.port={port}",
                f"--teleop.certificate_dir={tmp_path}", "--dataset.repo_id=local/two_arms", f"--dataset.root={root}",
                "--dataset.single_task=hand the half cube over", "--dataset.fps=25", "--dataset.num_episodes=1",
                f"--dataset.episode_time_s={EPISODE_S}", "--dataset.reset_time_s=0", "--dataset.push_to_hub=false",
                *STATION_ENCODER),
        env=command_env(tmp_path), stdin=subprocess.DEVNULL, stdout=log.open("w"), stderr=subprocess.STDOUT)
    browser = Chromium(chromium)
    try:
        wait_for_listener(port, recorder)
        page = browser.open(f"https://127.0.0.1:{port}/", iwer)
        page.enter_vr(60)
        # the three cameras stream in, and the page draws both robots (each its body and its place)
        page.wait_for(f"{list(CAMERAS)}.every((n) => n in window.teledexView.view.frames)", 90)
        page.wait_for("(window.teledexView.page.body || []).length === 2 && "
                      "((window.teledexView.page.scene || {}).rigs || []).length === 2", 60)
        rigs = page.evaluate("window.teledexView.page.scene.rigs.map((r) => [r.name, r.base[7]])")
        assert rigs == [["left", 0.0], ["right", pytest.approx(-0.5, abs=1e-4)]]
        page.evaluate("window.startPositions = Object.fromEntries(['left', 'right'].map((s) => "
                      "[s, ['x', 'y', 'z'].map((a) => xrDevice.controllers[s].position[a])]))")
        _press(page, "left", "x-button")  # X: ZeroPos
        page.wait_for("document.getElementById('status').textContent.includes('Arm left: ')", 30)
        time.sleep(2.0)  # both arms reach the zero pose
        _press(page, "left", "y-button")  # Y: Teleoperation
        page.wait_for("document.getElementById('status').textContent.includes('State: Teleoperation')", 30)
        time.sleep(0.5)
        # both triggers held: each arm follows its own controller
        _trigger(page, "left", 1.0)
        _trigger(page, "right", 1.0)
        time.sleep(0.5)
        _sweep(page, "left", (0, 0, 0), (0, 0.08, 0), 1.5)  # the left controller rises 8 cm
        page.wait_for("document.getElementById('status').textContent.includes('Arm left: following')", 10)
        assert "Arm right: following" in _status(page)
        if os.environ.get("TELEDEX_SCREENSHOT"):  # the head tilted down: the screens ahead, both robots below
            page.evaluate(f"xrDevice.quaternion.set({np.sin(-0.2):.6f}, 0, 0, {np.cos(0.2):.6f})")
            time.sleep(1.0)
            SCREENSHOT.write_bytes(page.screenshot_png())
        # the left trigger released: the left arm holds while the right controller sweeps forward and down
        _trigger(page, "left", 0.0)
        time.sleep(1.0)
        _sweep(page, "left", (0, 0.08, 0), (0, 0.0, 0), 1.5)  # the left controller moves on: the arm must not
        _sweep(page, "right", (0, 0, 0), (0, -0.06, -0.08), 2.0)
        page.wait_for("document.getElementById('status').textContent.includes('Arm left: disengaged')", 10)
        time.sleep(0.5)
    finally:
        browser.close()
        recorder.wait(timeout=EPISODE_S + 300)
    output = log.read_text()
    assert recorder.returncode == 0, output[-4000:]
    frames = pd.concat([pd.read_parquet(path) for path in sorted((root / "data").glob("**/*.parquet"))])
    action = np.stack(frames["action"].to_numpy())
    names = json.loads((root / "meta" / "info.json").read_text())["features"]["action"]["names"]
    arm = {side: action[:, [names.index(f"{side}_arm_joint{i}.pos") for i in range(1, 7)]]
           for side in ("left", "right")}
    # what the teleoperator commanded each arm, frame by frame: the left arm's last change is its release (its
    # command then holds), after which the right one's command went on changing as its controller swept
    changed = {side: np.flatnonzero(np.abs(np.diff(arm[side], axis=0)).max(axis=1) > 1e-6) for side in arm}
    assert changed["left"].size and changed["right"].size, output[-2000:]
    released = changed["left"][-1] + 1
    summary = {side: np.round(np.abs(arm[side][-1] - arm[side][0]), 3).tolist() for side in arm}
    assert np.abs(arm["right"][-1] - arm["right"][released]).max() > 0.05, (released, len(action), summary)
    # ...and the left one's held through the left controller's own sweep after the release and the right one's
    # (1.5 + 2 s at 25 Hz)
    assert len(action) - released > 3.5 * 25, (released, len(action), summary)
