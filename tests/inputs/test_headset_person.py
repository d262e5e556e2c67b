"""A person in the headset works the task: teledex-record (the installed command) runs the MuJoCo world with the
WebXR input; a scripted person (tests/headset_person.py) in headless Chromium with an emulated Quest 3 (IWER) sees
the robot's camera stream and the robot drawn in the page, picks the level pinch with the thumbstick and assembles
the cube with the right controller, one layout per episode. The test judges the recorded episodes as the world
judged them (the native metadata's outcome): the person, seeing the task only through the page, pinches the half it
was asked to (stage "grasped" or further) in all layouts but a third, and the success count is printed; with 10 or
more layouts (TELEDEX_PERSON_LAYOUTS=10; the default, 2, fits make test's time) it assembles the cube in at least 8
of 10. With TELEDEX_SCREENSHOT=1 the headset view with the first half lifted is saved as docs/headset_view.png.
"""

import json
import os
import pathlib
import subprocess
import time

import pytest
from browser import Chromium, require_browser
from commands import command, command_env
from headset_person import HeadsetPerson
from test_teleop_inputs import free_tcp_port
from test_webxr_record import wait_for_listener

pytestmark = pytest.mark.slow

LAYOUTS = int(os.environ.get("TELEDEX_PERSON_LAYOUTS", "2"))
SCREENSHOT = pathlib.Path(__file__).parents[2] / "docs" / "headset_view.png"


def test_a_person_in_the_headset_works_the_cube_task_through_the_page(tmp_path):
    chromium, iwer = require_browser()
    port = free_tcp_port()
    root, log = tmp_path / "ds", tmp_path / "record.log"
    recorder = subprocess.Popen(
        command("teledex-record", "--robot.type=teledex", "--robot.backend=mujoco", "--robot.world.task=cube_assembly",
                "--robot.id=t", "--teleop.type=teledex_xr", "--teleop.id=t", "--teleop.source=webxr",
                f"--teleop.port={port}", f"--teleop.certificate_dir={tmp_path}", "--dataset.repo_id=local/person",
                f"--dataset.root={root}", "--dataset.single_task=assemble the cube", "--dataset.fps=25",
                f"--dataset.num_episodes={LAYOUTS}", "--dataset.episode_time_s=30", "--dataset.reset_time_s=0",
                "--dataset.push_to_hub=false"),
        env=command_env(tmp_path), stdin=subprocess.DEVNULL, stdout=log.open("w"), stderr=subprocess.STDOUT)
    browser = Chromium(chromium)
    reached = []
    try:
        wait_for_listener(port, recorder)
        page = browser.open(f"https://127.0.0.1:{port}/", iwer)
        page.wait_for("document.getElementById('status').textContent.includes('Connected to TeleDex')", 60)
        page.wait_for("!document.getElementById('enter-vr').disabled")
        page.click("#enter-vr")
        person = HeadsetPerson(page)
        person.start()
        # the camera streams into the page: frames arrive, and the page shows one in its canvas
        page.wait_for("Object.keys(window.teledexView.view.frames).includes('top')", 30)
        assert page.evaluate("!document.getElementById('camera').hidden && "
                             "document.getElementById('camera').width > 0")
        for episode in range(1, LAYOUTS + 1):
            person.wait_status(lambda s, e=episode: s.get("episode", 0) >= e, 120)
            time.sleep(0.5)  # the new layout settles
            shoot = episode == 1 and os.environ.get("TELEDEX_SCREENSHOT")
            step = person.assemble_cube(lambda: SCREENSHOT.write_bytes(page.screenshot_png()) if shoot else None)
            reached.append(step if step == "released" else f"{step} {person.last_error}")
            person.wait_status(lambda s, e=episode: s.get("episode", 0) > e or recorder.poll() is not None, 60)
    finally:
        browser.close()
        recorder.wait(timeout=300)
    output = log.read_text()
    assert recorder.returncode == 0, output[-4000:]

    outcomes = [json.loads(path.read_text())["outcome"]
                for path in sorted(pathlib.Path(f"{root}_native").glob("*/episode_*/metadata.json"))]
    assert len(outcomes) == LAYOUTS, output[-3000:]
    stages = [outcome["stage"] for outcome in outcomes]
    succeeded = sum(outcome["success"] for outcome in outcomes)
    print(f"person in the headset: {succeeded}/{LAYOUTS} layouts assembled; world stages {stages}; the person's "
          f"steps {reached}")
    pinched = sum(stage not in ("none", "reached") for stage in stages)
    assert pinched >= LAYOUTS - LAYOUTS // 3, (stages, reached, output[-3000:])
    if LAYOUTS >= 10:  # the bar; two layouts are too few to judge a rate without failing by chance
        assert succeeded >= 0.8 * LAYOUTS, (stages, reached)
