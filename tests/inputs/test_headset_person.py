"""A person in the headset works the task from what a real station shows: teledex-record (the installed command) runs
the MuJoCo world with the WebXR input and the preset's cameras (top and wrist); a scripted person
(tests/headset_person.py) in headless Chromium with an emulated Quest 3 (IWER) reads the cube halves off the camera
images the page shows, through the calibration each frame carries, and its hand where the page draws the robot (never
the objects, which the page draws only if asked, nor the world's grasps), picks the level pinch with the thumbstick
and assembles the cube with the right controller, one layout per episode; both hands, the handover
(TwoHandedPerson, both controllers).

The test judges the recorded episodes as the world judged them (the native metadata's outcome): the person pinches
the half (stage "grasped" or further) in all layouts but a third, and the success count is printed; with 10 or more
layouts (TELEDEX_PERSON_LAYOUTS=10; the default, 2, fits make test's time) it assembles the cube in at least 8 of 10,
or 7 of 10 with both cores kept busy (TELEDEX_PERSON_LOAD=2: one busy process per core). The layouts are the world's
seeds from TELEDEX_PERSON_SEED (default 100: none the person was tuned on). With TELEDEX_SCREENSHOT=1 the headset
view at the first grasp is saved as docs/headset_view.png.
"""

import json
import os
import pathlib
import subprocess
import time

import pytest
from browser import Chromium, require_browser
from commands import command, command_env
from headset_person import BrowserHeadset, HeadsetPerson, TwoHandedPerson
from load import busy_cores
from simulated_station import EPISODE_S
from test_teleop_inputs import free_tcp_port
from test_webxr_record import wait_for_listener

from teledex_lerobot.presets import load_preset, placed_bases
from teledex_lerobot.rig import Rig
from teledex_lerobot.world.mjcf import arm_base_height_m

pytestmark = pytest.mark.slow

LAYOUTS = int(os.environ.get("TELEDEX_PERSON_LAYOUTS", "2"))
FIRST_SEED = int(os.environ.get("TELEDEX_PERSON_SEED", "100"))
LOAD = int(os.environ.get("TELEDEX_PERSON_LOAD", "0"))
PRESET = "piper_linkerhand_o6_single"
HANDOVER_PRESET = "bimanual_piper_linkerhand_l10"
HANDOVER_LAYOUTS = int(os.environ.get("TELEDEX_HANDOVER_LAYOUTS", "1"))
HANDOVER_EPISODE_S = 90  # through the page a handover took 54-88 s (docs/inputs.md)
SCREENSHOT = pathlib.Path(__file__).parents[2] / "docs" / "headset_view.png"
# A station of two cameras records H.264, as docs/recording.md advises (LeRobot's AV1 keeps up with one camera here)
STATION_ENCODER = ("--dataset.rgb_encoder.vcodec=h264", "--dataset.rgb_encoder.preset=ultrafast",
                   "--dataset.rgb_encoder.crf=23")


def station(tmp_path: pathlib.Path, robot: list[str], task: str, seed: int, episodes: int,
            episode_s: float) -> tuple[subprocess.Popen, pathlib.Path, pathlib.Path, int]:
    """teledex-record (the installed command) running the world's `task` with the WebXR input: `episodes` of
    `episode_s`, the first on the world's seed `seed`; (the process, its log, the dataset's root, the page's port)."""
    port = free_tcp_port()
    root, log = tmp_path / "ds", tmp_path / "record.log"
    recorder = subprocess.Popen(
        command("teledex-record", *robot, "--robot.backend=mujoco", f"--robot.world.task={task}",
                f"--robot.world.seed={seed}", "--teleop.type=teledex_xr", "--teleop.id=t", "--teleop.source=webxr",
                f"--teleop.port={port}", f"--teleop.certificate_dir={tmp_path}", "--dataset.repo_id=local/person",
                f"--dataset.root={root}", f"--dataset.single_task={task}", "--dataset.fps=25",
                f"--dataset.num_episodes={episodes}", f"--dataset.episode_time_s={episode_s}",
                "--dataset.reset_time_s=0", "--dataset.push_to_hub=false", *STATION_ENCODER),
        env=command_env(tmp_path), stdin=subprocess.DEVNULL, stdout=log.open("w"), stderr=subprocess.STDOUT)
    return recorder, log, root, port


def headset_page(browser: Chromium, iwer, port: int, recorder: subprocess.Popen):
    """The station's page in the emulated headset, in VR."""
    wait_for_listener(port, recorder)
    page = browser.open(f"https://127.0.0.1:{port}/", iwer)
    page.enter_vr(60)
    return page


def recorded_outcomes(recorder: subprocess.Popen, log: pathlib.Path, root: pathlib.Path, episodes: int) -> list[dict]:
    """teledex-record's exit checked; each recorded episode's outcome as the world judged it (native metadata)."""
    output = log.read_text()
    assert recorder.returncode == 0, output[-4000:]
    outcomes = [json.loads(path.read_text())["outcome"]
                for path in sorted(pathlib.Path(f"{root}_native").glob("*/episode_*/metadata.json"))]
    assert len(outcomes) == episodes, output[-3000:]
    return outcomes


@pytest.mark.parametrize("preset", [PRESET, "piper_linkerhand_l10_single"])
def test_the_person_who_sees_only_the_cameras_assembles_the_cube_in_a_simulated_station(preset):
    """The same person, its headset done in lockstep (tests/simulated_station.py: the teleop's parser and control
    chain, the preset's cameras JPEG-compressed with the page's headers): deterministic per seed, on layouts it was
    not tuned on, it assembles the cube in at least 4 of 5, with the O6 and with the L10 (what practice taught it of
    each hand: headset_person.PRACTICE)."""
    from simulated_station import SimulatedStation

    station = SimulatedStation(preset, seed=FIRST_SEED)
    person = HeadsetPerson(station, station.rig, station.table_top_z_m)
    person.start()
    stages = []
    for layout in range(5):
        if layout:
            station.new_episode(FIRST_SEED + layout)
        person.begin_episode()
        person.assemble_cube()
        station.sleep(1.0)
        stages.append(station.outcome.stage)
    assert stages.count("success") >= 4, stages


@pytest.mark.long
def test_both_hands_of_the_person_hand_the_half_over_in_a_simulated_station():
    """Both hands (TwoHandedPerson: the left and right controllers) in the two-rig world's handover, lockstep, seeds
    20-29 (its practice was on 0-9): the cube is assembled in at least 8 of 10 (9 when this was written; the one miss,
    seed 28, a pinch the left arm does not reach through the teleop)."""
    from simulated_station import SimulatedStation

    station = SimulatedStation(HANDOVER_PRESET, seed=20, task="handover", episode_s=HANDOVER_EPISODE_S)
    person = TwoHandedPerson(station, station.rigs, {name: station.base_in_first(name) for name in station.rigs},
                             station.table_top_z_m)
    person.start()
    runs = []
    for seed in range(20, 30):
        if seed > 20:
            station.new_episode(seed)
        person.begin_episode()
        steps = person.hand_over()
        station.sleep(1.0)
        runs.append((steps, station.outcome.stage))
    assert sum(stage == "success" for _, stage in runs) >= 8, runs


def test_a_person_in_the_headset_works_the_cube_task_from_the_cameras(tmp_path):
    chromium, iwer = require_browser()
    rig = Rig.from_preset(load_preset(PRESET))
    with busy_cores(LOAD):
        recorder, log, root, port = station(tmp_path, ["--robot.type=teledex", f"--robot.preset={PRESET}",
                                                       "--robot.id=t"], "cube_assembly", FIRST_SEED, LAYOUTS,
                                           EPISODE_S)
        browser = Chromium(chromium)
        reached = []
        try:
            page = headset_page(browser, iwer, port, recorder)
            # both cameras stream into the page, each with its calibration, and the 2D page shows them
            page.wait_for("['top', 'wrist'].every((n) => n in window.teledexView.view.frames)", 60)
            assert page.evaluate("document.querySelectorAll('#cameras canvas').length") == 2
            person = HeadsetPerson(BrowserHeadset(page), rig, table_top_z_m=-arm_base_height_m(rig))
            person.start()
            for episode in range(1, LAYOUTS + 1):
                person.wait_status(lambda s, e=episode: s["episode"] >= e, 120)
                time.sleep(0.5)  # the new layout settles
                shoot = episode == 1 and os.environ.get("TELEDEX_SCREENSHOT")
                started = time.monotonic()
                person.begin_episode()
                steps = person.assemble_cube(lambda: SCREENSHOT.write_bytes(page.screenshot_png()) if shoot else None)
                reached.append(", ".join(steps))
                print(f"layout {episode}: {', '.join(steps)} in {time.monotonic() - started:.0f} s (last move's error "
                      f"{person.last_error})")
                person.wait_status(lambda s, e=episode: s["episode"] > e or recorder.poll() is not None, 60)
        finally:
            browser.close()
            recorder.wait(timeout=300)
    outcomes = recorded_outcomes(recorder, log, root, LAYOUTS)
    stages = [outcome["stage"] for outcome in outcomes]
    succeeded = sum(outcome["success"] for outcome in outcomes)
    print(f"person in the headset, from the cameras{f' ({LOAD} busy processes)' if LOAD else ''}: {succeeded}/"
          f"{LAYOUTS} layouts assembled (seeds {FIRST_SEED}-{FIRST_SEED + LAYOUTS - 1}); world stages {stages}; "
          f"the person's steps {reached}")
    pinched = sum(stage not in ("none", "reached") for stage in stages)
    assert pinched >= LAYOUTS - LAYOUTS // 3, (stages, reached, log.read_text()[-3000:])
    if LAYOUTS >= 10:  # the bar; two layouts are too few to judge a rate without failing by chance
        assert succeeded >= (0.7 if LOAD else 0.8) * LAYOUTS, (stages, reached)


@pytest.mark.long
def test_both_hands_of_a_person_in_the_headset_hand_the_half_over(tmp_path):
    """The handover through the page: teledex-record runs the two-rig world (bimanual_piper_linkerhand_l10) with the
    WebXR input; the scripted person holds both controllers (TwoHandedPerson), one layout per episode from
    TELEDEX_HANDOVER_SEED (default 30: none it practised on). It knows the station's layout as the preset places the
    arms. With TELEDEX_HANDOVER_LAYOUTS >= 10 it assembles the cube in at least 8 of 10 (the issue's bar), with both
    cores kept busy (TELEDEX_PERSON_LOAD=2) too (measured: 9 of 10 quiet, 10 of 10 loaded); with fewer the count is
    printed and the left hand must have picked the half in every layout."""
    chromium, iwer = require_browser()
    spec = load_preset(HANDOVER_PRESET)
    rigs = {name: Rig.from_preset(load_preset(follower)) for name, follower in spec.followers.items()}
    bases = placed_bases(list(spec.followers), spec.placements)
    first_seed = int(os.environ.get("TELEDEX_HANDOVER_SEED", "30"))
    with busy_cores(LOAD):
        recorder, log, root, port = station(tmp_path, ["--robot.type=teledex_followers",
                                                       f"--robot.preset={HANDOVER_PRESET}"], "handover", first_seed,
                                            HANDOVER_LAYOUTS, HANDOVER_EPISODE_S)
        browser = Chromium(chromium)
        runs = []
        try:
            page = headset_page(browser, iwer, port, recorder)
            page.wait_for("['left_top', 'left_wrist', 'right_wrist'].every((n) => n in window.teledexView.view.frames) "
                          "&& ((window.teledexView.page.scene || {}).rigs || []).length === 2", 90)
            person = TwoHandedPerson(BrowserHeadset(page), rigs, bases, -arm_base_height_m(rigs["left"]))
            person.start()
            for episode in range(1, HANDOVER_LAYOUTS + 1):
                person.left.wait_status(lambda s, e=episode: s["episode"] >= e, 120)
                time.sleep(0.5)  # the new layout settles
                started = time.monotonic()
                person.begin_episode()
                steps = person.hand_over()
                runs.append(steps)
                print(f"layout {episode}: {', '.join(steps)} in {time.monotonic() - started:.0f} s")
                person.left.wait_status(lambda s, e=episode: s["episode"] > e or recorder.poll() is not None, 90)
        finally:
            browser.close()
            recorder.wait(timeout=300)
    outcomes = recorded_outcomes(recorder, log, root, HANDOVER_LAYOUTS)
    succeeded = sum(outcome["success"] for outcome in outcomes)
    print(f"both hands in the headset{f' ({LOAD} busy processes)' if LOAD else ''}: {succeeded}/{HANDOVER_LAYOUTS} "
          f"handovers assembled (seeds {first_seed}-"
          f"{first_seed + HANDOVER_LAYOUTS - 1}); world stages {[outcome['stage'] for outcome in outcomes]}; "
          f"steps {runs}")
    assert all(outcome["stage"] not in ("none", "reached") for outcome in outcomes), (outcomes, runs)
    if HANDOVER_LAYOUTS >= 10:
        assert succeeded >= 0.8 * HANDOVER_LAYOUTS, (outcomes, runs)
