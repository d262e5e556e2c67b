"""Leader-arm teleoperator: any of our arms (fake / sim / real, e.g. a Piper in teach mode) read as the leader and
copied joint by joint onto the follower (strategy "direct"), through the same control chain as every other input."""

import threading

from teledex_lerobot.inputs.joint_stream import encode_joints

from .config_teledex_input import TeledexLeaderArmConfig
from .teledex_input import TeledexInputTeleop


class LeaderArmSource:
    """Polls the leader's joint device at `rate_hz` and hands each reading to the receiver as a joint datagram (one
    parse path for live, remote and replayed leaders; record_to records it like any other input)."""

    def __init__(self, config: TeledexLeaderArmConfig):
        from lerobot_robot_teledex import TeledexArm, TeledexArmConfig  # the robot package imports this package

        self.leader = TeledexArm(TeledexArmConfig(model=config.leader_model, side=config.leader_side,
                                                  backend=config.leader_backend))
        self.period_s = 1.0 / config.leader_rate_hz
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, receiver) -> None:
        self.leader.connect()
        self._thread = threading.Thread(target=self._run, args=(receiver,), name="LeaderArmSource", daemon=True)
        self._thread.start()

    def _run(self, receiver) -> None:
        part = self.leader.rig.parts["arm"]
        device = self.leader.devices["arm"]
        while not self._stop.wait(self.period_s):
            state = device.read()
            receiver.handle(encode_joints(dict(zip(part.joints, state.positions.tolist()))), state.capture_ns)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2.0)
        if self.leader.is_connected:
            self.leader.disconnect()


class TeledexLeaderArm(TeledexInputTeleop):
    config_class = TeledexLeaderArmConfig
    name = "teledex_leader_arm"
    parser = "joints"
    default_control = "leader_direct"
    default_ports = {"udp": 5577}

    def _make_source(self):
        return LeaderArmSource(self.config) if self.config.source == "robot" else super()._make_source()
