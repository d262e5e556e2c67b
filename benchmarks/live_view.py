"""What the live view costs the control loop, per tick.

The loop is teledex-record's: robot.get_observation(), teleop.get_action(), the sync check, robot.send_action(), then
sleep to the next tick, with the recorder's live-view calls (start_episode, log_sync per tick, end_episode). The robot
is a simulated TeleDex rig with its preset's render camera; the teleoperator replays a recorded keypoint stream
(hand retargeting and arm IK on every tick). Each loop runs once with the view off and once on (viewer=none, saving
the .rrd, so the view's thread really draws and writes everything).

Columns:
- hooks: the time the control thread spends in the view's calls in one tick (robot state with the fault check,
  command, operator, sync), measured around each call: the view's direct per-tick cost;
- act+send: get_action + send_action, where the control work is (no camera wait): the view's thread competing for
  the interpreter and the CPU shows up here;
- late: how far each tick starts after its scheduled time;
- view CPU: the view thread's CPU time, in % of one core; rrd: the recording's size per minute.

The figures depend on the machine's load (threads wait for a CPU). Run: .venv/bin/python benchmarks/live_view.py
[--fps 25] [--seconds 20] [--backend sim] [--rrd-dir DIR]
"""

import argparse
import logging
import tempfile
import time
from pathlib import Path

import numpy as np

from lerobot_robot_teledex import Teledex, TeledexConfig
from lerobot_robot_teledex.sync_validated import SyncValidatedRobot
from lerobot_teleoperator_teledex import TeledexReplay, TeledexReplayConfig
from teledex_lerobot.clock import now_ns
from teledex_lerobot.viewer import LiveViewConfig

PRESET = "piper_linkerhand_o6_single"
HOOKS = ("robot_state", "robot_command", "operator", "sync")


def timed(fn, spent: list[float]):
    def call(*args, **kwargs):
        started = time.perf_counter()
        result = fn(*args, **kwargs)
        spent[0] += time.perf_counter() - started
        return result
    return call


def run(view_on: bool, fps: float, seconds: float, backend: str, rrd_dir: Path) -> dict:
    live_view = LiveViewConfig(enabled=view_on, viewer="none", rrd_dir=str(rrd_dir))
    robot = SyncValidatedRobot(Teledex(TeledexConfig(preset=PRESET, backend=backend, live_view=live_view)))
    teleop = TeledexReplay(TeledexReplayConfig(replay_file="demo_grasp", replay_loop=True))
    teleop.connect()
    robot.connect()
    hook_s = [0.0]
    view = robot.robot.station.live_view
    if view is not None:  # time every call the control thread makes into the view, and the fault check feeding it
        for name in HOOKS:
            setattr(view, name, timed(getattr(view, name), hook_s))
        robot.robot.device_faults = timed(robot.robot.device_faults, hook_s)
    hooks, work, late = [], [], []
    period_s = 1.0 / fps
    if view is not None:
        view.start_episode(0, seconds)
    started = next_tick = time.perf_counter()
    try:
        while time.perf_counter() - started < seconds:
            tick = time.perf_counter()
            late.append(tick - next_tick)
            hook_s[0] = 0.0
            robot.get_observation()
            acted = time.perf_counter()
            action = teleop.get_action()
            packet = robot.validate({"input": teleop.sample_capture_ns or now_ns()})
            if view is not None:
                view.sync(packet)
            robot.send_action(action)
            work.append(time.perf_counter() - acted)
            hooks.append(hook_s[0])
            next_tick = max(next_tick + period_s, time.perf_counter() - period_s / 2)
            time.sleep(max(0.0, next_tick - time.perf_counter()))
    finally:
        if view is not None:
            view.end_episode("saved")
        stats = {}
        if view is not None:
            stats = {"handled": view.handled, "superseded": view.coalesced, "dropped": view.dropped}
        teleop.disconnect()
        robot.disconnect()  # closes the view: what was queued is drawn first
        if view is not None:
            stats["view_cpu_pct"] = 100 * view.busy_s / seconds
            rrd = rrd_dir / "episode_000000.rrd"
            stats["rrd_mb_per_min"] = rrd.stat().st_size / 1e6 * 60 / seconds
    warm_up = int(fps)  # the first second: connecting, the view building its models
    return {"hooks_us": np.array(hooks[warm_up:]) * 1e6, "work_ms": np.array(work[warm_up:]) * 1e3,
            "late_ms": np.array(late[warm_up:]) * 1e3, **stats}


def percentiles(values: np.ndarray) -> str:
    return " ".join(f"{np.percentile(values, q):7.2f}" for q in (50, 90, 99)) + f" {values.max():7.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fps", type=float, default=25.0)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--backend", default="sim", help="sim or mujoco (MUJOCO_GL=egl)")
    parser.add_argument("--rrd-dir", type=Path, help="keep the view's recording (episode_000000.rrd) here")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    print(f"Live view per-tick cost: {PRESET}, backend={args.backend}, one camera, {args.fps:g} Hz, "
          f"{args.seconds:g} s per run")
    print(f"{'view':5} {'measure':13} {'ticks':>6} {'p50':>7} {'p90':>7} {'p99':>7} {'max':>7}")
    with tempfile.TemporaryDirectory() as tmp:
        for view_on in (False, True):
            result = run(view_on, args.fps, args.seconds, args.backend, args.rrd_dir or Path(tmp))
            label = "on" if view_on else "off"
            rows = [("hooks (us)", result["hooks_us"])] if view_on else []
            rows += [("act+send (ms)", result["work_ms"]), ("late (ms)", result["late_ms"])]
            for measure, values in rows:
                print(f"{label:5} {measure:13} {len(values):6d} {percentiles(values)}")
            if view_on:
                print(f"view: {result['handled']} updates handled, {result['superseded']} superseded, "
                      f"{result['dropped']} dropped; its thread {result['view_cpu_pct']:.1f}% of a core; "
                      f"rrd {result['rrd_mb_per_min']:.1f} MB per minute")


if __name__ == "__main__":
    main()
