"""Running the installed commands (ours and LeRobot's) as a user would: offline, with their own LeRobot home."""

import os
import subprocess
import sys
from pathlib import Path

BIN = Path(sys.executable).parent


def command_env(tmp: Path) -> dict:
    return {**os.environ, "HF_HUB_OFFLINE": "1", "HF_LEROBOT_HOME": str(tmp / "lerobot_home")}


def command(name: str, *args: str) -> list[str]:
    """The argv of an installed console script, e.g. command("lerobot-train", "--steps=2")."""
    return [str(BIN / name), *args]


def run(argv: list[str], tmp: Path, timeout: float = 600) -> str:
    """Run to completion; fail the test with the command's output tail unless it exits 0."""
    done = subprocess.run(argv, env=command_env(tmp), capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)
    output = done.stdout + done.stderr
    assert done.returncode == 0, f"{Path(argv[0]).name} failed ({done.returncode}):\n{output[-4000:]}"
    return output


def run_main(main, argv: list[str], capsys) -> tuple[int, str]:
    """A command's main(argv) in this process: (its exit status, what it printed)."""
    try:
        main(argv)
        code = 0
    except SystemExit as end:
        code = int(end.code or 0)
    captured = capsys.readouterr()
    return code, captured.out + captured.err
