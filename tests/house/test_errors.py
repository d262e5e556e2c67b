"""The exception root (teledex_lerobot/errors.py): every error the project refuses a command with is a TeledexError,
which run_command reports as one line with exit code 2, and each kind is still the built-in error it was (an
`except ValueError` or `except ConnectionError` written before keeps catching it)."""

import ast
import builtins
import importlib
import sys
from pathlib import Path

import pytest

import teledex_lerobot
from teledex_lerobot.can.broker import BrokerAlreadyRunning
from teledex_lerobot.can.port import CanPortConfig, PortUnavailable
from teledex_lerobot.cli.errors import USER_ERROR_EXIT, run_command
from teledex_lerobot.devices.device_fault import DeviceUnavailable
from teledex_lerobot.errors import ConfigError, DataError, DeviceError, ModelError, TeledexError, UserError
from teledex_lerobot.kinematics import UrdfError
from teledex_lerobot.storage.errors import DatasetError
from teledex_lerobot.storage.native import NativeFormatError
from teledex_lerobot.sync import SyncPolicy, TimingPolicy

PACKAGE = Path(teledex_lerobot.__file__).parent
# Exception classes that are no refusal of a command: a stop (Ctrl-C, SIGTERM), a parser's private signal caught
# where it is raised, the scripted expert's own failure (not the user's to fix).
NOT_REFUSALS = {"teledex_lerobot.cli.errors.Interrupted", "teledex_lerobot.inputs.xr_state._BadField",
                "teledex_lerobot.world.expert.UnreachableGrasp"}


def _exception_classes() -> set[str]:
    """Every exception class defined in teledex_lerobot, as module.Class, found in the source (a class whose base is
    a built-in exception or one found so far), so no module has to be imported to be listed."""
    defined = []  # (module.Class, name, base names)
    for path in sorted(PACKAGE.rglob("*.py")):
        module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                bases = {b.id if isinstance(b, ast.Name) else b.attr for b in node.bases
                         if isinstance(b, ast.Name | ast.Attribute)}
                defined.append((f"{module}.{node.name}", node.name, bases))
    names = {n for n, v in vars(builtins).items() if isinstance(v, type) and issubclass(v, BaseException)}
    found: dict[str, str] = {}
    while more := {qualified: name for qualified, name, bases in defined if qualified not in found and bases & names}:
        found |= more
        names |= set(more.values())
    return set(found)


def test_every_exception_a_command_refuses_with_is_a_teledex_error():
    classes = _exception_classes()
    assert {"teledex_lerobot.storage.native.NativeFormatError", "teledex_lerobot.can.port.PortUnavailable",
            "teledex_lerobot.kinematics.errors.UrdfError"} <= classes  # the scan finds them
    outside = []
    for qualified in sorted(classes - NOT_REFUSALS):
        module, name = qualified.rsplit(".", 1)
        if not issubclass(getattr(importlib.import_module(module), name), TeledexError):
            outside.append(qualified)
    assert not outside, f"not under teledex_lerobot.errors.TeledexError: {outside}"


@pytest.mark.parametrize("kind, kinds", [
    (ConfigError, (ValueError,)), (DataError, (ValueError,)), (ModelError, (ValueError,)), (UserError, (ValueError,)),
    (DeviceError, (ConnectionError,)),
    (DatasetError, (DataError, ValueError)), (NativeFormatError, (DataError, ValueError)),
    (UrdfError, (ModelError, ValueError)),
    (PortUnavailable, (DeviceError, ConnectionError)), (DeviceUnavailable, (DeviceError, ConnectionError)),
    (BrokerAlreadyRunning, (DeviceError, ConnectionError, RuntimeError)),
])
def test_each_kind_is_still_the_built_in_error_it_was(kind, kinds):
    assert issubclass(kind, TeledexError) and all(issubclass(kind, k) for k in kinds)


def test_a_refusal_is_no_dataset_error():
    assert not issubclass(UserError, DataError)


@pytest.mark.parametrize("error", [
    ConfigError("robot.port.interface must be one of ..."), DataError("x.npz is truncated; record it again"),
    DeviceError("nothing answers on can0; plug it in"), ModelError("hand.urdf: no <robot>; fix the URDF"),
    UserError("--root exists; choose another"), NativeFormatError("manifest.json is missing", "run teledex-repair"),
    UrdfError("URDF file not found: nowhere.urdf"), PortUnavailable("can0 is down. Fix: ip link set can0 up"),
], ids=lambda error: type(error).__name__)
def test_run_command_reports_every_kind_in_one_line(error, capsys):
    def refuse():
        raise error

    with pytest.raises(SystemExit) as ended:
        run_command("teledex-test", refuse)
    assert ended.value.code == USER_ERROR_EXIT
    assert capsys.readouterr().err == f"teledex-test: error: {error}\n"


@pytest.mark.parametrize("configure", [
    lambda: SyncPolicy(max_age_ms=0), lambda: TimingPolicy(max_dropped_fraction=2),
    lambda: TimingPolicy(on_exceed="ignore"), lambda: CanPortConfig(interface="bogus").validate("robot.port"),
    lambda: CanPortConfig(channel="").validate("robot.port"),
], ids=["sync", "timing_fraction", "timing_policy", "can_interface", "can_channel"])
def test_a_wrong_configuration_value_is_a_config_error(configure):
    with pytest.raises(ConfigError):
        configure()


def test_the_root_imports_nothing_but_the_standard_library():
    tree = ast.parse((PACKAGE / "errors.py").read_text())
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    assert not [node for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    assert imported <= sys.stdlib_module_names, imported
