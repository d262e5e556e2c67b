"""Builds the joint device behind one rig part for the configured backend."""

from dataclasses import replace

from .joint_device import FakeJointDevice, JointDevice, SimDynamicsConfig, SimulatedJointDevice
from .real_config import RealHardwareConfig

BACKENDS = ("fake", "sim", "real")

# Feedback rates of the real devices (notes/hardware.md): Piper streams joints at 200 Hz; LinkerHand angles are
# polled at 60 Hz by the vendor SDK.
DEFAULT_FEEDBACK_HZ = {"arm": 200.0, "hand": 60.0}


def make_joint_device(backend: str, part, sim: SimDynamicsConfig,
                      real: RealHardwareConfig | None = None) -> JointDevice:
    if backend == "fake":
        return FakeJointDevice(part.home)
    if backend == "sim":
        if part.role != sim.fault_source:
            sim = replace(sim, fault_delay_ms=0.0, fault_freeze=False)
        return SimulatedJointDevice(part.home, part.velocity_limits, sim, DEFAULT_FEEDBACK_HZ[part.role])
    if backend == "real":
        from .real_factory import make_real_joint_device  # the vendor SDKs load only for the real backend

        return make_real_joint_device(part, real or RealHardwareConfig())
    raise ValueError(f"Unknown backend {backend!r}; choose one of {BACKENDS}")
