"""Leader-arm teleoperator: any of our arms (fake / sim / real, e.g. a Piper in teach mode) read as the leader and
copied joint by joint onto the follower (strategy "direct"), through the same control chain as every other input."""

from typing import Self

from teledex_lerobot.devices.registry import RealHardwareConfig, build_part_device
from teledex_lerobot.devices.simulated import SimDynamicsConfig
from teledex_lerobot.inputs import OperatorFrame, encode_joints
from teledex_lerobot.inputs.source_kinds import register_source
from teledex_lerobot.inputs.sources import ThreadedSource
from teledex_lerobot.presets import PartSpec
from teledex_lerobot.rig import Rig

from .config_teledex_input import TeledexLeaderArmConfig
from .teledex_input import TeledexInputTeleop


class LeaderArmSource(ThreadedSource):
    """Polls the leader's joint device at `rate_hz` and hands each reading to the receiver as a frame (recorded as
    a joint datagram when the teleop records, so a live leader replays like a remote one)."""

    any_device = False  # joints of the leader arm only

    def __init__(self, config: TeledexLeaderArmConfig):
        super().__init__()
        self.part = Rig.from_parts(PartSpec(config.leader_model, config.leader_side), None).parts["arm"]
        self.device = build_part_device(config.leader_backend, self.part, SimDynamicsConfig(), RealHardwareConfig())
        self.period_s = 1.0 / config.leader_rate_hz

    @classmethod
    def from_config(cls, config: TeledexLeaderArmConfig, port: int) -> Self:
        return cls(config)

    def start(self, receiver) -> None:
        self.device.connect()
        super().start(receiver)

    def _run(self, receiver) -> None:
        while not self._stop.wait(self.period_s):
            state = self.device.read()
            positions = dict(zip(self.part.joints, state.positions.tolist(), strict=True))
            if receiver.recorder is not None:
                receiver.recorder.write(encode_joints(positions), state.capture_ns)
            receiver.accept(OperatorFrame(received_ns=state.capture_ns, joint_positions=positions))

    def _close(self) -> None:
        self.device.disconnect()


register_source("robot", LeaderArmSource)


class TeledexLeaderArm(TeledexInputTeleop):
    config_class = TeledexLeaderArmConfig
    name = "teledex_leader_arm"
    parser = "joints"
    default_control = "leader_direct"
    udp_port = 5577
