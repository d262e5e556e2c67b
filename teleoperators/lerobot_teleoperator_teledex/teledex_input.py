"""Input teleoperators: packets from a device (live, or a recorded file replayed) -> OperatorFrame -> one
RigController per follower -> actions. Every input takes this one route to the robot.

Each get_action() is one control tick: the newest frame (stale after the control config's timeout), the state
machine keys its buttons, gestures or the keyboard pressed, and every follower's strategy and output chain. The
controllers start from the robot's measured pose, found in the station the teleoperator joins at connect
(teledex_lerobot/station.py; --teleop.station). `sample_capture_ns` is when the sample behind the action was
captured, on this machine's clock: the sender's timestamp corrected by the estimated clock offset
(inputs.clock_sync), or the arrival time for senders without one. The recorder uses it for its sync check. `frame`
is that sample itself (per-device validity, arrival time).

The source is the kind registered under `--teleop.source` (inputs.source_kinds): it builds itself from the config
and says itself what to print when it starts and what it adds to the diagnostics.

Headset pages get a status message a few times per second and at once when it changes (state, what the arm does,
stale input, robot faults); whoever runs the robot feeds its faults with `report_robot_faults`.

When the robot is reset for a new episode (the recorder calls `start_episode`), every follower restarts from the
pose the robot then measures. The input belongs to one operator at a time; `h` at the console (`hand_over`) lets the
current one go (a new pairing URL for the WebXR page).
"""

import logging
import math
import time
from functools import cached_property, partial
from typing import NamedTuple

import numpy as np
from lerobot.teleoperators import Teleoperator
from lerobot.utils.decorators import check_if_already_connected, check_if_not_connected
from lerobot.utils.errors import DeviceNotConnectedError
from lerobot.utils.keyboard_input import create_key_listener

from teledex_lerobot.clock import now_ns
from teledex_lerobot.control.config import ControlConfig
from teledex_lerobot.control.diagnostics import Diagnostics
from teledex_lerobot.control.gestures import PinchButtons
from teledex_lerobot.control.rig_controller import RigController
from teledex_lerobot.control.state_machine import ButtonKeys, TeleopState, TeleopStateMachine
from teledex_lerobot.errors import ConfigError
from teledex_lerobot.inputs import PARSERS, InputReceiver
from teledex_lerobot.inputs.datagram_file import DatagramWriter
from teledex_lerobot.inputs.frame import OperatorFrame
from teledex_lerobot.inputs.source_kinds import source_kind
from teledex_lerobot.inputs.sources import InputSource, OperatedSource, OperatorDisplay
from teledex_lerobot.presets import load_preset, placed_bases
from teledex_lerobot.rig import Rig
from teledex_lerobot.station import Station, join_station
from teledex_lerobot.viewer.headset import RobotScene, camera_header

from .config_teledex_input import TeledexGloveConfig, TeledexInputConfig, TeledexKeypointsConfig, TeledexXRConfig

logger = logging.getLogger(__name__)
STATUS_PERIOD_NS = 200_000_000  # how often headset pages get the teleop's status (and at once on a change)
HAND_OVER_KEY = "h"  # the console key that lets the current operator's input go (see hand_over)


class _Connection(NamedTuple):
    """What an input has from connect() to disconnect()."""

    receiver: InputReceiver
    source: InputSource
    station: Station  # its robot's, or its own


class TeledexInputTeleop(Teleoperator):
    config_class = TeledexInputConfig
    name = "teledex_input"
    parser = ""  # a name in inputs.PARSERS
    default_control = ""
    udp_port = 0  # the device's own UDP port (a source kind with no port of its own listens there)

    def __init__(self, config: TeledexInputConfig):
        super().__init__(config)
        self.config = config
        self.state_machine = TeleopStateMachine()
        self._followers: dict[str, RigController] | None = None
        if config.followers or config.preset or config.arm_model or config.hand_model:
            self._set_up()  # a rig of its own: bad settings fail now, not at connect
        self.clock = now_ns  # tests drive the controllers on their own clock
        self.receiver: InputReceiver | None = None
        self._source: InputSource | None = None
        self._recorder: DatagramWriter | None = None
        self._key_listener = None
        self._connected_ns = 0
        self.station: Station | None = None  # its robot's (or its own), from connect to disconnect
        self.sample_capture_ns: int | None = None
        self.frame: OperatorFrame | None = None  # the input sample behind the last action
        self.robot_faults: dict[str, str] = {}
        self._status_sent_ns: int | None = None
        self._status_shown: tuple | None = None  # (state, stale, arm, episode, grasps) last published
        self._view_sent_ns = -(1 << 62)
        self._scene: RobotScene | None = None  # the followers' drawing, made at the first view
        self.episodes = 0  # episodes started (shown on the page: the operator sees a new one begin)
        self._episode_ends_ns: int | None = None  # when the recording episode ends at the latest (its time left shown)

    @property
    def followers(self) -> dict[str, RigController]:
        """The controller of each rig driven, by key prefix ("" for a single rig). Built on first use when the rig is
        the robot's: lerobot-teleoperate builds the teleoperator before the robot."""
        return self._followers if self._followers is not None else self._set_up()

    @property
    def control(self) -> ControlConfig:
        """The (first) follower's control config: it also sets the buttons, keyboard keys, gestures and start."""
        return next(iter(self.followers.values())).config

    def _set_up(self) -> dict[str, RigController]:
        config = self.config
        if config.followers:
            rigs = {f"{name}_": Rig.from_preset(load_preset(preset)) for name, preset in config.followers.items()}
        else:
            rigs = config.rigs()
        names = {prefix: prefix.removesuffix("_") for prefix in rigs}
        unknown = sorted(set(config.follower_controls) - set(names.values()))
        if unknown:
            raise ConfigError(f"follower_controls names unknown followers {unknown}; followers: {list(names.values())}")
        followers = {prefix: RigController(rig, self._follower_control(names[prefix], rig, several=len(rigs) > 1),
                                           self.state_machine, names[prefix]) for prefix, rig in rigs.items()}
        first = next(iter(followers.values())).config
        self.auto_start = first.auto_start if config.auto_start is None else config.auto_start
        self.button_keys = ButtonKeys(first.key_bindings)
        self.pinches = PinchButtons(first.pinch_close_m, first.pinch_open_m)
        self.diagnostics = Diagnostics(first.diagnostics_period_s)
        self._followers = followers
        return followers

    def _follower_control(self, name: str, rig: Rig, several: bool) -> ControlConfig:
        """A follower's control config: its own (follower_controls), else the teleop's; of several followers, one
        with no config of its own is worked by the operator's hand on its side (left hand to left rig)."""
        own = self.config.follower_controls.get(name)
        control = self._control_config(own)
        if several and own is None and control.strategy.side != rig.side:
            return control.for_side(rig.side)
        return control

    def _control_config(self, own: str | None) -> ControlConfig:
        """The follower's control config (or the teleop's, or the device's default), with the command line's
        strategy overrides."""
        c = self.config
        overrides = {key: value for key, value in (("hand_method", c.hand_method),
                                                   ("hand_calibration", c.hand_calibration)) if value}
        return ControlConfig.load(own or c.control or self.default_control,
                                  **({"strategy": overrides} if overrides else {}))

    @property
    def rig(self) -> Rig:
        """The single follower's rig; with several followers, see `followers`."""
        if len(self.followers) != 1:
            raise AttributeError("several followers: use .followers[prefix].rig")
        return self.followers[""].rig

    @cached_property
    def action_features(self) -> dict[str, type]:
        return {prefix + key: float for prefix, c in self.followers.items() for key in c.rig.action_keys}

    @cached_property
    def feedback_features(self) -> dict[str, type]:
        return {}

    @property
    def is_connected(self) -> bool:
        return self.receiver is not None

    @property
    def _connection(self) -> _Connection:
        if self.receiver is None or self._source is None or self.station is None:
            raise DeviceNotConnectedError(f"{self} is not connected: call connect() first")
        return _Connection(self.receiver, self._source, self.station)

    @property
    def is_calibrated(self) -> bool:
        return True

    def calibrate(self) -> None:
        """Packets arrive in SI units in the operator frame: nothing to calibrate here (hand calibration files are
        given in the control config's strategy)."""

    def configure(self) -> None:
        pass

    @check_if_already_connected
    def connect(self, calibrate: bool = True) -> None:
        followers = self.followers  # the rig is known by now (the robot was built), and its settings with it
        if self.config.record_to:
            self._recorder = DatagramWriter(self.config.record_to, self.parser, f"recorded by {self.name}",
                                            control=self.config.control or self.default_control)
        receiver = InputReceiver(PARSERS[self.parser], self._recorder, on_frame=self._press_buttons)
        kind = source_kind(self.config.source)
        self._source = kind.from_config(self.config, self.config.port or kind.default_port or self.udp_port)
        self._source.start(receiver)
        self.receiver = receiver
        self.station = join_station(self.config.station)
        self._connected_ns = now_ns()  # on the clock the station stamps with
        self._rig_checked = False
        if self.config.keyboard:
            self._key_listener = create_key_listener(self.press_keyboard_key, controls_help=self.keyboard_help())
        for line in self._source.describe(f"{self.name} ({self.config.source})"):  # where it listens, who may send
            print(line, flush=True)
        if self.auto_start:
            self.state_machine.press("L1")
        logger.info("%s connected (source=%s, followers=%s)", self, self.config.source,
                    [c.name for c in followers.values()])

    def _press_buttons(self, frame) -> None:
        """Every frame's buttons and gestures, as it arrives (source thread): a press is never missed between two
        ticks."""
        buttons = {**frame.buttons, **self.pinches(frame.hand_keypoints_m)}
        for key in self.button_keys.presses(buttons):
            self.state_machine.press(key)

    def press_key(self, key: str) -> bool:
        """The state machine's keys L1 / L2 / R1 / R2 / ENGAGE, from any other input (keyboard, GUI)."""
        return self.state_machine.press(key)

    def report_robot_faults(self, faults: dict[str, str]) -> None:
        """The robot's current faults (part -> message; {} when clear), shown to the operator in the headset."""
        self.robot_faults = dict(faults)

    def press_keyboard_key(self, name: str) -> bool:
        """A keyboard key, by LeRobot's key-listener name: the state machine's bindings, and `h` to hand the input
        over; keys without a binding are ignored (False)."""
        if name.lower() == HAND_OVER_KEY:
            return self.hand_over()
        key = self.control.keyboard_bindings.get(name.lower())
        return key is not None and self.state_machine.press(key)

    def keyboard_help(self) -> str:
        keys = ", ".join(f"{name} = {key}" for name, key in self.control.keyboard_bindings.items())
        return keys + (f", {HAND_OVER_KEY} = hand the input over" if isinstance(self._source, OperatedSource) else "")

    def hand_over(self) -> bool:
        """Let the operator who holds the input go (their XRoboToolkit connection, UDP sender or WebXR page): the
        next one to send takes it. The state machine goes to Emergency, so the robot holds until the new operator
        steps it on. False when the input has no operator to let go (a replayed file, a leader arm here)."""
        source = self._source
        if not isinstance(source, OperatedSource):
            return False
        lines = source.hand_over()  # e.g. the WebXR page's URL with a new pairing token
        self.state_machine.press("R1")
        print("\n".join([f"{self.name}: input handed over (the robot holds, in Emergency); the next sender takes it",
                         *lines]), flush=True)
        return True

    def start_episode(self) -> None:
        """The robot has just been reset for a new episode (recorder: EpisodeAwareInput): every follower restarts
        from the pose the robot then measures, and re-anchors there, so nothing drives it back toward where the
        last episode ended; the state and the operator's engagement are kept."""
        for controller in self.followers.values():
            controller.start_episode()

    def episode_started(self, duration_s: float) -> None:
        """The recorder began an episode (capabilities.EpisodeTimedInput): the page shows its number and time left."""
        self.episodes += 1
        self._episode_ends_ns = self.clock() + int(duration_s * 1e9)

    def _measured(self, prefix: str, controller: RigController) -> dict[str, np.ndarray] | None:
        station = self._connection.station
        parts = {role: station.read_measured([prefix + key for key in part.keys], self._connected_ns)
                 for role, part in controller.rig.parts.items()}
        measured = {role: q for role, q in parts.items() if q is not None}
        return measured if len(measured) == len(parts) else None

    def _check_rig(self) -> None:
        """Once the robot has published its measured pose: its keys must be ours, or nothing is commanded."""
        published = self._connection.station.keys_published_since(self._connected_ns)
        if not published:
            return
        if published != set(self.action_features):
            raise ConfigError(f"{self} drives {list(self.action_features)}, but the robot measures "
                              f"{sorted(published)}: they are different rigs. Leave --teleop.preset (and arm_model/"
                              "hand_model) empty to drive the robot's own rig.")
        self._rig_checked = True

    @check_if_not_connected
    def get_action(self) -> dict[str, float]:
        started = time.perf_counter()
        if not self._rig_checked:
            self._check_rig()
        now = self.clock()
        connection = self._connection
        frame = connection.receiver.latest()
        if self.auto_start and self.state_machine.state == TeleopState.ZERO_POS and all(
                c.at(c.home, c.config.zero_pose_tolerance_rad) for c in self.followers.values()):
            self.state_machine.press("L2")
        action, ik_s = {}, 0.0
        for prefix, controller in self.followers.items():
            commands = controller.step(frame, now, partial(self._measured, prefix, controller))
            ik_s += controller.last_ik_s
            action.update({prefix + key: value for key, value in controller.rig.join(commands).items()})
        self.frame = frame
        self.sample_capture_ns = frame.capture_ns if frame is not None else None
        stale = any(c.stale for c in self.followers.values())
        self.diagnostics.add_tick(time.perf_counter() - started, ik_s, stale)
        self._report(frame, now, stale)
        view = connection.station.live_view
        if view is not None:
            view.operator(frame, self.state_machine.state.value, stale)
        return action

    @property
    def activity(self) -> str:
        """What the arm does, in words: the single follower's, or each follower's by name."""
        if len(self.followers) == 1:
            return next(iter(self.followers.values())).activity
        return "; ".join(f"{c.name}: {c.activity}" for c in self.followers.values())

    def _report(self, frame, now: int, stale: bool) -> None:
        analog = frame.analog if frame is not None else {}
        state, activity = self.state_machine.state.value, self.activity
        receiver, source, _ = self._connection
        line = self.diagnostics.maybe_report(
            now, input_age_ms=None if frame is None else (now - frame.received_ns) / 1e6,
            packets=receiver.packets, parse_failures=receiver.parse_failures,
            triggers=(analog.get("left_trigger", 0.0), analog.get("right_trigger", 0.0)), stale=stale, state=state,
            arm=activity)
        if line is not None:
            logger.info(self.input_diagnostics())
        display = source.display
        if display is None:
            return
        grasps = [(f"{c.name}: " if len(self.followers) > 1 else "") + c.strategy.grasps.name
                  for c in self.followers.values() if c.strategy.grasps is not None]
        left_s = None if self._episode_ends_ns is None else max(0, math.ceil((self._episode_ends_ns - now) / 1e9))
        shown = (state, stale, activity, self.episodes, left_s, *grasps)
        sent_ns = self._status_sent_ns
        if shown != self._status_shown or sent_ns is None or now - sent_ns >= STATUS_PERIOD_NS:
            self._status_sent_ns, self._status_shown = now, shown
            arms = {c.name: c.activity for c in self.followers.values()}
            display.publish_status({
                "state": state, "stale": stale, "arm": activity,
                # several arms: each one's on its own (the page shows a line each); engaged while any follows
                **({"arms": arms} if len(arms) > 1 else {}),
                "engaged": state == TeleopState.TELEOPERATION.value and "following" in arms.values(),
                "holding": any(c.activity.startswith("holding") for c in self.followers.values()),
                "grasp": ", ".join(grasps), "episode": self.episodes, "episode_left_s": left_s,
                "faults": self.robot_faults,
                "buttons": self.button_keys.bindings,
                "input_age_ms": None if frame is None else round((now - frame.received_ns) / 1e6, 1)})
        # a quarter period early is on time: a loop ticking at view_hz sends every tick despite its jitter
        if self.config.view_hz > 0 and now - self._view_sent_ns >= 0.75e9 / self.config.view_hz:
            self._view_sent_ns = now
            self._show_view(display, now)

    def _show_view(self, source: OperatorDisplay, now: int) -> None:
        """The robot's newest camera frames, each with its calibration, and its drawing (measured with what it
        touches, commanded ghosted; the world's objects with show_objects) to the page: every follower's, each
        placed where the robot says its base stands (else in a row, as the world places followers by default)."""
        station, followers = self._connection.station, self.followers
        if self._scene is None:
            rigs = {prefix.removesuffix("_"): c.rig for prefix, c in followers.items()}
            bases = placed_bases(list(rigs), {}) | {prefix.removesuffix("_"): pose
                                                    for prefix, pose in station.rig_bases.items()}
            self._scene = RobotScene(rigs, bases)
        scene = self._scene
        view = station.latest_view(self._connected_ns)
        measured = {prefix.removesuffix("_"): self._measured(prefix, c) for prefix, c in followers.items()}
        commanded = {prefix.removesuffix("_"): dict(c.last_sent) for prefix, c in followers.items()}
        touching = {prefix.removesuffix("_"): links for prefix, links in view.touching.items()} if view else {}
        objects = view.objects if view is not None and self.config.show_objects else None
        table_top_z_m = station.table_top_z_m
        frames = {name: (image, camera_header(name, station.cameras[name]) if name in station.cameras
                         else {"camera": name}) for name, image in (view.images if view is not None else {}).items()}
        # drawn where the view is sent, off the control thread (and not at all for a view a slow page skips)
        source.publish_view(lambda: scene.message(measured, commanded, touching, objects, table_top_z_m), frames,
                            view.published_ns if view is not None else now, scene.body_message)

    def input_diagnostics(self) -> str:
        """The input side of the diagnostics: the source's own fields (senders dropped by the allow-list, others
        refused while one operator holds the input, its connections or pages), bad fields, implausible poses, devices
        left out of the newest sample and why, and how much later than captured it arrived (beyond the link's
        minimum)."""
        frame = self.frame
        receiver, source, _ = self._connection
        parts = [*source.diagnostics(), f"bad_fields={receiver.bad_fields}",
                 # every follower sees the same poses: the strictest bounds' count
                 f"implausible_poses={max(c.implausible_poses for c in self.followers.values())}"]
        if frame is not None and frame.capture_ns is not None:
            parts.append(f"input_delay_ms={(frame.received_ns - frame.capture_ns) / 1e6:.1f}")
            if frame.invalid_devices:
                parts.append("invalid=" + ",".join(f"{k}({v})" for k, v in frame.invalid_devices.items()))
        return "[teleop] input " + " ".join(parts)

    @check_if_not_connected
    def send_feedback(self, feedback: dict) -> None:
        """A loop that passes the robot's observation here gives the controllers its measured pose (TeleDex robots
        publish it themselves, in the station); other keys are ignored. No haptics yet."""
        self._connection.station.publish_measured({key: feedback[key] for key in self.action_features
                                                   if key in feedback})

    @check_if_not_connected
    def disconnect(self) -> None:
        self._connection.source.stop()
        if self._recorder is not None:
            self._recorder.close()
        if self._key_listener is not None:
            self._key_listener.stop()
        self.receiver = self._source = self._recorder = self._key_listener = self.station = None


class TeledexGlove(TeledexInputTeleop):
    config_class = TeledexGloveConfig
    name = "teledex_glove"
    parser = "udexreal"
    default_control = "glove_direct"
    udp_port = 5555


class TeledexXR(TeledexInputTeleop):
    config_class = TeledexXRConfig
    name = "teledex_xr"
    parser = "xr_state"
    default_control = "xr_hybrid"
    udp_port = 29000


class TeledexKeypoints(TeledexInputTeleop):
    config_class = TeledexKeypointsConfig
    name = "teledex_keypoints"
    parser = "keypoints"
    default_control = "keypoints_hybrid"
    udp_port = 5566
