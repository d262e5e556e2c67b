"""teledex-record (the installed command) driven by our WebXR page in headless Chromium with an emulated Quest 3
(IWER): a simulated rig moves, and the dataset's input timestamps are the page's frame times mapped onto our clock,
not the messages' arrival times (some messages are held back in the page, as Wi-Fi would)."""

import subprocess
import time

import numpy as np
import pytest
from browser import Chromium, require_browser
from commands import command_env
from test_teleop_inputs import free_tcp_port
from test_xrobotoolkit_record import record_command, recorded_inputs

pytestmark = pytest.mark.slow

# Every message the page sends is logged with its timeStampNs; every third is held back 12 ms, the next 6 ms.
HOLD_BACK = """
window.sentStamps = [];
(() => {
  const send = WebSocket.prototype.send;
  let count = 0;
  WebSocket.prototype.send = function (data) {
    const stamp = JSON.parse(data).timeStampNs;
    const delay = [12, 6, 0][count++ % 3];
    window.sentStamps.push([stamp, delay]);
    if (delay) setTimeout(() => send.call(this, data), delay); else send.call(this, data);
  };
})();
"""


def wait_for_listener(port: int, recorder: subprocess.Popen, timeout_s: float = 180.0) -> None:
    import socket

    deadline = time.monotonic() + timeout_s
    while recorder.poll() is None and time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise AssertionError("teledex-record never listened")


def test_record_with_the_webxr_page(tmp_path):
    chromium, iwer = require_browser()
    port = free_tcp_port()
    recorder = subprocess.Popen(
        record_command(tmp_path / "ds", port, "--teleop.source=webxr", f"--teleop.certificate_dir={tmp_path}",
                       "--dataset.episode_time_s=8"), env=command_env(tmp_path), stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    browser = Chromium(chromium)
    try:
        wait_for_listener(port, recorder)
        page = browser.open(f"https://127.0.0.1:{port}/", iwer, before_page=HOLD_BACK)
        page.enter_vr(30)
        for button in ("x-button", "y-button"):  # ZeroPos, Teleoperation
            page.evaluate(f"xrDevice.controllers.left.updateButtonValue('{button}', 1)")
            time.sleep(0.2)
            page.evaluate(f"xrDevice.controllers.left.updateButtonValue('{button}', 0)")
            time.sleep(0.2)
        started = time.monotonic()
        while recorder.poll() is None and time.monotonic() - started < 120:
            t = time.monotonic() - started  # trigger released 1 s, then held 2 s while the controller circles
            page.evaluate(f"xrDevice.controllers.right.updateButtonValue('trigger', {float(t % 3 >= 1)});"
                          f"xrDevice.controllers.right.position.x = {0.25 + 0.08 * np.cos(2 * t):.4f};"
                          f"xrDevice.controllers.right.position.z = {-0.4 + 0.08 * np.sin(2 * t):.4f};")
            time.sleep(0.05)
        sent = np.array(page.evaluate("window.sentStamps"))
    finally:
        browser.close()
        output, _ = recorder.communicate(timeout=300)
    assert recorder.returncode == 0, output[-4000:]
    assert "webxr): listening on 127.0.0.1:" in output

    recorded, actions = recorded_inputs(tmp_path / "ds")
    assert np.ptp(actions, axis=0).max() > 0.02  # the simulated rig moved
    stamps, held_back_ms = sent[:, 0], sent[:, 1]
    # The clock offset is one constant: the most common gap between a recorded stamp and a sent one. Frames recorded
    # before the page's first sample carry -1: among them the bins would span the host's whole uptime (0.1 ms bins:
    # 20 GB after 21 hours, which the OOM killer ended)
    gaps_ms = (recorded[:, None] - stamps[None, :]) / 1e6
    sampled = gaps_ms[recorded >= 0]
    histogram, edges = np.histogram(sampled, bins=np.arange(sampled.min(), sampled.max() + 0.1, 0.1))
    offset_ms = edges[histogram.argmax()] + 0.05
    match = np.abs(gaps_ms - offset_ms) <= 0.5
    matched = match.any(axis=1)
    first = matched.argmax()  # before the page's first sample arrived, the recorder stamps its own tick time
    assert first < len(recorded) / 2 and matched[first:].mean() >= 0.95, (first, matched[first:].mean())
    assert np.sum(held_back_ms[match.argmax(axis=1)[matched]] >= 6) >= 25  # arrival would be >= 6 ms later
