"""teledex-doctor against the simulators: healthy devices pass, missing or faulty ones come with a fix."""

import pytest
from device_harness import unique_channel

from teledex_lerobot.can.port import CanPortConfig
from teledex_lerobot.cli import doctor
from teledex_lerobot.devices.agilex.probe import probe_piper
from teledex_lerobot.devices.agilex.simulator import PiperSimConfig, PiperSimulator
from teledex_lerobot.devices.linkerhand.simulator import LinkerHandSimConfig, LinkerHandSimulator


def beside_the_rate(problems: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The problems a report names besides a slow joint feedback: the simulator sends in real time, and on a busy
    machine its 200 Hz falls below the doctor's bound (90 Hz seen beside a test worker)."""
    return [(what, fix) for what, fix in problems if not what.startswith("joint feedback at")]


def test_healthy_devices():
    arm, hand = CanPortConfig("virtual", unique_channel("doc-arm")), CanPortConfig("virtual", unique_channel("doc-h"))
    with PiperSimulator(PiperSimConfig(channel=arm.channel)), \
            LinkerHandSimulator(LinkerHandSimConfig(model="linkerhand_o6", channel=hand.channel)):
        reports = doctor.run("piper_linkerhand_o6_single", arm, hand, [])
    assert [beside_the_rate(r.problems) for r in reports] == [[], []], [r.render() for r in reports]
    assert any("firmware S-V1.6-3" in fact for fact in reports[0].facts)
    assert any("joint feedback" in fact for fact in reports[0].facts)


def test_problems_come_with_fixes():
    arm, hand = CanPortConfig("virtual", unique_channel("doc-arm")), CanPortConfig("virtual", unique_channel("doc-h"))
    with PiperSimulator(PiperSimConfig(channel=arm.channel)) as piper:
        piper.set_joint_error(2, "comm")
        reports = doctor.run("piper_linkerhand_o6_single", arm, hand, [])  # no hand on its bus
    arm_report, hand_report = reports
    assert any("joint error bits" in what for what, fix in arm_report.problems)
    assert [what for what, fix in hand_report.problems] == ["the hand does not reply"]
    assert "side setting" in hand_report.problems[0][1]
    missing = probe_piper("right", CanPortConfig("socketcan", "nosuchcan9"))
    assert "sudo" not in missing.render() and "no CAN interface" in missing.problems[0][0]


@pytest.mark.parametrize("plugged, preset, reported", [
    ("linkerhand_l10", "piper_linkerhand_o6_single", "LinkerHand L10"),
    ("linkerhand_o6", "piper_linkerhand_l10_single", "LinkerHand O6"),
    ("linkerhand_l20", "piper_linkerhand_l10_single", "LinkerHand L20"),  # an L20 gives its serial number only
    ("linkerhand_l10", "piper_linkerhand_l20_single", "LinkerHand L10")])
def test_a_different_hand_model_than_the_presets_is_named_with_the_fix(plugged, preset, reported):
    arm, hand = CanPortConfig("virtual", unique_channel("doc-arm")), CanPortConfig("virtual", unique_channel("doc-h"))
    with PiperSimulator(PiperSimConfig(channel=arm.channel)), \
            LinkerHandSimulator(LinkerHandSimConfig(model=plugged, channel=hand.channel)):
        arm_report, hand_report = doctor.run(preset, arm, hand, [])
    assert beside_the_rate(arm_report.problems) == []
    [(what, fix)] = hand_report.problems
    assert what.startswith("wrong hand model") and reported in what, hand_report.render()
    assert f"use a preset whose hand is {plugged!r}" in fix


def test_swapped_channels_are_named_with_the_fix():
    arm, hand = CanPortConfig("virtual", unique_channel("doc-arm")), CanPortConfig("virtual", unique_channel("doc-h"))
    # the arm is plugged into the hand's port and the hand into the arm's
    with PiperSimulator(PiperSimConfig(channel=hand.channel)), \
            LinkerHandSimulator(LinkerHandSimConfig(model="linkerhand_o6", channel=arm.channel)):
        arm_report, hand_report = doctor.run("piper_linkerhand_o6_single", arm, hand, [])
    for report, heard in ((arm_report, "a right LinkerHand"), (hand_report, "an Agilex Piper")):
        [(what, fix)] = report.problems
        assert heard in fix and "channels look swapped" in fix and fix.endswith("Swap --arm-channel and "
                                                                                "--hand-channel."), report.render()


def test_a_missing_interface_points_at_ip_link():
    report = probe_piper("right", CanPortConfig("socketcan", "nosuchcan9"))
    [(what, fix)] = report.problems
    assert "no CAN interface 'nosuchcan9'" in what and "`ip -br link show type can`" in fix
