"""Ends that are clean: Ctrl-C or SIGTERM in the middle of a teledex-record episode, and a port in use, each end in
one line with its documented exit code and no traceback; what was saved before stays readable in both formats.
The signals go to a real teledex-record process once its output says it is recording; nothing waits on a timer."""

import signal
import socket
import subprocess

import pytest
from commands import command, command_env

from teledex_lerobot.cli.errors import USER_ERROR_EXIT, run_command
from teledex_lerobot.inputs.sources import UdpSource
from teledex_lerobot.inputs.xrobotoolkit import XRoboToolkitSource

FPS = 25


def record_args(root, *extra: str) -> list[str]:
    return command("teledex-record", "--robot.type=teledex", "--robot.id=t", "--robot.backend=fake",
                   "--robot.preset_cameras=false", "--teleop.type=teledex_replay", "--teleop.id=t",
                   "--dataset.repo_id=local/ends", f"--dataset.root={root}", "--dataset.single_task=grasp",
                   f"--dataset.fps={FPS}", "--dataset.num_episodes=5", "--dataset.episode_time_s=2",
                   "--dataset.reset_time_s=0", "--dataset.push_to_hub=false", *extra)


@pytest.mark.parametrize("signum, code, said", [(signal.SIGINT, 130, "Ctrl-C (SIGINT)"),
                                                (signal.SIGTERM, 143, "SIGTERM")], ids=["ctrl_c", "sigterm"])
def test_a_signal_mid_episode_ends_in_one_line_and_the_dataset_stays_readable(tmp_path, signum, code, said):
    from lerobot.datasets import LeRobotDataset

    from teledex_lerobot.storage.native import load_native_episode, native_episode_dirs
    from teledex_lerobot.storage.repair import committed_episodes

    root = tmp_path / "ds"
    stderr_path = tmp_path / "stderr.txt"
    with open(stderr_path, "w") as stderr:
        process = subprocess.Popen(record_args(root), env=command_env(tmp_path), stdout=subprocess.PIPE,
                                   stderr=stderr, stdin=subprocess.DEVNULL, text=True)
        output = []
        try:
            for line in process.stdout:  # episode 0 saved, episode 1 recording and past its first second
                output.append(line)
                if line.startswith("  episode 1 "):
                    break
            process.send_signal(signum)
            output += process.stdout.readlines()
            returncode = process.wait(timeout=120)
        finally:
            if process.poll() is None:
                process.kill()
    errors = stderr_path.read_text()
    assert any(line.startswith("Saved episode 0") for line in output), "".join(output)
    assert returncode == code, errors[-3000:]
    assert "Traceback" not in errors, errors[-3000:]
    last = errors.strip().splitlines()[-1]
    assert last.startswith(f"teledex-record: stopped by {said}: the episode in progress was saved as far as it got, "
                           'marked "interrupted"'), last
    assert any(line.startswith("Episode 1: interrupted after") and "saved and marked" in line for line in output)

    dataset = LeRobotDataset("local/ends", root=root)  # readable, with episode 0 whole and episode 1 as far as it got
    frames = [dataset[i] for i in range(len(dataset))]
    assert dataset.meta.total_episodes == 2 and {int(f["episode_index"]) for f in frames} == {0, 1}
    native = [load_native_episode(d, verify_checksums=True) for d in native_episode_dirs(f"{root}_native")]
    assert [e.episode_uuid for e in native] == [e["episode_uuid"] for e in committed_episodes(root)]
    assert "interrupted" not in native[0].metadata
    assert native[1].metadata["interrupted"]["signal"] == signal.Signals(signum).name
    assert native[1].metadata["interrupted"]["frames"] == len(native[1].telemetry["qpos"]) >= FPS  # past 1 s


def test_a_port_in_use_ends_in_one_line_naming_it(tmp_path):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as taken:
        taken.bind(("127.0.0.1", 0))
        port = taken.getsockname()[1]
        done = subprocess.run(command("teledex-record", "--robot.type=teledex", "--robot.backend=fake",
                                      "--robot.preset_cameras=false", "--teleop.type=teledex_glove",
                                      f"--teleop.port={port}", "--dataset.repo_id=local/port",
                                      f"--dataset.root={tmp_path / 'ds'}", "--dataset.single_task=t",
                                      "--dataset.num_episodes=1", "--dataset.push_to_hub=false"),
                              env=command_env(tmp_path), capture_output=True, text=True, timeout=300,
                              stdin=subprocess.DEVNULL)
    assert done.returncode == USER_ERROR_EXIT and "Traceback" not in done.stderr, done.stderr[-3000:]
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(f"teledex-record: error: cannot listen on 127.0.0.1:{port}: the port is in use"), last
    assert not (tmp_path / "ds").exists()


def test_every_listener_names_its_port_when_it_is_taken(capsys):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp, socket.create_server(("127.0.0.1", 0)) as tcp:
        udp.bind(("127.0.0.1", 0))
        for make, port in ((lambda p: UdpSource("127.0.0.1", p), udp.getsockname()[1]),
                           (lambda p: XRoboToolkitSource("127.0.0.1", p), tcp.getsockname()[1])):
            with pytest.raises(SystemExit) as ended:
                run_command("teledex-x", make, port)
            assert ended.value.code == USER_ERROR_EXIT
            line = capsys.readouterr().err
            assert line.count("\n") == 1 and f"cannot listen on 127.0.0.1:{port}: the port is in use" in line
