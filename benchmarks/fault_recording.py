"""A device fault during a recording, end to end: the teledex-record command against teledex-sim (a Piper and a
LinkerHand O6 on the teledex loopback bus), the simulator killed (SIGKILL: every cable out) mid-episode.

1. Headless (stdin not a terminal: no keyboard), the default --fault_policy=stop.
2. With a keyboard: teledex-record on a pseudo-terminal, its keys typed like an operator's; the simulator is killed in
   episode 0, started again once the recorder asks for a re-arm, and `a` typed until the recorder says re-armed.
Per run: the exit code, its last stderr line, what the operator was told, and per episode from both formats: frames,
frames marked device_fault (and the first), frames checked after the kill and how many of them are sync-valid (the
kill time and the frame times are on the same monotonic clock), the faults in the metadata, the latch after the kill.
    .venv/bin/python benchmarks/fault_recording.py [--episodes 3] [--episode_s 4] [--kill_after_s 2]
"""

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd

from teledex_lerobot.clock import now_ns
from teledex_lerobot.storage.native import load_native_episode, native_episode_dirs

sys.path.insert(0, str(Path(__file__).parent.parent / "tests"))  # the tests' device harness
from device_harness import TeledexSimProcess  # noqa: E402

DEVICES = ("--device", "piper:right:arm", "--device", "linkerhand_o6:right:hand")
TOLD = ("stopped by a device fault", "DEVICE FAULT:", "No keyboard to re-arm with", "press 'a' to re-arm",
        "Still in fault", "Re-armed")


def record_command(root: Path, episodes: int, episode_s: float) -> list[str]:
    return [sys.executable, "-m", "teledex_lerobot.cli.record", "--robot.type=teledex",
            "--robot.preset=piper_linkerhand_o6_single", "--robot.backend=real", "--robot.cameras={}",
            "--robot.real.arm.interface=teledex", "--robot.real.arm.channel=arm",
            "--robot.real.hand.interface=teledex", "--robot.real.hand.channel=hand", "--teleop.type=teledex_replay",
            "--dataset.repo_id=local/fault_recording", f"--dataset.root={root}", "--dataset.single_task=bench",
            "--dataset.fps=25", f"--dataset.episode_time_s={episode_s}", "--dataset.reset_time_s=0",
            f"--dataset.num_episodes={episodes}", "--dataset.push_to_hub=false"]


class Run:
    """teledex-record in its own process, its stdout read line by line and its stderr whole, each in a thread."""

    def __init__(self, command: list[str], keyboard: bool):
        self.terminal = None
        stdin = subprocess.DEVNULL
        if keyboard:
            self.terminal, stdin = os.openpty()  # the recorder reads keys from its stdin when that is a terminal
        self.process = subprocess.Popen(command, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
        if keyboard:
            os.close(stdin)
        self.lines: list[str] = []
        self.errors = ""
        self._readers = [threading.Thread(target=self._read, daemon=True),
                         threading.Thread(target=self._read_errors, daemon=True)]
        for reader in self._readers:
            reader.start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.append(line.rstrip("\n"))

    def _read_errors(self) -> None:
        self.errors = self.process.stderr.read()

    def wait_for(self, text: str, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if any(text in line for line in self.lines):
                return True
            if self.process.poll() is not None:
                return False
            time.sleep(0.05)
        return False

    def type(self, key: str) -> None:
        os.write(self.terminal, key.encode())

    def finish(self, timeout_s: float = 180) -> int:
        self.process.wait(timeout=timeout_s)
        for reader in self._readers:
            reader.join(timeout=10)
        if self.terminal is not None:
            os.close(self.terminal)
        return self.process.returncode


def episodes_report(root: Path, killed_ns: int) -> list[dict]:
    rows = pd.concat([pd.read_parquet(path) for path in sorted((root / "data").rglob("*.parquet"))])
    report = []
    for episode in (load_native_episode(folder) for folder in native_episode_dirs(Path(f"{root}_native"))):
        t = episode.telemetry
        lerobot = rows[rows["episode_index"] == episode.index]
        assert np.array_equal(lerobot["device_fault"].to_numpy(), t["device_fault"]), "the formats disagree"
        assert np.array_equal(lerobot["sync_valid"].to_numpy(), t["sync_valid"]), "the formats disagree"
        marked = np.flatnonzero(t["device_fault"])
        after_kill = t["frame_timestamps_ns"] > killed_ns
        faults = episode.metadata["faults"]
        detected = [t["frame_timestamps_ns"][f["first_frame"]] for f in faults.values()]
        report.append({"index": episode.index, "frames": len(t["device_fault"]), "marked": len(marked),
                       "first_marked": int(marked[0]) if len(marked) else None,
                       "after_kill": int(after_kill.sum()),
                       "valid_after_kill": int((after_kill & t["sync_valid"]).sum()),
                       "valid_marked": int((t["device_fault"] & t["sync_valid"]).sum()),
                       "marked_frame_after_kill_ms": (min(detected) - killed_ns) / 1e6 if detected else None,
                       "faults": sorted(faults), "stopped": episode.metadata["fault_policy"]["stopped_by_fault"]})
    return report


def headless(workdir: Path, episodes: int, episode_s: float, kill_after_s: float) -> dict:
    root = workdir / "headless"
    sim = TeledexSimProcess(*DEVICES)
    run = Run(record_command(root, episodes, episode_s), keyboard=False)
    try:
        assert run.wait_for("Recording episode 0", 120), "\n".join(run.lines)
        time.sleep(kill_after_s)
        killed_ns = now_ns()
        sim.kill()
        code = run.finish()
    finally:
        sim.stop()
    return {"exit": code, "lines": run.lines, "errors": run.errors, "episodes": episodes_report(root, killed_ns)}


def rearmed(workdir: Path, episodes: int, episode_s: float, kill_after_s: float) -> dict:
    root = workdir / "rearm"
    sims = [TeledexSimProcess(*DEVICES)]
    run = Run(record_command(root, episodes, episode_s), keyboard=True)
    presses = 0
    try:
        assert run.wait_for("Recording episode 0", 120), "\n".join(run.lines)
        time.sleep(kill_after_s)
        killed_ns = now_ns()
        sims[0].kill()
        assert run.wait_for("press 'a' to re-arm", 60), "\n".join(run.lines)
        sims.append(TeledexSimProcess(*DEVICES))  # the cause is gone: the devices are back
        while not run.wait_for("Re-armed", 1.0) and run.process.poll() is None and presses < 30:
            run.type("a")
            presses += 1
        code = run.finish()
    finally:
        for sim in sims:
            sim.stop()
    return {"exit": code, "lines": run.lines, "errors": run.errors, "presses": presses,
            "episodes": episodes_report(root, killed_ns)}


def show(title: str, result: dict) -> None:
    last = result["errors"].strip().splitlines()[-1] if result["errors"].strip() else ""
    print(f"\n{title}: exit code {result['exit']}" + (f", {result['presses']} 'a' presses" if "presses" in result
                                                     else ""))
    print(f"  last stderr line: {last[:300]}")
    print("  the operator was told:")
    for line in result["lines"]:
        if any(text in line for text in TOLD):
            print(f"    {line[:200]}")
    print(f"  {'episode':>8}{'frames':>8}{'marked':>8}{'first':>7}{'after kill':>12}{'valid after kill':>18}"
          f"{'valid marked':>14}{'marked - kill ms':>18}  faults (stopped)")
    for e in result["episodes"]:
        lag = "" if e["marked_frame_after_kill_ms"] is None else f"{e['marked_frame_after_kill_ms']:.0f}"
        print(f"  {e['index']:>8}{e['frames']:>8}{e['marked']:>8}{str(e['first_marked']):>7}{e['after_kill']:>12}"
              f"{e['valid_after_kill']:>18}{e['valid_marked']:>14}{lag:>18}  {','.join(e['faults']) or '-'}"
              f" ({e['stopped']})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=3)
    parser.add_argument("--episode_s", type=float, default=4.0)
    parser.add_argument("--kill_after_s", type=float, default=2.0, help="into episode 0")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="tdx-fault-recording-"))
    os.environ["TELEDEX_CAN_BROKER"] = str(workdir / "can.sock")  # a bus of its own, never the user's teledex-sim
    print(f"teledex-record against teledex-sim (Piper + O6), {args.episodes} x {args.episode_s:g} s episodes at "
          f"25 Hz, the simulator killed {args.kill_after_s:g} s into episode 0; {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.1f}; data in {workdir}")
    show("1. headless (no keyboard), --fault_policy=stop", headless(workdir, args.episodes, args.episode_s,
                                                                   args.kill_after_s))
    show("2. keyboard on a pseudo-terminal: re-armed once the simulator is back",
         rearmed(workdir, args.episodes, args.episode_s, args.kill_after_s))


if __name__ == "__main__":
    main()
