"""The operator's live view (teledex_lerobot.viewer), judged on what it saved: every test writes .rrd files and reads
them back with Rerun's own reader (rerun.experimental.RrdReader), headless; no viewer is started."""

import subprocess
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path

import cv2
import numpy as np
import pytest
from rerun.experimental import RrdReader

from lerobot_robot_teledex import Teledex, TeledexConfig, TeledexFollowers, TeledexFollowersConfig
from lerobot_robot_teledex.sync_validated import SyncValidatedRobot
from lerobot_teleoperator_teledex import TeledexReplay, TeledexReplayConfig
from teledex_lerobot.clock import now_ns
from teledex_lerobot.errors import DeviceError
from teledex_lerobot.inputs.frame import OperatorFrame
from teledex_lerobot.operator.hand_model import keypoints_from_angles
from teledex_lerobot.presets import load_preset
from teledex_lerobot.rig import Rig
from teledex_lerobot.sync import SyncPolicy, validate_timestamps
from teledex_lerobot.viewer import LiveViewConfig
from teledex_lerobot.viewer.live_view import QUEUE_SIZE, LiveView
from teledex_lerobot.viewer.painter import status_text, sync_lags_ms, sync_summary
from teledex_lerobot.viewer.scene import RigDrawing

PRESET = "piper_linkerhand_o6_single"
MS = 1_000_000


def read_rrd(path: Path) -> dict[str, list[dict]]:
    """Entity path -> its rows in the order logged (static rows under "<path>:static"), each a dict column -> value."""
    rows = defaultdict(list)
    for chunk in RrdReader(path).stream():
        batch = chunk.to_record_batch()
        columns = {name: batch.column(name).to_pylist() for name in batch.schema.names}
        key = chunk.entity_path + (":static" if chunk.is_static else "")
        rows[key] += [{name: values[i] for name, values in columns.items()} for i in range(chunk.num_rows)]
    for entity_rows in rows.values():
        if "log_tick" in entity_rows[0]:
            entity_rows.sort(key=lambda row: row["log_tick"])
    return dict(rows)


def texts(rows: list[dict], column: str) -> list[str]:
    return [row[column][0] for row in rows]


def by_time(rows: list[dict], column: str) -> dict:
    return {row["time"]: row[column] for row in rows}


def test_a_recording_loop_reads_back_with_every_panel_true_to_the_robot(tmp_path):
    """The robot, teleoperator and recorder calls of teledex-record's loop, with the view on: the saved episode holds
    the robot drawn where its logged joints put it, the robot hand's fingertips where the commanded joints put them,
    every frame's sync check, each camera and the episode's events."""
    config = LiveViewConfig(enabled=True, viewer="none", rrd_dir=str(tmp_path))
    robot = SyncValidatedRobot(Teledex(TeledexConfig(preset=PRESET, backend="sim", live_view=config)))
    teleop = TeledexReplay(TeledexReplayConfig(replay_file="open_close"))
    teleop.connect()
    robot.connect()
    packets = []
    try:
        view = robot.robot.station.live_view
        assert view is not None and teleop.station is robot.robot.station  # the teleoperator feeds the robot's view
        view.start_episode(0, 2.0)
        for _ in range(40):
            robot.get_observation()
            action = teleop.get_action()
            packets.append(robot.validate({"input": teleop.sample_capture_ns or now_ns()}))
            view.sync(packets[-1])
            robot.send_action(action)
            time.sleep(0.02)
        view.end_episode("saved")
    finally:
        teleop.disconnect()
        robot.disconnect()
    assert robot.robot.station.live_view is None  # the robot that started the view stopped it

    assert len(list(tmp_path.glob("session_*.rrd"))) == 1  # what came before the episode
    rows = read_rrd(tmp_path / "episode_000000.rrd")
    for entity in ("/world/robot/measured", "/world/robot/commanded", "/hands/robot/operator/bones",
                   "/hands/robot/operator/tips", "/hands/robot/robot/links", "/hands/robot/robot/tips",
                   "/joints/robot/arm/measured", "/joints/robot/hand/commanded", "/cameras/robot/top",
                   "/sync/valid", "/sync/max_diff_ms", "/sync/lag_ms", "/status", "/events"):
        assert rows.get(entity), f"{entity} missing; saved: {sorted(rows)}"

    drawing = RigDrawing.of("robot", Rig.from_preset(load_preset(PRESET)), np.zeros(3))
    for kind in ("measured", "commanded"):
        arm = by_time(rows[f"/joints/robot/arm/{kind}"], "Scalars:scalars")
        hand = by_time(rows[f"/joints/robot/hand/{kind}"], "Scalars:scalars")
        for row in rows[f"/world/robot/{kind}"]:
            drawn = np.array(row["LineStrips3D:strips"], dtype=float)
            expected = drawing.world_segments({"arm": np.array(arm[row["time"]]), "hand": np.array(hand[row["time"]])})
            np.testing.assert_allclose(drawn, expected, atol=1e-5)
    hand = by_time(rows["/joints/robot/hand/commanded"], "Scalars:scalars")
    for row in rows["/hands/robot/robot/tips"]:
        expected = drawing.fingertips(np.array(hand[row["time"]]))
        np.testing.assert_allclose(np.array(row["Points3D:positions"]), expected, atol=1e-5)
        assert row["Points3D:labels"] == ["thumb", "index", "middle", "ring", "pinky"]
    commanded = np.array([hand[t] for t in sorted(hand)])
    assert np.ptp(commanded, axis=0).max() > 0.3  # the replayed hand opened and closed: the view followed it

    assert len(rows["/sync/valid"]) == len(packets)  # every frame's check, none thinned out
    assert [row["Scalars:scalars"][0] for row in rows["/sync/valid"]] == [float(p.valid) for p in packets]
    assert rows["/sync/lag_ms:static"][-1]["SeriesLines:names"] == list(packets[0].timestamps_ns)
    image = cv2.imdecode(np.frombuffer(bytes(rows["/cameras/robot/top"][-1]["EncodedImage:blob"][0]), np.uint8),
                         cv2.IMREAD_COLOR)
    assert image.shape == (480, 640, 3)  # the preset top camera, as recorded
    events = texts(rows["/events"], "TextLog:text")
    assert events[0] == "episode 0 begins" and events[-1].startswith("episode 0 ends after")
    assert events[-1].endswith(": saved")
    status = texts(rows["/status"], "TextDocument:text")[-1]
    assert status.startswith("- **Teleoperation**") and "**Episode** 0 ·" in status and "**Sync** " in status


def feed(view: LiveView, rig: Rig, arm_joint1: float, count: int) -> None:
    """`count` observations of the rig with its first arm joint at `arm_joint1`, 2 ms apart."""
    joints = rig.join({role: part.home for role, part in rig.parts.items()})
    for _ in range(count):
        view.robot_state("robot", {**joints, "arm_joint1.pos": arm_joint1}, {}, {})
        time.sleep(0.002)


def test_each_episode_gets_its_own_file_and_nothing_between_episodes_is_saved(tmp_path):
    rig = Rig.from_preset(load_preset(PRESET))
    view = LiveView(LiveViewConfig(enabled=True, viewer="none", rrd_dir=str(tmp_path), max_hz=1000))
    view.add_rig("robot", rig, [])
    feed(view, rig, 0.1, 5)
    view.start_episode(0, 10.0)
    feed(view, rig, 0.2, 5)
    view.end_episode("saved")
    feed(view, rig, 0.3, 5)  # the reset between episodes
    view.start_episode(1, 10.0)
    feed(view, rig, 0.4, 5)
    view.end_episode("discarded")
    view.close()

    def first_joints(path):
        return {row["Scalars:scalars"][0] for row in read_rrd(path)["/joints/robot/arm/measured"]}

    (session,) = tmp_path.glob("session_*.rrd")
    assert first_joints(session) == {0.1}
    assert first_joints(tmp_path / "episode_000000.rrd") == {0.2}
    assert first_joints(tmp_path / "episode_000001.rrd") == {0.4}
    events = texts(read_rrd(tmp_path / "episode_000001.rrd")["/events"], "TextLog:text")
    assert events[0] == "episode 1 begins" and events[-1].endswith(": discarded")
    # each file opens with the labels of the joint plots
    names = read_rrd(tmp_path / "episode_000001.rrd")["/joints/robot/arm/measured:static"][0]["SeriesLines:names"]
    assert names == [f"joint{i} measured" for i in range(1, 7)]


def test_a_full_queue_drops_and_counts_and_never_blocks_the_caller(tmp_path):
    view = LiveView(LiveViewConfig(enabled=True, viewer="none", rrd_dir=str(tmp_path)))
    entered, release = threading.Event(), threading.Event()
    handle = view.painter.handle

    def stuck(*args, **kwargs):
        entered.set()
        release.wait()
        handle(*args, **kwargs)

    view.painter.handle = stuck
    view.end_episode("nothing")  # the view's thread takes it and stays stuck drawing it
    assert entered.wait(10)
    packet = validate_timestamps({"arm": now_ns()}, now_ns(), SyncPolicy())
    for _ in range(QUEUE_SIZE + 10):
        view.sync(packet)  # returns at once although nothing is being drawn
    assert view.dropped == 10
    release.set()
    view.close()
    assert view.handled == 1 + QUEUE_SIZE and view.error is None


def test_faults_state_changes_and_lost_sync_become_events(tmp_path):
    rig = Rig.from_preset(load_preset(PRESET))
    joints = rig.join({role: part.home for role, part in rig.parts.items()})
    keypoints = keypoints_from_angles(np.zeros(20), "right")
    view = LiveView(LiveViewConfig(enabled=True, viewer="none", rrd_dir=str(tmp_path)))
    view.add_rig("robot", rig, [])
    view.start_episode(3, 60.0)
    now = now_ns()
    for state in ("ZeroPos", "ZeroPos", "Teleoperation", "Emergency"):  # fed at once: drawn once, all noted
        view.operator(OperatorFrame(now, hand_keypoints_m={"right": keypoints}), state, False)
    view.robot_state("robot", joints, {}, {"hand": "no reply for 120 ms: check the hand's CAN cable"})
    view.robot_state("robot", joints, {}, {})
    view.sync(validate_timestamps({"arm": now, "top": now}, now, SyncPolicy()))
    view.sync(validate_timestamps({"arm": now, "top": now - 300 * MS}, now, SyncPolicy(tolerance_ms=100)))
    view.end_episode("saved")
    view.close()
    events = texts(read_rrd(tmp_path / "episode_000003.rrd")["/events"], "TextLog:text")
    assert events[1:-1] == [
        "state: ZeroPos -> Teleoperation", "state: Teleoperation -> Emergency",
        "FAULT robot/hand: no reply for 120 ms: check the hand's CAN cable", "fault cleared: robot/hand",
        "sync lost: INVALID · spread 300.0 ms · lagging: top by 300.0 ms"]


def test_several_followers_are_drawn_side_by_side(tmp_path):
    config = LiveViewConfig(enabled=True, viewer="none", rrd_dir=str(tmp_path))
    robot = TeledexFollowers(TeledexFollowersConfig(followers={"left": PRESET, "right": PRESET}, backend="fake",
                                                    with_cameras=False, live_view=config))
    robot.connect()
    try:
        for _ in range(3):
            robot.send_action(robot.get_observation())
            time.sleep(0.05)
    finally:
        robot.disconnect()
    assert robot.station.live_view is None
    (session,) = tmp_path.glob("session_*.rrd")
    rows = read_rrd(session)
    bases = {name: np.array(rows[f"/world/{name}/measured"][-1]["LineStrips3D:strips"][0][0])
             for name in ("left", "right")}
    assert np.linalg.norm(bases["left"] - bases["right"]) > 0.5  # same preset, drawn apart
    assert {"/world/left/commanded", "/world/right/commanded", "/joints/right/hand/measured"} <= set(rows)


def test_sync_lag_and_status_text():
    now = 10_000 * MS
    packet = validate_timestamps({"arm": now - 2 * MS, "hand": None, "top": now - 40 * MS, "input": now}, now,
                                 SyncPolicy(tolerance_ms=30))
    lags = sync_lags_ms(packet)
    assert lags["arm"] == pytest.approx(2.0) and lags["top"] == pytest.approx(40.0) and lags["input"] == 0.0
    assert np.isnan(lags["hand"])
    assert sync_summary(packet) == "INVALID · spread 40.0 ms · lagging: top by 40.0 ms · stale: hand"
    text = status_text(state="Teleoperation", input_age_ms=12.4, stale=True, episode="2 · 3.0 s of 60 s",
                       sync=sync_summary(packet), faults={"robot/arm": "bus off"}, dropped=3)
    assert text.splitlines()[0] == "- **Teleoperation** · input 12 ms old · **STALE: holding**"
    assert "**FAULT robot/arm**: bus off" in text and "3 updates dropped" in text


def test_bad_settings_are_refused_naming_the_field(monkeypatch):
    with pytest.raises(ValueError, match="live_view.viewer must be one of"):
        TeledexConfig(backend="fake", live_view=LiveViewConfig(enabled=True, viewer="vnc"))
    with pytest.raises(ValueError, match="live_view.viewer=none shows nothing"):
        LiveViewConfig(enabled=True, viewer="none").validate()
    with pytest.raises(ValueError, match="live_view.url must look like"):
        LiveViewConfig(enabled=True, viewer="connect", url="localhost:9876").validate()
    if sys.platform.startswith("linux"):
        monkeypatch.delenv("DISPLAY", raising=False)
        monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
        with pytest.raises(ValueError, match="no desktop here .* use live_view.viewer=web"):
            LiveViewConfig(enabled=True).validate()


def test_connecting_to_no_viewer_is_one_clear_error():
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # nothing listens there once the probe is closed
    with pytest.raises(DeviceError, match=f"no Rerun viewer listens at rerun\\+http://127.0.0.1:{port}/proxy"):
        LiveView(LiveViewConfig(enabled=True, viewer="connect", url=f"rerun+http://127.0.0.1:{port}/proxy"))


def test_commands_without_the_view_do_not_import_rerun():
    """Rerun takes seconds to import: a command that does not show the view must not pay for it (the robots and
    teleoperators import only the package, to look for a running view)."""
    code = "import sys, teledex_lerobot.viewer; assert 'rerun' not in sys.modules, 'rerun imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


def entities_of(directory: Path) -> set[str]:
    return {entity for path in directory.glob("*.rrd") for entity in read_rrd(path)}


RIG_AND_OPERATOR = {"/world/robot/measured", "/world/robot/commanded", "/hands/robot/operator/bones",
                    "/hands/robot/robot/tips", "/cameras/robot/top", "/status"}


@pytest.mark.slow
def test_in_lerobot_teleoperate(tmp_path):
    """LeRobot's own loop, with the flag on our robot (lerobot-teleoperate builds the teleoperator before the robot,
    so the teleoperator is given the preset too)."""
    from commands import command, run

    run(command("lerobot-teleoperate", "--robot.type=teledex", "--robot.backend=sim",
                "--robot.live_view.enabled=true", "--robot.live_view.viewer=none",
                f"--robot.live_view.rrd_dir={tmp_path / 'view'}", "--teleop.type=teledex_replay",
                f"--teleop.preset={PRESET}", "--teleop.replay_file=open_close", "--teleop_time_s=3"), tmp_path)
    (session,) = (tmp_path / "view").glob("session_*.rrd")
    rows = read_rrd(session)
    assert RIG_AND_OPERATOR <= set(rows)
    assert "Teleoperation" in texts(rows["/status"], "TextDocument:text")[-1]


@pytest.mark.slow
def test_in_teledex_record(tmp_path):
    from commands import command, run

    run(command("teledex-record", "--robot.type=teledex", "--robot.live_view.enabled=true",
                "--robot.live_view.viewer=none", f"--robot.live_view.rrd_dir={tmp_path / 'view'}",
                "--teleop.type=teledex_replay", "--teleop.replay_file=open_close", "--dataset.repo_id=local/view",
                f"--dataset.root={tmp_path / 'ds'}", "--dataset.single_task=t", "--dataset.num_episodes=1",
                "--dataset.episode_time_s=2", "--dataset.reset_time_s=0", "--dataset.push_to_hub=false"), tmp_path)
    assert RIG_AND_OPERATOR <= entities_of(tmp_path / "view")
    assert (tmp_path / "ds" / "meta" / "info.json").exists()  # and the recording itself is saved
    rows = read_rrd(tmp_path / "view" / "episode_000000.rrd")  # the recorder marks its episodes and sync
    assert "/sync/valid" in rows
    assert texts(rows["/events"], "TextLog:text")[-1].endswith(": saved")


@pytest.mark.slow
def test_lerobot_display_data_works_with_our_robot(tmp_path):
    """LeRobot's own --display_data (Rerun, the viz extra's range we depend on). Rerun's test switch
    _RERUN_TEST_FORCE_SAVE writes the stream to a file instead of spawning a viewer."""
    from commands import command, command_env

    saved = tmp_path / "lerobot.rrd"
    done = subprocess.run(command("lerobot-teleoperate", "--robot.type=teledex", "--robot.backend=sim",
                                  "--teleop.type=teledex_replay", f"--teleop.preset={PRESET}",
                                  "--teleop.replay_file=open_close", "--teleop_time_s=2", "--display_data=true"),
                          env={**command_env(tmp_path), "_RERUN_TEST_FORCE_SAVE": str(saved)}, capture_output=True,
                          text=True, timeout=600, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-3000:]
    logged = {entity.removesuffix(":static") for entity in read_rrd(saved)}
    assert {"/observation.arm_joint1.pos", "/action.hand_thumb_cmc_pitch.pos", "/observation.top"} <= logged
