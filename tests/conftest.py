"""Keep every test offline, on this machine and away from the user's LeRobot home (calibration files, datasets)."""

import os
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
