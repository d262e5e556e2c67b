"""A simulated Acme gripper on a python-can bus, with the shared simulator lifecycle and first-order joints."""

import numpy as np

from teledex_lerobot.can.simulator import BusSimulator, SimBus
from teledex_lerobot.devices.simulated import FirstOrderJointDevice, SimDynamicsConfig

from . import protocol

FEEDBACK_HZ = 100.0


class AcmeGripperSimulator(BusSimulator):
    loop_name = "acme-sim"

    def __init__(self, interface: str, channel: str):
        super().__init__()
        self._dynamics = FirstOrderJointDevice(np.zeros(2), np.full(2, 4.0), SimDynamicsConfig(
            noise_std=0.0, latency_ms=0.0, time_constant_s=0.02), 500.0)
        self._bus = SimBus(interface, channel, self._on_frame, "acme-sim",
                           f"CAN ID {protocol.TARGET_ID:#x}")
        self._target = np.zeros(2)

    def _on_frame(self, message) -> None:
        if message.arbitration_id == protocol.TARGET_ID:
            joint, value = protocol.unpack(message.data)
            self._target[joint] = np.clip(value, 0.0, 1.0)
            self._dynamics.command(self._target.copy())

    def _run(self) -> None:
        while not self._stop.wait(1 / FEEDBACK_HZ):
            for joint, value in enumerate(self._dynamics.read().positions):
                self._bus.send(protocol.POSITION_ID, protocol.pack(joint, float(value)))
