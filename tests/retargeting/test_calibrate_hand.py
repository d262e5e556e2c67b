"""teledex-calibrate-hand from an operator's own session: a recorded datagram file (keypoints, XR hand tracking, a
glove) or a live source with prompts; the calibration lands in the user's data folder and the teleoperator takes it
by the operator's name."""

import threading

import numpy as np
import pytest

from lerobot_teleoperator_teledex import TeledexReplay, TeledexReplayConfig
from teledex_lerobot.cli.calibrate_hand import main as calibrate_hand
from teledex_lerobot.inputs.datagram_file import read_datagrams
from teledex_lerobot.inputs.sources import send_datagrams
from teledex_lerobot.operator.calibration_session import CalibrationStep
from teledex_lerobot.paths import CONFIGS_DIR, STREAMS_DIR, URDF_DIR
from teledex_lerobot.retargeting import HandCalibration

PRESET_HAND = "linkerhand_o6"  # the default preset's hand


@pytest.fixture
def calibrations(tmp_path, monkeypatch):
    folder = tmp_path / "calibrations"
    monkeypatch.setenv("TELEDEX_CALIBRATIONS_DIR", str(folder))
    return folder


@pytest.mark.parametrize("session", ["open_close", "xr_hand_tracking"])
def test_round_trip_from_a_recorded_session(session, calibrations):
    calibrate_hand(["--hand", PRESET_HAND, "--operator", "alice",
                    "--recording", str(STREAMS_DIR / f"{session}.datagrams.jsonl")])
    path = calibrations / "alice" / f"{PRESET_HAND}_right.yaml"
    calibration = HandCalibration.load(path)
    assert calibration.operator == "alice" and calibration.side == "right"
    # the session opens and closes the hand: the operator's own flexion range, and pinch ranges from the motion
    low, high = calibration.canonical_angle_ranges_rad["index_mcp_flex"]
    assert high - low > 0.8
    assert all(high - low > 0.01 for low, high in calibration.pinch_distance_range_m.values())
    assert not (CONFIGS_DIR / "retargeting" / "calibrations").exists()  # never into the package's data
    # the teleoperator takes it by the operator's name, and its retargeter uses it
    teleop = TeledexReplay(TeledexReplayConfig(replay_file="open_close", preset="piper_linkerhand_o6_single",
                                               hand_calibration="alice"))
    used = teleop.followers[""].strategy.hand_retargeter.calibration
    assert used.segment_scales == calibration.segment_scales


def test_a_glove_session_calibrates_the_angle_ranges(calibrations):
    calibrate_hand(["--hand", PRESET_HAND, "--operator", "bob",
                    "--recording", str(STREAMS_DIR / "glove_open_close.datagrams.jsonl")])
    calibration = HandCalibration.load(calibrations / "bob" / f"{PRESET_HAND}_right.yaml")
    low, high = calibration.canonical_angle_ranges_rad["index_mcp_flex"]
    assert high - low > 0.8
    teleop = TeledexReplay(TeledexReplayConfig(replay_file="glove_open_close", preset="piper_linkerhand_o6_single",
                                               hand_calibration="bob"))
    used = teleop.followers[""].strategy.hand_retargeter
    assert used.method == "joint_mapping"
    assert used.calibration.canonical_angle_ranges_rad == calibration.canonical_angle_ranges_rad


def test_live_session_with_prompts(calibrations, monkeypatch, capsys):
    """--live udp: the prompts run, the packets sent meanwhile are recorded next to the calibration and used."""
    monkeypatch.setattr("teledex_lerobot.cli.calibrate_hand.CALIBRATION_STEPS",
                        (CalibrationStep("pose", "Hold the calibration pose", 0.3),
                         CalibrationStep("open_close", "Open and close your hand", 2.5)))
    monkeypatch.setattr("teledex_lerobot.cli.calibrate_hand.time.sleep", lambda s: threading.Event().wait(s / 20))
    _, datagrams = read_datagrams(STREAMS_DIR / "open_close.datagrams.jsonl")
    port = 47000 + np.random.default_rng().integers(0, 2000)
    stop = threading.Event()
    sender = threading.Thread(target=lambda: send_datagrams(datagrams, ("127.0.0.1", int(port)), speed=4.0, stop=stop),
                              daemon=True)
    sender.start()
    try:
        calibrate_hand(["--hand", PRESET_HAND, "--operator", "carol", "--live", "udp", "--port", str(port)])
    finally:
        stop.set()
    output = capsys.readouterr().out
    assert "Hold the calibration pose: NOW" in output and "Open and close your hand: NOW" in output
    recorded = calibrations / "carol" / f"{PRESET_HAND}_right.datagrams.jsonl"
    header, datagrams = read_datagrams(recorded)
    assert len(datagrams) > 20 and [name for name, _ in header["steps"]] == ["pose", "open_close"]
    assert HandCalibration.load(calibrations / "carol" / f"{PRESET_HAND}_right.yaml").operator == "carol"


def test_a_session_without_that_hand_is_one_clear_error(calibrations, capsys):
    with pytest.raises(SystemExit) as exit_info:
        calibrate_hand(["--hand", PRESET_HAND, "--side", "left", "--operator", "dan",
                        "--recording", str(STREAMS_DIR / "open_close.datagrams.jsonl")])
    assert exit_info.value.code == 2
    assert "no left hand in it" in capsys.readouterr().err


def test_an_unknown_operator_names_the_known_ones(calibrations):
    calibrate_hand(["--hand", PRESET_HAND, "--operator", "erin",
                    "--recording", str(STREAMS_DIR / "open_close.datagrams.jsonl")])
    with pytest.raises(ValueError, match="No calibration of operator 'frank'.*erin"):
        TeledexReplay(TeledexReplayConfig(replay_file="open_close", preset="piper_linkerhand_o6_single",
                                          hand_calibration="frank"))


@pytest.mark.parametrize("name", ["../../x", "a/b", "..", ".hidden", ""])
def test_an_operator_name_is_one_folder_never_a_path(calibrations, tmp_path, capsys, name):
    with pytest.raises(SystemExit) as exit_info:
        calibrate_hand(["--hand", PRESET_HAND, "--operator", name,
                        "--recording", str(STREAMS_DIR / "open_close.datagrams.jsonl")])
    assert exit_info.value.code == 2
    assert "argument --operator: operator name" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == [] and not (tmp_path.parent / "x").exists()  # nothing written, even at ../../x
    with pytest.raises(ValueError, match="operator name"):
        TeledexReplay(TeledexReplayConfig(replay_file="open_close", preset="piper_linkerhand_o6_single",
                                          hand_calibration=name or "..."))


def test_a_hand_of_the_other_side_is_refused_and_nothing_is_saved(calibrations, capsys):
    """A right operator's session on a left hand's URDF: its root offsets would subtract one side's hand from the
    other's (the retargeter mirrors the operator's hand onto it; a calibration does not)."""
    with pytest.raises(SystemExit) as exit_info:
        calibrate_hand(["--hand", str(URDF_DIR / f"{PRESET_HAND}_left.urdf"), "--operator", "fay",
                        "--recording", str(STREAMS_DIR / "open_close.datagrams.jsonl")])
    assert exit_info.value.code == 2
    assert "a hand of the other side than --side=right" in capsys.readouterr().err
    assert not calibrations.exists()
