"""A recording pushed to the Hub, against a Hub on 127.0.0.1 (fake_hub.py), never the internet: both formats appear
with their cards; a push cut off halfway resumes and sends only what the Hub lacks; with no network teledex-record
says the data is saved and the one command that pushes it later, in one line, exit 2, no traceback. And info.json's
robot_type names the rig, while a dataset recorded when it said "teledex" still resumes."""

import json
import re
import shlex
import shutil
import socket
import subprocess
from pathlib import Path

import pytest
from commands import BIN, command, command_env
from fake_hub import FakeHub
from lerobot.configs.dataset import DatasetRecordConfig

from lerobot_robot_teledex import TeledexConfig, TeledexRenderCameraConfig
from lerobot_teleoperator_teledex import TeledexReplayConfig
from teledex_lerobot.cli.errors import USER_ERROR_EXIT
from teledex_lerobot.recording.hub import PushError, push
from teledex_lerobot.recording.recorder import Recorder, TeledexRecordConfig
from teledex_lerobot.storage.errors import DatasetError
from teledex_lerobot.storage.native import load_native_episode, native_episode_dirs

RIG = "piper+linkerhand_o6"  # the default preset's arm and hand
REPO = "user/grasp"
CAMERA = {"width": 160, "height": 120, "fps": 25}


def make_recorder(root: Path, episodes: int = 2, **extra) -> Recorder:
    return Recorder(TeledexRecordConfig(
        robot=TeledexConfig(backend="fake", cameras={"top": TeledexRenderCameraConfig(view="oblique", **CAMERA)}),
        teleop=TeledexReplayConfig(),
        dataset=DatasetRecordConfig(repo_id=REPO, root=str(root), single_task="grasp", fps=25, episode_time_s=0.4,
                                    reset_time_s=0, num_episodes=episodes, push_to_hub=False, video=True),
        **extra))


@pytest.fixture(scope="module")
def recording(tmp_path_factory) -> Path:
    """Two short episodes with a camera, in both formats; read-only for the tests that share it."""
    root = tmp_path_factory.mktemp("push") / "grasp"
    make_recorder(root).run()
    return root


def info(root: Path) -> dict:
    return json.loads((root / "meta" / "info.json").read_text())


def test_robot_type_names_the_rig_in_both_formats(recording):
    assert info(recording)["robot_type"] == RIG
    native = Path(f"{recording}_native")
    assert [json.loads(p.read_text())["robot_type"] for p in native.glob("session_*/session.json")] == [RIG]
    episodes = [load_native_episode(folder) for folder in native_episode_dirs(native)]
    assert [e.metadata["hardware"]["robot_type"] for e in episodes] == [RIG, RIG]


def _with_robot_type(recording: Path, tmp_path: Path, robot_type: str) -> Path:
    root = tmp_path / "grasp"
    shutil.copytree(recording, root)
    shutil.copytree(f"{recording}_native", f"{root}_native")
    for path in (root / "meta" / "info.json", root / "meta" / "info.teledex-backup.json"):
        path.write_text(json.dumps({**json.loads(path.read_text()), "robot_type": robot_type}))
    return root


def test_a_dataset_recorded_as_teledex_resumes_and_keeps_its_robot_type(recording, tmp_path):
    root = _with_robot_type(recording, tmp_path, "teledex")  # what every recording said before robot_type named the rig
    make_recorder(root, episodes=1, resume=True).run()
    assert info(root)["total_episodes"] == 3
    assert info(root)["robot_type"] == "teledex"  # one robot_type per dataset: LeRobot filters and merges by it
    sessions = sorted(Path(f"{root}_native").glob("session_*/session.json"))
    assert json.loads(sessions[-1].read_text())["robot_type"] == "teledex"


def test_a_dataset_of_another_rig_is_still_refused(recording, tmp_path):
    root = _with_robot_type(recording, tmp_path, "piper+linkerhand_l20")
    with pytest.raises(DatasetError, match=r"robot type: dataset has 'piper\+linkerhand_l20', the robot is "
                                           r"'piper\+linkerhand_o6'"):
        make_recorder(root, episodes=1, resume=True).run()


def test_offline_mode_refuses_in_one_line_with_the_command_that_pushes_later(recording):
    # the test session runs with HF_HUB_OFFLINE=1 (conftest.py)
    with pytest.raises(PushError, match=rf"HF_HUB_OFFLINE=1.*push later with `teledex-push {recording} "
                                        rf"--repo-id={REPO}`"):
        push(recording, REPO, progress=lambda _line: None)


def hub_run(argv: list[str], tmp_path: Path, hub_env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(argv, env={**command_env(tmp_path), **hub_env}, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=600)


def assert_on_hub(hub: FakeHub, repo_id: str, folder: Path) -> None:
    """The repository holds every file of the folder byte for byte (LeRobot's temporary images/ aside), and its
    card."""
    local = {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*")
             if p.is_file() and "images" not in p.relative_to(folder).parts}
    remote = {path: content for path, (_mode, content) in hub.repos[repo_id].files.items()}
    assert set(remote) == set(local) | {"README.md"}
    assert all(remote[path] == content for path, content in local.items())


def lfs_oids(hub: FakeHub, repo_id: str) -> set[str]:
    import hashlib

    return {hashlib.sha256(content).hexdigest() for mode, content in hub.repos[repo_id].files.values()
            if mode == "lfs"}


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]  # nothing listens there once it is closed: connection refused


@pytest.mark.slow
def test_without_network_the_recording_is_saved_and_the_printed_command_pushes_it(tmp_path):
    root = tmp_path / "grasp"
    no_network = {"HF_HUB_OFFLINE": "0", "HF_ENDPOINT": f"http://127.0.0.1:{closed_port()}", "HF_TOKEN": "hf_x"}
    done = hub_run(command(
        "teledex-record", "--robot.type=teledex", "--robot.id=t", "--robot.backend=fake",
        "--robot.preset_cameras=false", "--robot.cameras={top: {type: teledex_render, width: 160, height: 120, "
        "fps: 25}}", "--teleop.type=teledex_replay", "--teleop.id=t", f"--dataset.repo_id={REPO}",
        f"--dataset.root={root}", "--dataset.single_task=grasp", "--dataset.fps=25", "--dataset.num_episodes=1",
        "--dataset.episode_time_s=0.4", "--dataset.reset_time_s=0", "--dataset.private=true"), tmp_path, no_network)
    assert done.returncode == USER_ERROR_EXIT, done.stderr[-3000:]
    assert "Traceback" not in done.stderr + done.stdout, done.stderr[-3000:]
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(f"teledex-record: error: the 1 episode(s) are saved in {root} and {root}_native, not "
                           "pushed to the Hub: cannot reach http://127.0.0.1:"), last
    again = re.search(r"push later with `([^`]+)`", last).group(1)
    assert again == f"teledex-push {root} --repo-id={REPO} --private"

    with FakeHub() as hub:
        argv = shlex.split(again)
        done = hub_run([str(BIN / argv[0]), *argv[1:]], tmp_path, hub.env())
        assert done.returncode == 0, done.stderr[-3000:]
        assert done.stdout.strip().splitlines()[-1] == (f"Pushed: {hub.url}/datasets/{REPO}, "
                                                        f"{hub.url}/datasets/{REPO}_native")
        assert_on_hub(hub, REPO, root)
        assert_on_hub(hub, f"{REPO}_native", Path(f"{root}_native"))
        assert hub.repos[REPO].private and hub.repos[f"{REPO}_native"].private
        assert hub.repos[REPO].tags == {"v3.0": hub.repos[REPO].head}  # the revision LeRobot loads a Hub dataset by
        card = hub.file(REPO, "README.md").decode()
        native_card = hub.file(f"{REPO}_native", "README.md").decode()
    for text in (card, native_card):
        assert text.startswith("---\nlicense: apache-2.0\n")
        assert f"| Rig (robot_type) | {RIG} |" in text
        assert "| Arm | piper |" in text and "| Hand | linkerhand_o6 |" in text
        assert "| Cameras | top TeledexRenderCamera 160x120 at 25 fps |" in text
        sync_row = r"\| \d+ \| \d+\.\d\d% \| [\d.]+ ms \| [\d.]+ ms \| [\d.]+ ms \| 100\.0 ms \| \d+ of \d+ \|"
        assert re.search(sync_row, text)
        assert f"[{REPO}_native](../{REPO}_native)" in text
    assert '"robot_type": "piper+linkerhand_o6"' in card  # LeRobot's own part of its card: info.json
    assert "configs:" in card and "viewer: false" in native_card


@pytest.mark.slow
def test_a_push_cut_off_halfway_resumes_sending_only_what_the_hub_lacks(recording, tmp_path):
    native = f"{REPO}_native"
    argv = command("teledex-push", str(recording), f"--repo-id={REPO}")
    with FakeHub(fail_upload=(native, 2)) as hub:  # the LeRobot repository pushed, the native one halfway
        first = hub_run(argv, tmp_path, hub.env())
        assert first.returncode == USER_ERROR_EXIT, first.stderr[-3000:]
        assert "Traceback" not in first.stderr
        assert first.stderr.strip().splitlines()[-1].endswith(
            f"push later with `teledex-push {recording} --repo-id={REPO}` (run again, it sends only what the Hub "
            "lacks)")
        assert_on_hub(hub, REPO, recording)
        assert hub.repos[native].commits == []
        commits = list(hub.repos[REPO].commits)
        stored = set(hub.repos[native].lfs)
        uploads = len(hub.uploads)

        second = hub_run(argv, tmp_path, hub.env())
        assert second.returncode == 0, second.stderr[-3000:]
        assert_on_hub(hub, native, Path(f"{recording}_native"))
        assert hub.repos[REPO].commits == commits  # nothing committed again: it was all there
        sent = hub.uploads[uploads:]
        # huggingface_hub uploads several files at once, so how many were stored before the failure varies; the
        # resumed push sends each file the Hub lacked exactly once, and nothing it had
        assert {repo for repo, _ in sent} == {native}
        assert sorted(oid for _, oid in sent) == sorted(lfs_oids(hub, native) - stored)
