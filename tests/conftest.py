"""Keep every test offline, on this machine and away from the user's LeRobot home (calibration files, datasets), and
fail a run in which a test skips without being listed as one that may (tests/README.md)."""

import logging
import os
import re
import sys
import tempfile
from pathlib import Path

import pytest

# Must be set before lerobot is imported: its constants read these at import time.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.setdefault("HF_LEROBOT_HOME", tempfile.mkdtemp(prefix="teledex-tests-lerobot-home-"))

# The network guard, in this process and (through sitecustomize on PYTHONPATH) in every Python process a test starts.
GUARD_DIR = Path(__file__).parent / "network_guard"
sys.path.insert(0, str(GUARD_DIR))
import network_guard  # noqa: E402

from teledex_lerobot.cli.errors import OUR_LOGGERS  # noqa: E402

_SESSION_DIR = Path(tempfile.mkdtemp(prefix="teledex-tests-"))
GUARD_LOG = _SESSION_DIR / "network_guard.log"
GUARD_LOG.touch()
os.environ[network_guard.LOG_ENV] = str(GUARD_LOG)
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(GUARD_DIR), os.environ.get("PYTHONPATH")]))
_in_process_violations: list[str] = []
network_guard.install(_in_process_violations.append)

# The teledex loopback CAN bus of this session: never the user's running teledex-sim.
os.environ["TELEDEX_CAN_BROKER"] = str(_SESSION_DIR / "can.sock")


class NetworkGuard:
    """What the guard caught during one test, in this process and in the processes the test started."""

    def __init__(self):
        self._log_offset = GUARD_LOG.stat().st_size
        _in_process_violations.clear()

    def take(self) -> list[str]:
        """The violations so far (then forgotten): for tests that provoke them on purpose."""
        with open(GUARD_LOG, encoding="utf-8") as log:
            log.seek(self._log_offset)
            logged = [entry.strip() for entry in log.read().split("\x1e") if entry.strip()]
            self._log_offset = log.tell()
        caught, _in_process_violations[:] = [*_in_process_violations, *logged], []
        return caught

    def check(self) -> None:
        caught = self.take()
        if caught:
            pytest.fail("the test reached beyond this machine:\n" + "\n".join(caught), pytrace=False)


@pytest.fixture(autouse=True)
def network_guard_check():
    """Fails any test whose sockets sent to, connected to, listened on or joined anything outside loopback."""
    guard = NetworkGuard()
    yield guard
    guard.check()


@pytest.fixture(autouse=True)
def logging_restored():
    """A command run in-process sets logging up for a terminal (cli/errors.py setup_logging): its handler writes to
    this test's captured stderr, closed once the test ends, so every later log line would fail. Put it back."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    levels = {name: logging.getLogger(name).level for name in OUR_LOGGERS}
    yield
    root.handlers[:], root.level = handlers, level
    for name, each in levels.items():
        logging.getLogger(name).setLevel(each)


@pytest.fixture
def xrobotoolkit():
    """An XRoboToolkit source on a free loopback port, started: (source, its receiver of parsed states)."""
    from teledex_lerobot.inputs import InputReceiver, parse_xr_state
    from teledex_lerobot.inputs.xrobotoolkit import XRoboToolkitSource

    source = XRoboToolkitSource("127.0.0.1", 0)
    receiver = InputReceiver(parse_xr_state)
    source.start(receiver)
    yield source, receiver
    source.stop()


# ---- every skip is one the suite lists ---------------------------------------------------------------------------
# A test that skips protects nothing where it skips: each one that may skip is listed, with what it needs, in
# tests/README.md ("Tests that may skip"), and any other skip fails the run (after it has run to the end).

SKIP_LIST = Path(__file__).parent / "README.md"
_skips: list[pytest.TestReport | pytest.CollectReport] = []


def listed_skips() -> dict[str, str]:
    """The table rows of tests/README.md: "| `tests/<package>/test_x.py::test_name` | what it needs |" (a file alone
    covers every test in it, a test every one of its parameter sets) -> what it needs."""
    rows = re.findall(r"^\| `(tests/[^`]+)` \| (.*?) \|$", SKIP_LIST.read_text(encoding="utf-8"), re.MULTILINE)
    return {node: needs.strip() for node, needs in rows if needs.strip()}


def _skip_reason(report) -> str:
    return report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)


def unlisted_skips() -> list[str]:
    listed = listed_skips()
    return [f"{report.nodeid}: {_skip_reason(report)}" for report in _skips
            if report.nodeid.split("[")[0] not in listed and report.nodeid.split("::")[0] not in listed]


def pytest_runtest_logreport(report):
    if report.skipped and not hasattr(report, "wasxfail"):
        _skips.append(report)


def pytest_collectreport(report):
    if report.skipped:
        _skips.append(report)


def pytest_sessionfinish(session, exitstatus):
    if exitstatus == pytest.ExitCode.OK and unlisted_skips():
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter):
    unlisted = unlisted_skips()
    if unlisted:
        terminalreporter.section(f"skips not listed in {SKIP_LIST.relative_to(terminalreporter.config.rootpath)}",
                                 red=True)
        for line in unlisted:
            terminalreporter.line(line)
        terminalreporter.line("Make the test run here (a fixture, a test extra), or list it in that file's table of "
                              "tests that may skip, with what it needs. The run fails until then.", red=True)
