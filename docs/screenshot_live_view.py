"""Render a saved live-view recording (.rrd) to a PNG with Rerun's own viewer, headless, as the operator would see it
at the recording's last instant.

The viewer runs without a window (`rerun --headless`, drawing with the CPU through Mesa's lavapipe Vulkan driver:
Debian's mesa-vulkan-drivers), listening on 127.0.0.1 only; this script asks it for a screenshot over that port.
Rerun's viewer collects anonymous usage data unless `rerun analytics disable` was run; to keep everything on this
machine, run the script in a network namespace of its own:

    unshare -n sh -c 'ip link set lo up; .venv/bin/python docs/screenshot_live_view.py <file.rrd> docs/live_view.png'
"""

import argparse
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import cv2
from rerun.experimental import ViewerClient

from teledex_lerobot.viewer.viewer_process import LOOPBACK, grpc_url, listening, rerun_binary


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((LOOPBACK, 0))
        return probe.getsockname()[1]


def screenshot(rrd: Path, png: Path, size: str, settle_s: float, width_px: int) -> None:
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "screenshot.png"
        viewer = subprocess.Popen([str(rerun_binary()), "--headless", "--bind", LOOPBACK, "--port", str(port),
                                   "--window-size", size, str(rrd.resolve())],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 30
            while not listening(port):
                if viewer.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit("the headless Rerun viewer did not start (is mesa-vulkan-drivers installed?)")
                time.sleep(0.2)
            time.sleep(settle_s)  # loading the file and the first frames of the software renderer
            ViewerClient.connect(grpc_url(port)).save_screenshot(str(raw))
            deadline = time.monotonic() + 30
            while not raw.exists() or raw.stat().st_size == 0:
                if time.monotonic() > deadline:
                    raise SystemExit("the viewer saved no screenshot within 30 s")
                time.sleep(0.2)
            time.sleep(0.5)  # let it finish writing
        finally:
            viewer.terminate()
            viewer.wait(10)
        image = cv2.imread(str(raw))
        if image.shape[1] > width_px:
            image = cv2.resize(image, (width_px, round(image.shape[0] * width_px / image.shape[1])),
                               interpolation=cv2.INTER_AREA)
        png.parent.mkdir(parents=True, exist_ok=True)
        cv2.imwrite(str(png), image, [cv2.IMWRITE_PNG_COMPRESSION, 9])
    print(f"{png}: {image.shape[1]}x{image.shape[0]}, {png.stat().st_size // 1024} KiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("rrd", type=Path, help="a live-view recording (--robot.live_view.rrd_dir)")
    parser.add_argument("png", type=Path)
    parser.add_argument("--window-size", default="1600x900", help="the viewer's size in logical points")
    parser.add_argument("--settle-s", type=float, default=8.0, help="wait this long before the screenshot")
    parser.add_argument("--width-px", type=int, default=1280, help="scale the PNG down to this width")
    args = parser.parse_args()
    screenshot(args.rrd, args.png, args.window_size, args.settle_s, args.width_px)


if __name__ == "__main__":
    main()
