"""teledex-doctor against the simulators: healthy devices pass, missing or faulty ones come with a fix."""

from teledex_lerobot.cli import doctor
from teledex_lerobot.devices.agilex.probe import probe_piper
from teledex_lerobot.devices.agilex.simulator import PiperSimConfig, PiperSimulator
from teledex_lerobot.devices.can.port import CanPortConfig
from teledex_lerobot.devices.linkerhand.simulator import LinkerHandSimConfig, LinkerHandSimulator
from teledex_lerobot.devices.testing import unique_channel


def test_healthy_devices():
    arm, hand = CanPortConfig("virtual", unique_channel("doc-arm")), CanPortConfig("virtual", unique_channel("doc-h"))
    with PiperSimulator(PiperSimConfig(channel=arm.channel)), \
            LinkerHandSimulator(LinkerHandSimConfig(model="linkerhand_o6", channel=hand.channel)):
        reports = doctor.run("piper_linkerhand_o6_single", arm, hand, [])
    assert [r.problems for r in reports] == [[], []], [r.render() for r in reports]
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
