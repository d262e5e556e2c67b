"""Live input teleoperators: packets from a device -> OperatorFrame -> one RigController per follower -> actions.

Each get_action() is one control tick: the newest frame (stale after the control config's timeout), the state
machine keys its buttons pressed, and every follower's strategy and output chain. `sample_capture_ns` is the local
arrival time of the frame behind the action (the recorder's input timestamp for sync).
"""

import logging
import time
from functools import cached_property
from pathlib import Path

from lerobot.teleoperators import Teleoperator
from lerobot.utils.decorators import check_if_already_connected, check_if_not_connected

from teledex_lerobot.clock import now_ns
from teledex_lerobot.control.config import ControlConfig
from teledex_lerobot.control.diagnostics import Diagnostics
from teledex_lerobot.control.rig_controller import RigController
from teledex_lerobot.control.state_machine import ButtonKeys, TeleopState, TeleopStateMachine
from teledex_lerobot.inputs import PARSERS, InputReceiver
from teledex_lerobot.inputs.datagram_file import DatagramWriter
from teledex_lerobot.inputs.sources import FileReplaySource, UdpSource, UnixDatagramSource, WebSocketSource
from teledex_lerobot.paths import STREAMS_DIR
from teledex_lerobot.presets import load_preset
from teledex_lerobot.rig import Rig

from .config_teledex_input import TeledexGloveConfig, TeledexInputConfig, TeledexKeypointsConfig, TeledexXRConfig

logger = logging.getLogger(__name__)


def datagram_file_path(name_or_path: str) -> Path:
    if name_or_path.endswith(".jsonl"):
        return Path(name_or_path).expanduser()
    path = STREAMS_DIR / f"{name_or_path}.datagrams.jsonl"
    if not path.is_file():
        available = sorted(p.name.removesuffix(".datagrams.jsonl") for p in STREAMS_DIR.glob("*.datagrams.jsonl"))
        raise ValueError(f"Unknown datagram file {name_or_path!r}. Available: {available} (in {STREAMS_DIR}), or a "
                         ".jsonl path.")
    return path


class TeledexInputTeleop(Teleoperator):
    config_class = TeledexInputConfig
    name = "teledex_input"
    parser = ""  # a name in inputs.PARSERS
    default_control = ""
    default_ports = {"udp": 0, "websocket": 0}

    def __init__(self, config: TeledexInputConfig):
        super().__init__(config)
        self.config = config
        self.state_machine = TeleopStateMachine()
        self.followers: dict[str, RigController] = {}  # key prefix ("" for a single rig) -> controller
        if config.followers:
            for name, preset in config.followers.items():
                own = config.follower_controls.get(name)
                control = ControlConfig.load(own or config.control or self.default_control)
                self.followers[f"{name}_"] = RigController(Rig.from_preset(load_preset(preset)), control,
                                                           self.state_machine, name)
        else:
            control = ControlConfig.load(config.control or self.default_control)
            self.followers[""] = RigController(config.rig(), control, self.state_machine)
        first = next(iter(self.followers.values())).config
        self.auto_start = first.auto_start if config.auto_start is None else config.auto_start
        self.button_keys = ButtonKeys(first.key_bindings)
        self.diagnostics = Diagnostics(first.diagnostics_period_s)
        self.receiver: InputReceiver | None = None
        self._source = None
        self._recorder: DatagramWriter | None = None
        self.sample_capture_ns: int | None = None

    @property
    def rig(self) -> Rig:
        """The single follower's rig (teledex_replay's interface); with several followers, see `followers`."""
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
    def is_calibrated(self) -> bool:
        return True

    def calibrate(self) -> None:
        """Packets arrive in SI units in the operator frame: nothing to calibrate here (hand calibration files are
        given in the control config's strategy)."""

    def configure(self) -> None:
        pass

    @check_if_already_connected
    def connect(self, calibrate: bool = True) -> None:
        if self.config.record_to:
            self._recorder = DatagramWriter(self.config.record_to, self.parser, f"recorded by {self.name}")
        receiver = InputReceiver(PARSERS[self.parser], self._recorder, on_frame=self._press_buttons)
        self._source = self._make_source()
        self._source.start(receiver)
        self.receiver = receiver
        if self.auto_start:
            self.state_machine.press("L1")
        logger.info("%s connected (source=%s, followers=%s)", self, self.config.source,
                    [c.name for c in self.followers.values()])

    def _port(self) -> int:
        return self.config.port or self.default_ports.get(self.config.source, 0)

    def _make_source(self):
        c = self.config
        if c.source == "udp":
            return UdpSource(c.host, self._port())
        if c.source == "unix":
            return UnixDatagramSource(c.socket_path)
        if c.source == "websocket":
            return WebSocketSource(c.host, self._port())
        return FileReplaySource(datagram_file_path(c.replay_file), c.replay_speed, c.replay_loop)

    def _press_buttons(self, frame) -> None:
        """Every frame's buttons, as it arrives (source thread): a press is never missed between two ticks."""
        for key in self.button_keys.presses(frame.buttons):
            self.state_machine.press(key)

    def press_key(self, key: str) -> bool:
        """Seed 002's gamepad keys L1 / L2 / R1 / R2 from any other input (keyboard, GUI)."""
        return self.state_machine.press(key)

    @check_if_not_connected
    def get_action(self) -> dict[str, float]:
        started = time.perf_counter()
        now = now_ns()
        frame = self.receiver.latest()
        if self.auto_start and self.state_machine.state == TeleopState.ZERO_POS and all(
                c.at(c.home, c.config.zero_pose_tolerance_rad) for c in self.followers.values()):
            self.state_machine.press("L2")
        action, ik_s = {}, 0.0
        for prefix, controller in self.followers.items():
            commands = controller.step(frame, now)
            ik_s += controller.last_ik_s
            action.update({prefix + key: value for key, value in controller.rig.join(commands).items()})
        self.sample_capture_ns = frame.received_ns if frame is not None else None
        self.diagnostics.add_tick(time.perf_counter() - started, ik_s)
        self._report(frame, now)
        return action

    def _report(self, frame, now: int) -> None:
        analog = frame.analog if frame is not None else {}
        self.diagnostics.maybe_report(
            now, input_age_ms=None if frame is None else (now - frame.received_ns) / 1e6,
            packets=self.receiver.packets, parse_failures=self.receiver.parse_failures,
            triggers=(analog.get("left_trigger", 0.0), analog.get("right_trigger", 0.0)),
            stale=any(c.stale for c in self.followers.values()), state=self.state_machine.state.value)

    def send_feedback(self, feedback: dict) -> None:
        """No haptics yet: feedback is accepted and dropped."""

    @check_if_not_connected
    def disconnect(self) -> None:
        self._source.stop()
        if self._recorder is not None:
            self._recorder.close()
        self.receiver = self._source = self._recorder = None


class TeledexGlove(TeledexInputTeleop):
    config_class = TeledexGloveConfig
    name = "teledex_glove"
    parser = "udexreal"
    default_control = "glove_direct"
    default_ports = {"udp": 5555}


class TeledexXR(TeledexInputTeleop):
    config_class = TeledexXRConfig
    name = "teledex_xr"
    parser = "xr_state"
    default_control = "xr_hybrid"
    default_ports = {"udp": 29000, "websocket": 8012}


class TeledexKeypoints(TeledexInputTeleop):
    config_class = TeledexKeypointsConfig
    name = "teledex_keypoints"
    parser = "keypoints"
    default_control = "keypoints_hybrid"
    default_ports = {"udp": 5566}
