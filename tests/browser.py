"""Headless Chromium driven over the Chrome DevTools protocol, with WebXR emulated by Meta's Immersive Web Emulation
Runtime (IWER, the engine of the Immersive Web Emulator extension) installed into every page before its scripts
run, so `navigator.xr` is a Quest 3 whose controllers and hands the test moves. Test-only; nothing here is shipped.

Needs Debian's `chromium` and IWER from npm (tests/webxr_emulator, `npm ci`); `make test-deps` installs both. When
either cannot be had, `require_browser()` skips the test with a message saying how to get it.
"""

import itertools
import json
import pathlib
import shutil
import subprocess
import tempfile
import time
import urllib.request

import pytest
from sockets import connect

EMULATOR_DIR = pathlib.Path(__file__).parent / "webxr_emulator"
IWER_BUNDLE = EMULATOR_DIR / "node_modules" / "iwer" / "build" / "iwer.js"
# Flags: no sandbox (root in a container), software GL, and no traffic of the browser's own to anywhere.
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--no-first-run", "--disable-sync", "--disable-default-apps",
                  "--disable-extensions", "--no-default-browser-check", "--no-pings", "--mute-audio",
                  "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0", "--window-size=1280,800"]


def require_browser() -> tuple[str, pathlib.Path]:
    """(chromium executable, IWER bundle), installing IWER with npm if it is missing; skips the test if not
    possible."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("headless Chromium not installed: `make test-deps` (Debian: apt-get install chromium)")
    if not IWER_BUNDLE.is_file() and shutil.which("npm"):
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts"], cwd=EMULATOR_DIR,
                       capture_output=True, timeout=300)
    if not IWER_BUNDLE.is_file():
        pytest.skip(f"WebXR emulator (IWER) not installed: `make test-deps` (npm ci in {EMULATOR_DIR})")
    return chromium, IWER_BUNDLE


class Page:
    """One browser tab: CDP commands and JavaScript evaluation."""

    def __init__(self, websocket_url: str):
        self._connection = connect(websocket_url, max_size=None)
        self.socket = self._connection.__enter__()
        self._ids = itertools.count(1)

    def call(self, method: str, **params) -> dict:
        request_id = next(self._ids)
        self.socket.send(json.dumps({"id": request_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv(timeout=30))
            if message.get("id") == request_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]

    def evaluate(self, expression: str):
        result = self.call("Runtime.evaluate", expression=expression, awaitPromise=True, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression[:80]}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout_s: float = 10.0):
        """Poll a JavaScript expression until it is truthy (an exception counts as not yet: the page may still be
        loading); its value."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                value = self.evaluate(expression)
            except RuntimeError:
                value = None
            if value:
                return value
            if time.monotonic() > deadline:
                raise TimeoutError(f"{expression} still falsy after {timeout_s} s")
            time.sleep(0.05)

    def enter_vr(self, timeout_s: float = 60) -> None:
        """Once the page is connected to the teleop, press "Enter VR" (the emulated headset's session begins)."""
        self.wait_for("document.getElementById('status').textContent.includes('Connected to TeleDex')", timeout_s)
        self.wait_for("!document.getElementById('enter-vr').disabled", timeout_s)
        self.click("#enter-vr")

    def click(self, selector: str) -> None:
        """A real mouse click (a user gesture, as entering XR requires) at the element's centre."""
        box = self.evaluate(f"(() => {{ const r = document.querySelector({json.dumps(selector)})"
                            ".getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()")
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", type=kind, x=box[0], y=box[1], button="left", clickCount=1)

    def screenshot_png(self) -> bytes:
        import base64

        return base64.b64decode(self.call("Page.captureScreenshot", format="png")["data"])

    def close(self) -> None:
        self._connection.__exit__(None, None, None)


class Chromium:
    def __init__(self, executable: str):
        self.profile = tempfile.mkdtemp(prefix="teledex-chromium-")
        self.process = subprocess.Popen([executable, *CHROMIUM_FLAGS, f"--user-data-dir={self.profile}",
                                         "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = pathlib.Path(self.profile, "DevToolsActivePort")
        deadline = time.monotonic() + 30
        while not (port_file.is_file() and port_file.read_text().count("\n") >= 1):
            if time.monotonic() > deadline or self.process.poll() is not None:
                self.close()
                raise RuntimeError("Chromium did not start")
            time.sleep(0.05)
        self.port = int(port_file.read_text().split()[0])

    def open(self, url: str, iwer_bundle: pathlib.Path, device: str = "metaQuest3", before_page: str = "",
             new_tab: bool = False) -> Page:
        """A tab (the first, or a new one) whose pages get an emulated `device` as navigator.xr (and `before_page`, a
        script run before the page's own), at `url` (self-signed certificates accepted, as the operator does
        once)."""
        if new_tab:
            request = urllib.request.Request(f"http://127.0.0.1:{self.port}/json/new?about:blank", method="PUT")
            with urllib.request.urlopen(request, timeout=10) as response:
                target = json.load(response)
        else:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/json/list", timeout=10) as response:
                target = next(t for t in json.load(response) if t["type"] == "page")
        page = Page(target["webSocketDebuggerUrl"])
        page.call("Page.enable")
        page.call("Security.setIgnoreCertificateErrors", ignore=True)
        install = (f"\n;window.xrDevice = new IWER.XRDevice(IWER.{device});"
                   "window.xrDevice.installRuntime({forceInstall: true});")
        page.call("Page.addScriptToEvaluateOnNewDocument", source=iwer_bundle.read_text() + install + before_page)
        page.call("Page.navigate", url=url)
        return page

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.profile, ignore_errors=True)
