"""Replay teleoperator: a recorded operator stream, played in real time, mapped to a rig's joint targets."""

import logging
from functools import cached_property
from pathlib import Path

import numpy as np

from lerobot.teleoperators import Teleoperator
from lerobot.utils.decorators import check_if_already_connected, check_if_not_connected

from teledex_lerobot.clock import now_ns
from teledex_lerobot.control.operator_to_rig import OperatorToRig
from teledex_lerobot.operator.stream import OperatorStream, interpolate_pose
from teledex_lerobot.paths import STREAMS_DIR

from .config_teledex_replay import TeledexReplayConfig

logger = logging.getLogger(__name__)


def stream_path(stream: str) -> Path:
    if stream.endswith(".npz"):
        return Path(stream).expanduser()
    path = STREAMS_DIR / f"{stream}.npz"
    if not path.is_file():
        available = sorted(p.stem for p in STREAMS_DIR.glob("*.npz"))
        raise ValueError(f"Unknown stream {stream!r}. Available: {available} (in {STREAMS_DIR}), or a .npz path.")
    return path


def hand_method(retargeting: str, stream_kind: str, joint_map: str = "") -> str:
    """The hand retargeting method: "auto" picks teledex for keypoints unless a joint map file is given, else
    joint mapping."""
    if retargeting == "auto":
        return "teledex" if stream_kind == "keypoints" and not joint_map else "joint_mapping"
    if retargeting != "joint_mapping" and stream_kind != "keypoints":
        raise ValueError(f"retargeting {retargeting!r} needs hand keypoints, but the stream holds {stream_kind}; "
                         "use retargeting=joint_mapping (or auto) for glove streams")
    return retargeting


class TeledexReplay(Teleoperator):
    config_class = TeledexReplayConfig
    name = "teledex_replay"

    def __init__(self, config: TeledexReplayConfig):
        super().__init__(config)
        self.config = config
        self.rig = config.rig()
        self.stream: OperatorStream | None = None
        self.mapper: OperatorToRig | None = None
        self._canonical_angles: np.ndarray | None = None
        self._start_ns = 0
        self.sample_capture_ns: int | None = None  # when the operator sample behind the last action was captured

    @cached_property
    def action_features(self) -> dict[str, type]:
        return dict.fromkeys(self.rig.action_keys, float)

    @cached_property
    def feedback_features(self) -> dict[str, type]:
        return {}

    @property
    def is_connected(self) -> bool:
        return self.stream is not None

    @check_if_already_connected
    def connect(self, calibrate: bool = True) -> None:
        stream = OperatorStream.load(stream_path(self.config.stream))
        method = hand_method(self.config.retargeting, stream.kind, self.config.joint_map)
        self.mapper = OperatorToRig(self.rig, self.config.joint_map, method, self.config.retargeting_config,
                                    self.config.hand_calibration)
        self._canonical_angles = stream.canonical_angles() if method == "joint_mapping" else None
        self.stream = stream
        self._start_ns = now_ns()
        logger.info("%s replaying %s (%d samples, %.1f s)", self, self.config.stream, len(stream), stream.duration_s)

    @property
    def is_calibrated(self) -> bool:
        return True

    def calibrate(self) -> None:
        """A recorded stream is already in SI units in the operator frame: nothing to calibrate."""

    def configure(self) -> None:
        pass

    @check_if_not_connected
    def get_action(self) -> dict[str, float]:
        now = now_ns()
        elapsed_ns = int((now - self._start_ns) * self.config.speed)
        if self.config.loop:
            elapsed_ns %= int(self.stream.timestamps_ns[-1]) + 1
        # Interpolated to this instant, as a live device would report it now: the sample is captured now.
        i, j, weight = self.stream.bracket(elapsed_ns)
        self.sample_capture_ns = now

        def at_now(samples):
            return None if samples is None else (1 - weight) * samples[i] + weight * samples[j]

        wrist_pose = interpolate_pose(self.stream.wrist_pose[i], self.stream.wrist_pose[j], weight)
        targets = self.mapper(at_now(self._canonical_angles), wrist_pose, at_now(self.stream.hand_keypoints_m))
        return self.rig.join(targets)

    def send_feedback(self, feedback: dict) -> None:
        """A recording cannot feel anything: feedback is accepted and dropped."""

    @check_if_not_connected
    def disconnect(self) -> None:
        self.stream = None
        self.mapper = None
