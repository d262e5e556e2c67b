"""A station in the MuJoCo world for the scripted headset person, without the browser: what the person's headset
does in tests/headset_person.py (BrowserHeadset), done here directly and in lockstep. Test-only.

The person's controller states go through the teleop's own route (the XR state schema, its parser, the control
chain of the xr_hybrid config) to the world's servos; the cameras it sees are the preset's (top and wrist), rendered
at the view's rate, JPEG-compressed as the page receives them, each with the header the page gets (its calibration);
the status text is the page's lines, and the scene message draws the robot as measured. Time is the world's: the
person's waits advance it, so a run is deterministic for a seed and as fast as the renders allow. Optional input
gaps, or a page that lags as a loaded machine's does (LatePage: fewer XR frames and camera frames, each late), stand
in for a loaded page.

    .venv/bin/python tests/simulated_station.py --layouts 10 --seed 100
    .venv/bin/python tests/simulated_station.py --layouts 10 --seed 300 --input-hz 10 --input-latency 0.15 \
        --camera-fps 8 --camera-latency 0.45
"""

import argparse
import json
import math
import sys
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import ClassVar

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from teledex_lerobot.control.config import ControlConfig  # noqa: E402
from teledex_lerobot.control.rig_controller import RigController  # noqa: E402
from teledex_lerobot.control.state_machine import ButtonKeys  # noqa: E402
from teledex_lerobot.geometry.camera import CameraInfo  # noqa: E402
from teledex_lerobot.inputs.frame import OperatorFrame  # noqa: E402
from teledex_lerobot.inputs.xr_state import OPERATOR_FROM_XR, encode_xr_state, parse_xr_state  # noqa: E402
from teledex_lerobot.presets import load_preset, shared_world_cameras  # noqa: E402
from teledex_lerobot.rig import Rig  # noqa: E402
from teledex_lerobot.viewer.headset import RobotScene, camera_header  # noqa: E402
from teledex_lerobot.world.camera import WorldRenderer  # noqa: E402
from teledex_lerobot.world.episode import EpisodeOutcome  # noqa: E402
from teledex_lerobot.world.world import PlacedRig, World, WorldConfig, part_key, placed_rigs  # noqa: E402

TICK_NS = 40_000_000  # the recorder's 25 Hz
EPISODE_S = 30.0  # as the browser test records them: the world judges an episode by its state up to then
JPEG_QUALITY = 80  # as the page gets it (inputs/webxr.py)
BUTTONS = {("left", "x-button"): "primary", ("left", "y-button"): "secondary"}


def _matrix_pose(position_xr: np.ndarray, quaternion_xr: np.ndarray) -> np.ndarray:
    """[x, y, z, qx, qy, qz, qw] in the operator frame from an XR pose."""
    from scipy.spatial.transform import Rotation

    rotation = OPERATOR_FROM_XR @ Rotation.from_quat(quaternion_xr).as_matrix() @ OPERATOR_FROM_XR.T
    return np.concatenate([OPERATOR_FROM_XR @ position_xr, Rotation.from_matrix(rotation).as_quat()])


@dataclass(frozen=True)
class LatePage:
    """The page on a loaded machine: it sends the controllers `input_hz` times a second (its XR frames), each state
    reaching the teleop `input_latency_s` later; the camera frames it shows were rendered `camera_fps` times a
    second and appear `camera_latency_s` later. All zero: a page that keeps up (each tick sent and shown at once)."""

    input_hz: float = 0.0
    input_latency_s: float = 0.0
    camera_fps: float = 0.0
    camera_latency_s: float = 0.0
    KEPT: ClassVar[int] = 64  # states and frames kept: more than any latency here spans

    @property
    def keeps_up(self) -> bool:
        return not (self.input_hz or self.input_latency_s or self.camera_fps or self.camera_latency_s)

    @property
    def input_latency_ns(self) -> int:
        return int(self.input_latency_s * 1e9)

    @property
    def camera_latency_ns(self) -> int:
        return int(self.camera_latency_s * 1e9)

    @staticmethod
    def due(now_ns: int, timeline: list[tuple[int, dict]], rate_hz: float) -> bool:
        """Whether the next of a timeline's items (sent or rendered `rate_hz` a second, 0: every tick) is due now."""
        return not rate_hz or not timeline or now_ns - timeline[-1][0] >= 1e9 / rate_hz - TICK_NS / 2

    @staticmethod
    def newest(timeline: list[tuple[int, dict]], until_ns: int, since_ns: int = -1) -> tuple[int, dict] | None:
        """The newest item of a timeline made after `since_ns` and by `until_ns`, if any."""
        return next(((t, item) for t, item in reversed(timeline) if since_ns < t <= until_ns), None)


class SimulatedStation:
    """A preset of one rig, or of several (a bimanual preset: its followers placed as the world places them, every
    follower's cameras named as the robot names them, each rig driven by the controller on its side)."""

    def __init__(self, preset: str = "piper_linkerhand_o6_single", seed: int = 0, control: str = "xr_hybrid",
                 gap_every_s: float = 0.0, gap_s: float = 0.0, late: LatePage | None = None,
                 task: str = "cube_assembly", episode_s: float = EPISODE_S):
        spec = load_preset(preset)
        followers = dict(spec.followers) or {"": preset}
        self.rigs = {name: Rig.from_preset(load_preset(follower)) for name, follower in followers.items()}
        if spec.followers:
            shared = shared_world_cameras(spec.followers)  # "<follower>_<camera>" -> (follower, camera, view)
            cameras = {name: load_preset(followers[rig]).cameras[camera] for name, (rig, camera, _) in shared.items()}
            camera_rigs = {name: rig for name, (rig, _, _) in shared.items()}
            world_rigs: Rig | dict[str, PlacedRig] = placed_rigs(self.rigs, spec.placements)
        else:
            cameras, camera_rigs, world_rigs = spec.cameras, {}, self.rigs[""]
        self.world = World(world_rigs, WorldConfig(task=task, seed=seed),
                           {name: c["view"] for name, c in cameras.items()}, None, camera_rigs)
        self.renderers = {name: WorldRenderer(self.world, name, c["width"], c["height"], camera_rigs.get(name, ""))
                          for name, c in cameras.items()}
        first = next(iter(self.rigs))
        self.rig = self.rigs[first]  # the first rig (the only one of a one-rig preset)
        self.table_top_z_m = -float(self.world.base_pose(first)[2, 3])  # in the first rig's base frame
        self.scenes = RobotScene(self.rigs, {name: self.base_in_first(name) for name in self.rigs})
        config = ControlConfig.load(control)
        # one operator: one state machine; each rig worked by the hand on its side
        self.controllers = {name: RigController(rig, config.for_side(rig.side), name=name)
                            for name, rig in self.rigs.items()}
        for controller in self.controllers.values():
            controller.state_machine = self.controller.state_machine
        self.buttons = ButtonKeys(config.key_bindings)
        self.episode_s = episode_s
        self.now_ns = 0
        self.gap_every_ns, self.gap_ns = int(gap_every_s * 1e9), int(gap_s * 1e9)
        self.late = late or LatePage()
        self._sent: list[tuple[int, dict]] = []  # the controllers' states as the page sent them: (time, state)
        self._delivered_ns = -1  # the send time of the last state the teleop got
        self._received: OperatorFrame | None = None  # that state, as the teleop parsed it
        self._rendered: list[tuple[int, dict]] = []  # the frames rendered for the page: (time, frames)
        self.hands = {side: {"pose": _matrix_pose(np.array([x, 1.2, -0.4]), np.array([0, 0, 0, 1.0])),
                             "trigger": 0.0, "grip": 0.0, "axis_click": False, "primary": False, "secondary": False}
                      for side, x in (("right", 0.25), ("left", -0.25))}
        self.episode = 0
        self.episode_started_ns = 0
        self.outcome: EpisodeOutcome | None = None
        self.new_episode(seed)

    @property
    def controller(self) -> RigController:
        """The first rig's controller (the only one of a one-rig preset)."""
        return next(iter(self.controllers.values()))

    def base_in_first(self, rig_name: str) -> np.ndarray:
        """A rig's base in the first rig's base frame, as the station stands them."""
        return np.linalg.inv(self.world.base_pose(next(iter(self.rigs)))) @ self.world.base_pose(rig_name)

    # ---- the world's side --------------------------------------------------------------------------------------

    def measured(self, rig_name: str = "") -> dict[str, np.ndarray]:
        return {role: self.world.joint_positions(part_key(rig_name, role)) for role in self.rigs[rig_name].parts}

    def new_episode(self, seed: int) -> None:
        """Lay out the layout of `seed` with the robot at home; the teleop re-anchors there (as teledex-record)."""
        self.world.reset(seed)
        self.outcome = EpisodeOutcome(self.world)
        self.episode_started_ns = self.now_ns
        self.episode += 1
        for name, controller in self.controllers.items():
            if controller.seeded:
                controller.start_episode()
            else:
                controller.seed(self.measured(name))

    def _tick(self) -> None:
        gap = self.gap_every_ns and (self.now_ns % self.gap_every_ns) < self.gap_ns
        if self.late.due(self.now_ns, self._sent, self.late.input_hz):  # the page sends the controllers as they are
            state = {side: dict(hand) for side, hand in self.hands.items()}
            self._sent = [*self._sent[-LatePage.KEPT:], (self.now_ns, state)]
        delivered = LatePage.newest(self._sent, self.now_ns - self.late.input_latency_ns, since_ns=self._delivered_ns)
        if delivered is not None and not gap:  # as the teleop's receiver: the newest state, until a newer one
            self._delivered_ns = delivered[0]
            self._received = parse_xr_state(encode_xr_state(controllers=delivered[1]), self.now_ns)
            for key in self.buttons.presses(self._received.buttons):
                self.controller.state_machine.press(key)
        for name, controller in self.controllers.items():
            commands = controller.step(None if gap else self._received, self.now_ns, partial(self.measured, name))
            for role, q in commands.items():
                self.world.set_targets(part_key(name, role), q)
        self.world.step(self.world.steps_for(TICK_NS / 1e9))
        if not self.late.keeps_up and self.late.due(self.now_ns, self._rendered, self.late.camera_fps):
            self._render()
        if self.now_ns - self.episode_started_ns < self.episode_s * 1e9:
            self.outcome.update()
        self.now_ns += TICK_NS

    # ---- the person's headset ------------------------------------------------------------------------------------

    def status_text(self) -> str:
        """The page's status lines (webxr.js statusLines): one arm's, or a line per arm of several."""
        controllers = self.controllers
        several = len(controllers) > 1
        lines = ["Connected to TeleDex", f"State: {self.controller.state_machine.state.value}",
                 "Input: STALE" if any(c.stale for c in controllers.values()) else "Input: live"]
        lines += [f"Arm {name}: {c.activity}" for name, c in controllers.items()] if several else \
            [f"Arm: {self.controller.activity}"]
        grasps = [(f"{name}: " if several else "") + c.strategy.grasps.name
                  for name, c in controllers.items() if c.strategy.grasps is not None]
        if grasps:
            lines.append(f"Grasp: {', '.join(grasps)} (stick press: next)")
        left_s = max(0, math.ceil(self.episode_s - (self.now_ns - self.episode_started_ns) / 1e9))
        return "\n".join([*lines, f"Episode {self.episode}: {left_s} s left"])

    def frames(self) -> dict[str, tuple[bytes, dict]]:
        """The newest frames the page shows: a page that keeps up, the cameras now (rendered when looked at); a late
        one, those rendered at the cameras' rate, camera_latency_s ago."""
        if self.late.keeps_up:
            if not self._rendered or self._rendered[-1][0] != self.now_ns:
                self._render()
            return dict(self._rendered[-1][1])
        shown = LatePage.newest(self._rendered, self.now_ns - self.late.camera_latency_ns)
        return dict(shown[1]) if shown is not None else {}

    def _render(self) -> None:
        frames = {}
        for name, renderer in self.renderers.items():
            k, mount = renderer.intrinsics, renderer.mount
            info = CameraInfo(k.width, k.height, k.fx, k.fy, k.cx, k.cy,
                              world_from_camera=None if mount else renderer.base_from_camera.tolist(),
                              mounted_on=mount[0] if mount else None,
                              part_from_camera=mount[1].tolist() if mount else None)
            ok, jpeg = cv2.imencode(".jpg", renderer.render()[..., ::-1], [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])
            header = json.loads(json.dumps({**camera_header(name, info), "published_ms": self.now_ms()}))
            frames[name] = (jpeg.tobytes(), header)
        self._rendered = [*self._rendered[-LatePage.KEPT:], (self.now_ns, frames)]

    def scene(self) -> dict:
        """The scene message the page draws the robot by: each rig as measured now (no objects: the station
        sends none unless asked)."""
        measured = {name: self.measured(name) for name in self.rigs}
        return self.scenes.message(measured, measured, {})

    def hold(self, position: np.ndarray, quaternion: np.ndarray, trigger: float, grip: float, click: bool,
             side: str = "right") -> None:
        self.hands[side].update(pose=_matrix_pose(position, quaternion), trigger=trigger, grip=grip, axis_click=click)

    def button(self, controller: str, button: str, pressed: bool) -> None:
        self.hands[controller][BUTTONS[(controller, button)]] = pressed

    def look_down(self, angle_rad: float) -> None:
        pass  # nothing is drawn here but the cameras

    def now_ms(self) -> float:
        return self.now_ns / 1e6

    def sleep(self, seconds: float) -> None:
        until = self.now_ns + seconds * 1e9
        while self.now_ns + TICK_NS / 2 <= until:
            self._tick()


def main() -> None:
    from headset_person import PRACTICE, HeadsetPerson, Practice, pinch_settling, place_settling

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", default="piper_linkerhand_o6_single", help="a one-rig preset")
    parser.add_argument("--layouts", type=int, default=5)
    parser.add_argument("--seed", type=int, default=100)
    parser.add_argument("--gap-every", type=float, default=0.0, help="an input gap every this many seconds")
    parser.add_argument("--gap", type=float, default=0.0, help="each gap this long (s)")
    parser.add_argument("--input-hz", type=float, default=0.0, help="a late page: it sends the controllers this often")
    parser.add_argument("--input-latency", type=float, default=0.0, help="each state reaching the teleop this late (s)")
    parser.add_argument("--camera-fps", type=float, default=0.0, help="the page shows this many camera frames/s")
    parser.add_argument("--camera-latency", type=float, default=0.0, help="each frame shown this late (s)")
    parser.add_argument("--practise", action="store_true", help="print how the half settled in the pinch and came to "
                        "rest when let go, per layout and on average: what practice teaches the person "
                        "(headset_person.PRACTICE; a hand not practised yet is taken as settling nowhere)")
    args = parser.parse_args()
    station = SimulatedStation(args.preset, seed=args.seed, gap_every_s=args.gap_every, gap_s=args.gap,
                               late=LatePage(args.input_hz, args.input_latency, args.camera_fps, args.camera_latency))
    hand = (station.rig.parts["hand"].spec.model, station.rig.side)
    person = HeadsetPerson(station, station.rig, station.table_top_z_m,
                           practice=PRACTICE.get(hand, Practice((0.0, 0.0, 0.0), (0.0, 0.0, 0.0))))
    hand_link = f"hand/{station.rig.parts['hand'].model.description.root_link}"
    settled, rested = [], []

    def watch_the_pinch() -> None:
        """After the pinch has closed: how the half sits in the hand, against where the person put it."""
        station.sleep(1.2)
        half_in_hand = np.linalg.inv(station.world.body_pose(hand_link)) @ station.world.body_pose("cube_top")
        settled.append(pinch_settling(person.half_in_hand, half_in_hand))

    person.start()
    succeeded = 0
    for layout in range(args.layouts):
        if layout:
            station.new_episode(args.seed + layout)
        person.begin_episode()
        steps = person.assemble_cube(closed_hook=watch_the_pinch if args.practise else lambda: None)
        station.sleep(1.0)
        succeeded += station.outcome.succeeded
        if args.practise and station.outcome.stage in ("placed", "success"):
            rested.append(place_settling(person.aimed, station.world.body_pose("cube_top")))
        print(f"seed {args.seed + layout}: {station.outcome.stage:8s} the person: {', '.join(steps)} "
              f"{person.last_error} in {(station.now_ns - station.episode_started_ns) / 1e9:.0f} s", flush=True)
        if args.practise and settled:
            moved, turned = settled[-1]
            print(f"  the half settled {np.round(moved * 1000, 1).tolist()} mm, turned {np.round(turned, 1).tolist()} "
                  "deg (hand frame, xyz)")
        if args.practise and rested and station.outcome.stage in ("placed", "success"):
            print(f"  it came to rest {np.round(rested[-1][0] * 1000, 1).tolist()} mm, turned "
                  f"{np.degrees(rested[-1][1]):.1f} deg from where it was aimed (aimed frame)")
    print(f"{succeeded}/{args.layouts} assembled")
    if args.practise and settled:
        moved, turned = (np.mean([s[i] for s in settled], axis=0) for i in (0, 1))
        spread = np.std([s[0] for s in settled], axis=0) * 1000, np.std([s[1] for s in settled], axis=0)
        print(f"on average the half settled {np.round(moved, 4).tolist()} m, turned {np.round(turned, 1).tolist()} deg "
              f"(spread {np.round(spread[0], 1).tolist()} mm, {np.round(spread[1], 1).tolist()} deg)")
    if args.practise and rested:
        moves, turns = np.array([r[0] for r in rested]), np.array([r[1] for r in rested])
        print(f"typically (the median) it came to rest {np.round(np.median(moves, axis=0), 4).tolist()} m, turned "
              f"{np.degrees(np.median(turns)):.1f} deg from where it was aimed (spread "
              f"{np.round(np.std(moves, axis=0) * 1000, 1).tolist()} mm, {np.degrees(np.std(turns)):.1f} deg)")


if __name__ == "__main__":
    main()
