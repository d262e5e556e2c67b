"""A stereo camera's frame (left eye | right eye, side by side) in the WebXR page, in a real headless Chromium with
IWER's emulated Quest 3 drawing both eyes (tests/browser.py): the headset shows each eye its own half, on a screen of
one eye's aspect; a mirrored screen shows each eye the other eye's half, mirrored, as a mirror does; a frame of one
camera is shown whole to both eyes; the 2D page shows the left eye, its caption saying it is a stereo pair."""

import io
import json
import time

import numpy as np
import pytest
from browser import Chromium, require_browser

from teledex_lerobot.clock import now_ns
from teledex_lerobot.inputs import InputReceiver, parse_xr_state
from teledex_lerobot.inputs.webxr import WebXRSource

EYE_WIDTH, HEIGHT = 160, 120
RED, BLUE, GREEN = (230, 20, 20), (20, 20, 230), (20, 230, 20)


def stereo_frame() -> np.ndarray:
    """The left eye red, the right eye blue, each with a green band along its own left edge (which way it runs)."""
    image = np.zeros((HEIGHT, 2 * EYE_WIDTH, 3), np.uint8)
    image[:, :EYE_WIDTH], image[:, EYE_WIDTH:] = RED, BLUE
    image[:, :EYE_WIDTH // 4] = image[:, EYE_WIDTH:EYE_WIDTH + EYE_WIDTH // 4] = GREEN
    return image


def show(source: WebXRSource, page, header: dict, headset: bool = True) -> None:
    """The frame with `header` sent until the page has it (in the headset: in its texture, then time to draw it)."""
    deadline = time.monotonic() + 20
    shown = (f"(() => {{ const f = window.teledexView.view.frames.top; return !!f && "
             f"JSON.stringify([f.header.mirror, f.header.stereo || null]) === "
             f"{json.dumps(json.dumps([header['mirror'], header.get('stereo')], separators=(',', ':')))} && "
             f"{'!window.teledexView.view.dirty.top' if headset else 'true'}; }})()")
    while not page.evaluate(shown):
        assert time.monotonic() < deadline, f"the page never drew {header}"
        source.publish_view(lambda: {"type": "scene"}, {"top": (stereo_frame(), header)}, now_ns())
        time.sleep(0.3)
    time.sleep(0.5 if headset else 0)


def seen_by_each_eye(png: bytes) -> dict[str, dict]:
    """Per eye (IWER draws the left eye on the canvas's left half), what its screen shows: its aspect, the share of
    its top part (clear of the status panel) that is red and blue, and where the green band lies across it (0 left,
    1 right)."""
    from PIL import Image

    pixels = np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)
    canvas_width = pixels.shape[1] - pixels.shape[1] % 2
    seen = {}
    for eye, half in (("left", pixels[:, :canvas_width // 2]), ("right", pixels[:, canvas_width // 2:])):
        r, g, b = np.moveaxis(half, -1, 0)
        colour = {"red": (r > 150) & (g < 80) & (b < 80), "blue": (b > 150) & (r < 80) & (g < 80),
                  "green": (g > 150) & (r < 80) & (b < 80)}
        rows, cols = np.nonzero(colour["red"] | colour["blue"] | colour["green"])
        top, bottom, left, right = rows.min(), rows.max() + 1, cols.min(), cols.max() + 1
        upper = (slice(top, top + (bottom - top) // 3), slice(left, right))  # the panel hangs over the lower left
        area = (bottom - top) // 3 * (right - left)
        green_cols = np.nonzero(colour["green"][upper])[1]
        seen[eye] = {"aspect": (right - left) / (bottom - top),
                     "red": colour["red"][upper].sum() / area, "blue": colour["blue"][upper].sum() / area,
                     "green_at": green_cols.mean() / (right - left)}
    return seen


def test_each_eye_sees_its_own_half_of_a_stereo_frame(tmp_path):
    chromium, iwer = require_browser()
    source = WebXRSource("127.0.0.1", 0, certificate_dir=tmp_path)
    source.start(InputReceiver(parse_xr_state))
    browser = Chromium(chromium)
    stereo = {"camera": "top", "mirror": False, "stereo": {"baseline_m": 0.063}}
    try:
        page = browser.open(source.url, iwer)
        page.wait_for("document.getElementById('status').textContent.includes('Connected to TeleDex')")
        show(source, page, stereo, headset=False)
        assert "stereo pair" in page.evaluate("document.querySelector('#camera-top figcaption').textContent")
        assert page.evaluate("[document.querySelector('#camera-top canvas').width, "
                             "document.querySelector('#camera-top canvas').height]") == [EYE_WIDTH, HEIGHT]
        page.wait_for("!document.getElementById('enter-vr').disabled")
        page.evaluate("xrDevice.stereoEnabled = true")  # IWER draws one eye unless asked for both
        page.click("#enter-vr")
        page.wait_for("window.teledexView.page.session !== null")

        show(source, page, stereo)
        png = page.screenshot_png()
        (tmp_path / "stereo.png").write_bytes(png)
        seen = seen_by_each_eye(png)
        for eye, colour, other in (("left", "red", "blue"), ("right", "blue", "red")):
            assert seen[eye]["aspect"] == pytest.approx(EYE_WIDTH / HEIGHT, rel=0.03), seen
            assert seen[eye][colour] > 0.6 and seen[eye][other] == 0 and seen[eye]["green_at"] < 0.2, seen

        show(source, page, {**stereo, "mirror": True})  # the other eye's half, mirrored
        seen = seen_by_each_eye(page.screenshot_png())
        for eye, colour, other in (("left", "blue", "red"), ("right", "red", "blue")):
            assert seen[eye][colour] > 0.6 and seen[eye][other] == 0 and seen[eye]["green_at"] > 0.8, seen

        show(source, page, {"camera": "top", "mirror": False})  # one camera's frame: whole, to both eyes
        seen = seen_by_each_eye(page.screenshot_png())
        for eye in ("left", "right"):
            assert seen[eye]["aspect"] == pytest.approx(2 * EYE_WIDTH / HEIGHT, rel=0.03), seen
            assert seen[eye]["red"] > 0.3 and seen[eye]["blue"] > 0.3, seen
    finally:
        browser.close()
        source.stop()
