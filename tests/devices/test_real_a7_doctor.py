"""teledex-doctor's Linker Arm A7 probe against the A7 simulator: a healthy arm passes, problems come with a fix."""

from device_harness import unique_channel

from teledex_lerobot.can.port import CanPortConfig
from teledex_lerobot.cli import doctor
from teledex_lerobot.devices.linker_a7.probe import probe_linker_a7
from teledex_lerobot.devices.linker_a7.simulator import A7SimConfig, A7Simulator
from teledex_lerobot.devices.linkerhand.simulator import LinkerHandSimConfig, LinkerHandSimulator

PRESET = "linker_a7_linkerhand_l10_single"


def _ports() -> tuple[CanPortConfig, CanPortConfig]:
    return CanPortConfig("virtual", unique_channel("doc-a7")), CanPortConfig("virtual", unique_channel("doc-l10"))


def test_healthy_arm_and_hand():
    arm, hand = _ports()
    with A7Simulator(A7SimConfig(channel=arm.channel, initial_positions=(0.4, 0, 0, 1.2, 0, 0, 0))), \
            LinkerHandSimulator(LinkerHandSimConfig(model="linkerhand_l10", channel=hand.channel)):
        reports = doctor.run(PRESET, arm, hand, [])
    assert [r.problems for r in reports] == [[], []], [r.render() for r in reports]
    facts = "\n".join(reports[0].facts)
    assert "positions (rad) [0.4, 0.0, 0.0, 1.2, 0.0, 0.0, 0.0]" in facts
    assert "temperatures (C) [35.0" in facts and "motors enabled: [False" in facts and "first reply after" in facts


def test_problems_come_with_fixes():
    arm, hand = _ports()
    with A7Simulator(A7SimConfig(channel=arm.channel)) as sim:
        sim.silence([5])
        sim.set_temperature(1, 75.0)
        report = probe_linker_a7("right", arm)
    problems = [what for what, fix in report.problems]
    assert problems == ["motors [56] do not answer", "motors [52] at or above 70 C"], report.render()


def test_wrong_side_is_named():
    arm, hand = _ports()
    with A7Simulator(A7SimConfig(side="left", channel=arm.channel)):
        report = probe_linker_a7("right", arm)
    assert report.problems == [("no motor answers", "an A7 answers on the left IDs: set the arm's side to 'left'")]
