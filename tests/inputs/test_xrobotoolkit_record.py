"""teledex-record (the installed command) with the XRoboToolkit app's exact frames driving a simulated rig: the
dataset's input timestamps are the headset's sample times on our clock, not the packets' arrival times."""

import subprocess
import threading
import time

import numpy as np
import pytest
import xr_app
from commands import command, command_env
from test_teleop_inputs import free_tcp_port
from test_xrobotoolkit import HEADSET_EPOCH_NS, state

pytestmark = pytest.mark.slow
DELAYS_S = (0.009, 0.005, 0.0)  # how long after its capture each sample leaves the headset (Wi-Fi retries), cycled


def record_command(root, port: int, *extra: str) -> list[str]:
    return command("teledex-record", "--robot.type=teledex", "--robot.id=t", "--teleop.type=teledex_xr",
                   "--teleop.id=t", f"--teleop.port={port}", "--dataset.repo_id=local/headset",
                   f"--dataset.root={root}", "--dataset.single_task=reach", "--dataset.fps=25",
                   "--dataset.num_episodes=1", "--dataset.episode_time_s=6", "--dataset.reset_time_s=0.2",
                   "--dataset.push_to_hub=false", *extra)


def recorded_inputs(root):
    """The recorded frames' input timestamps and arm actions."""
    from lerobot.datasets import LeRobotDataset

    dataset = LeRobotDataset("local/headset", root=root)
    rows = dataset.hf_dataset
    return np.asarray(rows["t_input_ns"]).reshape(-1), np.stack(rows["action"])


def test_record_with_the_xrobotoolkit_app(tmp_path):
    port = free_tcp_port()
    recorder = subprocess.Popen(record_command(tmp_path / "ds", port, "--teleop.source=xrobotoolkit"),
                                env=command_env(tmp_path), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
    captured, sent = [], []

    def headset():
        app = xr_app.connect(("127.0.0.1", port), timeout_s=120)
        app.sendall(xr_app.hello_frames())
        k, start = 0, time.monotonic()
        while recorder.poll() is None and time.monotonic() - start < 300:
            time.sleep(max(0.0, start + k / 90 - time.monotonic()))
            capture = time.monotonic_ns()
            # X, Y: ZeroPos, Teleoperation (while the recorder may still be starting); then, every 3 s, the trigger
            # released for 1 s and held for 2 s while the controller circles (the arm moves while it is held).
            frame = xr_app.tracking_frame(state(k, stamp_ns=capture + HEADSET_EPOCH_NS, left_on=True,
                                                primary=5 <= k < 8, secondary=40 <= k < 43,
                                                trigger=float(k % 270 >= 90)))
            time.sleep(DELAYS_S[k % 3])
            try:
                app.sendall(frame)
            except OSError:
                break  # the recorder finished and closed the connection
            captured.append(capture)
            sent.append(time.monotonic_ns())
            k += 1
        app.close()

    sender = threading.Thread(target=headset, daemon=True)
    sender.start()
    output, _ = recorder.communicate(timeout=600)
    sender.join(timeout=10)
    assert recorder.returncode == 0, output[-4000:]
    assert "listening on 127.0.0.1:" in output and "this machine only" in output

    stamps, actions = recorded_inputs(tmp_path / "ds")
    captured = np.array(captured)
    # Until the first sample has arrived the recorder stamps its own tick time: judge from 0.5 s after it on.
    stamps = stamps[stamps >= captured[0] + 500_000_000]
    assert len(stamps) >= 100  # of 150 frames (6 s at 25 fps)
    # Each recorded stamp belongs to the newest sample captured before it (samples are 11 ms apart, held back at
    # most 9 ms; a late sender loop can capture two almost together, so "nearest" could pick the wrong one).
    sample = np.searchsorted(captured, stamps, side="right") - 1
    error_ms = (stamps - captured[sample]) / 1e6
    assert np.all(error_ms <= 2.0), error_ms  # the capture time, late by at most the link's 2 ms
    held_back_ms = (np.array(sent)[sample] - captured[sample]) / 1e6
    assert np.sum(held_back_ms >= 4.5) >= 25  # recorded samples whose arrival time would have been >= 5 ms late
    assert np.ptp(actions, axis=0).max() > 0.02  # the simulated rig moved
