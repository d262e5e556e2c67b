"""Wrong invocations a user makes on a first day (a hand given as the arm, a preset that is not there, a port
out of range, a path that is no dataset, a camera slower than the recording): each command ends in one line that
names what is wrong and the fix, exit code 2, no traceback, no config dump, and nothing written.

They run in this process (each command's main(), its argv patched), so the table costs seconds; LeRobot's own
lerobot-record, whose one line comes from the hook our plugin packages install, runs as a process."""

import subprocess
import sys

import pytest
from commands import command, command_env

from teledex_lerobot.cli import convert, doctor, push, record, sync_report
from teledex_lerobot.errors import USER_ERROR_EXIT

DATASET = ["--dataset.repo_id=local/wrong", "--dataset.root=rec", "--dataset.single_task=t",
           "--dataset.num_episodes=1", "--dataset.episode_time_s=1", "--dataset.push_to_hub=false"]
REPLAY = ["--teleop.type=teledex_replay", *DATASET]

# (name, command, arguments, words the one line must hold)
WRONG = [
    ("hand as the arm", record, ["--robot.type=teledex_arm", "--robot.model=linkerhand_o6", *REPLAY],
     ["linkerhand_o6", "hand", "--robot.model"]),
    ("arm as the hand", record, ["--robot.type=teledex_hand", "--robot.model=piper", *REPLAY],
     ["piper", "arm", "--robot.model"]),
    ("unknown model", record, ["--robot.type=teledex_arm", "--robot.model=ur5e", *REPLAY], ["ur5e"]),
    ("unknown preset", record, ["--robot.type=teledex", "--robot.preset=no_such_preset", *REPLAY],
     ["no_such_preset", "piper_linkerhand_o6_single"]),
    ("missing preset file", record, ["--robot.type=teledex", "--robot.preset=missing.yaml", *REPLAY],
     ["missing.yaml"]),
    ("several rigs as one", record, ["--robot.type=teledex", "--robot.preset=bimanual_piper_linkerhand_l10", *REPLAY],
     ["teledex_followers"]),
    ("a side that is none", record, ["--robot.type=teledex_hand", "--robot.side=middle", *REPLAY], ["middle"]),
    ("unknown backend", record, ["--robot.type=teledex", "--robot.backend=hardware", *REPLAY], ["hardware", "real"]),
    ("no such CAN interface", record, ["--robot.type=teledex", "--robot.backend=real", "--robot.real.arm.channel=can9",
                                       "--robot.real.hand.channel=can8", *REPLAY], ["can9", "ip -br link"]),
    ("unknown joint", record, ["--robot.type=teledex_arm", "--robot.home={elbow: 1.0}", *REPLAY],
     ["elbow", "joint1"]),
    ("unknown world task", record, ["--robot.type=teledex", "--robot.backend=mujoco", "--robot.world.task=juggling",
                                    *REPLAY], ["juggling", "cube_assembly"]),
    ("missing recorded input", record, ["--robot.type=teledex", "--teleop.type=teledex_replay",
                                        "--teleop.replay_file=none.datagrams.jsonl", *DATASET],
     ["none.datagrams.jsonl"]),
    ("unknown control config", record, ["--robot.type=teledex", "--teleop.type=teledex_xr",
                                        "--teleop.control=no_such_control", *DATASET], ["no_such_control"]),
    ("port out of range", record, ["--robot.type=teledex", "--teleop.type=teledex_xr", "--teleop.source=webxr",
                                   "--teleop.view_port=70000", *DATASET], ["70000", "--teleop.view_port"]),
    ("negative sync tolerance", record, ["--robot.type=teledex", "--sync.tolerance_ms=-5", *REPLAY],
     ["tolerance_ms"]),
    ("a camera slower than the recording", record,
     ["--robot.type=teledex", *REPLAY,
      "--robot.cameras={top: {type: teledex_render, view: top, width: 64, height: 48, fps: 10}}"],
     ["top", "10 fps", "--dataset.fps"]),
    ("fps above the preset's cameras", record, ["--robot.type=teledex", *REPLAY, "--dataset.fps=30"],
     ["25 fps", "--dataset.fps"]),
    ("root is a file", record, ["--robot.type=teledex", *REPLAY[:-5], "--dataset.root=afile", *REPLAY[-4:]],
     ["afile", "folder"]),
    ("resume of nothing", record, ["--robot.type=teledex", *REPLAY, "--resume=true"], ["--resume"]),
    ("doctor: unknown preset", doctor, ["--preset", "no_such_preset"], ["no_such_preset"]),
    ("sync report of nothing", sync_report, ["no_such_dataset"], ["no_such_dataset"]),
    ("push of nothing", push, ["no_such_dataset", "--repo-id=user/x"], ["no_such_dataset"]),
    ("convert a folder that is no recording", convert, ["to-lerobot", "empty", "out", "--repo-id=local/x"],
     ["empty"]),
]


@pytest.mark.parametrize("name, cli, argv, words", WRONG, ids=[case[0] for case in WRONG])
def test_a_wrong_invocation_ends_in_one_line_and_writes_nothing(name, cli, argv, words, tmp_path, monkeypatch,
                                                                capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("")
    (tmp_path / "empty").mkdir()
    before = sorted(tmp_path.iterdir())
    program = cli.__name__.rsplit(".", 1)[-1].replace("_", "-")
    monkeypatch.setattr(sys, "argv", [f"teledex-{program}", *argv])
    with pytest.raises(SystemExit) as ended:
        cli.main()
    err = capsys.readouterr().err
    assert ended.value.code == USER_ERROR_EXIT, err[-3000:]
    assert "Traceback" not in err and "Config(" not in err, err[-3000:]  # no traceback, no config dump
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"teledex-{program}") and "error: " in last, err[-3000:]
    for word in words:
        assert word in last, last
    assert sorted(tmp_path.iterdir()) == before  # nothing written


@pytest.mark.slow
def test_lerobot_record_with_our_types_ends_our_error_in_one_line(tmp_path):
    """LeRobot's own command re-raises our robot's refusal with the whole config in its message; the hook our
    plugin packages install ends it as our commands do."""
    ended = subprocess.run(command("lerobot-record", "--robot.type=teledex_arm", "--robot.model=linkerhand_o6",
                                   *REPLAY), cwd=tmp_path, capture_output=True, text=True, timeout=300,
                           env=command_env(tmp_path), stdin=subprocess.DEVNULL)
    assert ended.returncode == USER_ERROR_EXIT, ended.stderr[-3000:]
    assert "Traceback" not in ended.stderr
    last = ended.stderr.strip().splitlines()[-1]
    assert last.startswith("lerobot-record: error: ") and "linkerhand_o6" in last and "Config(" not in last, last
    assert not (tmp_path / "rec").exists() and not (tmp_path / "rec_native").exists()
