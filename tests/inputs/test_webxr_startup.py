"""teledex-record's start while the operator's browser connects: the page opened the moment its port listens, on a
loaded machine (issue 30: 5 of 15 such starts ended in tracebacks, from the world cameras' warm-up and the physics
thread). Two plain HTTPS + WebSocket clients (tests/sockets.py), as a browser opens several connections, load the page
and open its socket, sending tracking, again and again from the moment the port listens until the first episode
records, while four busy processes per core load the machine (the load at which the cameras' first frames took
longer than the 2 s their warm-up allowed); the recorder (the MuJoCo world with the preset's world cameras) starts,
records its episode and ends cleanly."""

import os
import ssl
import subprocess
import threading
import time
import urllib.request

import pytest
from commands import command, command_env
from load import busy_cores
from sockets import connect
from test_teleop_inputs import free_tcp_port
from test_webxr_record import wait_for_listener

from teledex_lerobot.inputs import encode_xr_state

pytestmark = pytest.mark.slow

POSE = [0.2, 1.0, -0.3, 0.0, 0.0, 0.0, 1.0]


def visit_until_recording(port: int, trust: ssl.SSLContext, recorder: subprocess.Popen, log, visits: list,
                          errors: list) -> None:
    """Load the page and open its socket (which answers with a status; tracking sent), again and again."""
    try:
        while recorder.poll() is None and "Recording episode" not in log.read_text():
            with urllib.request.urlopen(f"https://127.0.0.1:{port}/", context=trust, timeout=60) as page:
                page.read()
            with connect(f"wss://127.0.0.1:{port}/ws", ssl=trust) as socket:
                socket.recv(timeout=60)
                socket.send(encode_xr_state(timestamp_ns=time.time_ns(), controllers={"right": {"pose": POSE}}))
            visits.append(time.monotonic())
    except Exception as error:  # judged after the recorder's exit code, which says more
        errors.append(error)


def test_a_browser_connecting_while_teledex_record_starts_does_not_crash_it(tmp_path):
    port = free_tcp_port()
    log = tmp_path / "record.log"
    argv = command("teledex-record", "--robot.type=teledex", "--robot.backend=mujoco",
                   "--robot.world.task=cube_assembly", "--teleop.type=teledex_xr", "--teleop.source=webxr",
                   f"--teleop.port={port}", f"--teleop.certificate_dir={tmp_path}", "--dataset.repo_id=local/start",
                   f"--dataset.root={tmp_path / 'ds'}", "--dataset.single_task=start", "--dataset.fps=25",
                   "--dataset.num_episodes=1", "--dataset.episode_time_s=2", "--dataset.reset_time_s=0",
                   "--dataset.push_to_hub=false")
    visits: list[float] = []
    errors: list[Exception] = []
    with busy_cores(4 * os.cpu_count()):
        recorder = subprocess.Popen(argv, env=command_env(tmp_path), stdin=subprocess.DEVNULL, stdout=log.open("w"),
                                    stderr=subprocess.STDOUT)
        try:
            wait_for_listener(port, recorder)
            trust = ssl.create_default_context(cafile=tmp_path / "cert.pem")
            browser = [threading.Thread(target=visit_until_recording, args=(port, trust, recorder, log, visits, errors))
                       for _ in range(2)]
            for connection in browser:
                connection.start()
            for connection in browser:
                connection.join()
        finally:
            recorder.wait(timeout=300)
    output = log.read_text()
    assert recorder.returncode == 0, output[-4000:]
    assert "Traceback" not in output, output[-4000:]
    assert "Saved episode 0" in output
    assert visits and not errors, errors
    print(f"{len(visits)} page visits while teledex-record started")
