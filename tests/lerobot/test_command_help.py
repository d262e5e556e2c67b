"""Commands that explain themselves: every flag of our configs has help text, and --help renders for every one of our
robot and teleoperator types (LeRobot's scoped help, as `teledex-record --robot.type=X --teleop.type=Y --help` runs
it) and for every teledex-* command."""

import dataclasses
import io
import subprocess
import sys
import tomllib
import typing
from contextlib import redirect_stdout
from pathlib import Path

import pytest
from draccus.wrappers import docstring
from lerobot.configs.parser import print_scoped_help
from lerobot.robots import RobotConfig
from lerobot.teleoperators import TeleoperatorConfig
from lerobot.utils.import_utils import register_third_party_plugins

from teledex_lerobot.cli.record import import_lerobot_devices
from teledex_lerobot.recording.recorder import TeledexRecordConfig

import_lerobot_devices()  # as teledex-record does before it parses (every LeRobot device type known)
register_third_party_plugins()
OUR_PACKAGES = ("teledex_lerobot", "lerobot_robot_teledex", "lerobot_teleoperator_teledex")
ROBOT_TYPES = sorted(n for n, c in RobotConfig.get_known_choices().items() if c.__module__.startswith(OUR_PACKAGES))
TELEOP_TYPES = sorted(n for n, c in TeleoperatorConfig.get_known_choices().items()
                      if c.__module__.startswith(OUR_PACKAGES))
SCRIPTS = sorted(tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())["project"]["scripts"])


def _config_classes() -> set[type]:
    """Our config dataclasses reachable from teledex-record's config and our robot and teleoperator types."""
    seen: set[type] = set()

    def walk(cls: type) -> None:
        if cls in seen:
            return
        seen.add(cls)
        hints = typing.get_type_hints(cls)
        for f in dataclasses.fields(cls):
            for candidate in typing.get_args(hints[f.name]) or (hints[f.name],):
                if dataclasses.is_dataclass(candidate) and candidate.__module__.startswith(OUR_PACKAGES):
                    walk(candidate)

    for root in [TeledexRecordConfig, *(RobotConfig.get_choice_class(n) for n in ROBOT_TYPES),
                 *(TeleoperatorConfig.get_choice_class(n) for n in TELEOP_TYPES)]:
        walk(root)
    return seen


def test_every_flag_of_ours_has_help_text():
    classes = _config_classes()
    assert len(classes) > 20
    missing = [f"{cls.__name__}.{f.name}" for cls in classes for f in dataclasses.fields(cls) if f.init
               and not f.metadata.get("custom_args", {}).get("help")  # a class made at run time has no comments
               and not docstring.get_preferred_help_text(docstring.get_attribute_docstring(cls, f.name))]
    assert not missing, f"flags without help text (a comment above or beside the field): {missing}"


@pytest.mark.parametrize("robot_type", ROBOT_TYPES)
def test_scoped_help_renders_for_every_robot_type(robot_type):
    output = io.StringIO()
    with redirect_stdout(output):
        print_scoped_help(TeledexRecordConfig, [f"--robot.type={robot_type}", "--teleop.type=teledex_replay"])
    text = output.getvalue()
    assert "--robot.backend" in text or "--robot.followers" in text
    assert "--teleop.replay_file" in text and "--native.root" in text


@pytest.mark.parametrize("teleop_type", TELEOP_TYPES)
def test_scoped_help_renders_for_every_teleoperator_type(teleop_type):
    output = io.StringIO()
    with redirect_stdout(output):
        print_scoped_help(TeledexRecordConfig, ["--robot.type=teledex", f"--teleop.type={teleop_type}"])
    assert "--teleop.side" in output.getvalue()


def test_teledex_record_help_names_every_type_of_ours():
    from teledex_lerobot.cli.record import LEROBOT_FLAGS

    assert [t for t in ROBOT_TYPES + TELEOP_TYPES if t not in LEROBOT_FLAGS] == []


@pytest.mark.parametrize("script", SCRIPTS)
def test_every_command_prints_its_help(script):
    executable = Path(sys.executable).with_name(script)
    result = subprocess.run([executable, "--help"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "usage" in result.stdout.lower() and len(result.stdout.splitlines()) > 3
