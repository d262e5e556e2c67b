"""The Rerun viewer the live view sends to: started here (the app, or the web viewer's server), or already running.

We start the `rerun` binary of the installed rerun-sdk ourselves rather than through rr.spawn: rr.spawn cannot bind
to loopback, and the viewer's data port must not listen on every interface by default.
"""

import logging
import socket
import subprocess
import tempfile
import time
import urllib.parse
from pathlib import Path

import rerun_cli

from ..errors import DeviceError, UserError
from .config import LiveViewConfig

logger = logging.getLogger(__name__)

LOOPBACK = "127.0.0.1"
START_TIMEOUT_S = 20.0


def rerun_binary() -> Path:
    return Path(rerun_cli.__file__).parent / "rerun"


def grpc_url(port: int) -> str:
    return f"rerun+http://{LOOPBACK}:{port}/proxy"


def web_page_url(web_port: int, grpc_port: int) -> str:
    return f"http://{LOOPBACK}:{web_port}/?url={urllib.parse.quote(grpc_url(grpc_port), safe='')}"


def listening(port: int, host: str = LOOPBACK) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def start_viewer(config: LiveViewConfig) -> tuple[str | None, subprocess.Popen | None]:
    """(the gRPC url to send to or None for viewer=none, the process started here or None). A viewer already
    listening on the port is reused, as rr.spawn does: the operator keeps one window across runs."""
    if config.viewer == "none":
        return None, None
    if config.viewer == "connect":
        address = urllib.parse.urlparse(config.url)
        if not listening(address.port or 9876, address.hostname or LOOPBACK):
            raise DeviceError(f"live view: no Rerun viewer listens at {config.url} (--robot.live_view.url): start "
                              "one there (`rerun`), or use --robot.live_view.viewer=spawn or web")
        return config.url, None
    url = grpc_url(config.grpc_port)
    if listening(config.grpc_port):
        logger.info("live view: a viewer already listens on %s:%d; sending to it", LOOPBACK, config.grpc_port)
        return url, None
    command = [str(rerun_binary()), "--bind", LOOPBACK, "--port", str(config.grpc_port)]
    if config.viewer == "web":
        command += ["--serve-web", "--web-viewer-port", str(config.web_port),
                    "--server-memory-limit", config.memory_limit]
    else:
        command += ["--memory-limit", config.memory_limit, "--hide-welcome-screen"]
    # Its own session: Ctrl-C in the terminal stops the recording, not the window showing it. Its log goes to an
    # unnamed temporary file, read if it fails to start (a pipe nobody reads would fill and stall it).
    log = tempfile.TemporaryFile()
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
    deadline = time.monotonic() + START_TIMEOUT_S
    while not listening(config.grpc_port):
        if process.poll() is not None:
            log.seek(0)
            reason = log.read().decode(errors="replace").strip().splitlines()
            fix = ("no display? use --robot.live_view.viewer=web" if config.viewer == "spawn" else
                   "fix what it says (a port in use: --robot.live_view.web_port), or use viewer=connect")
            raise UserError(f"live view: the Rerun viewer exited at start: {reason[-1] if reason else 'no message'}; "
                            f"{fix}")
        if time.monotonic() > deadline:
            process.terminate()
            raise DeviceError(f"live view: the Rerun viewer did not listen on {LOOPBACK}:{config.grpc_port} "
                              f"(--robot.live_view.grpc_port) within {START_TIMEOUT_S:.0f} s: choose another port, or "
                              "use --robot.live_view.viewer=connect to a viewer you start")
        time.sleep(0.1)
    if config.viewer == "web":
        logger.info("live view: open %s", web_page_url(config.web_port, config.grpc_port))
    return url, process
