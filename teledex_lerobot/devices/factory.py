"""Builds the joint device behind one rig part for the configured backend."""

from .joint_device import FakeJointDevice, JointDevice, SimDynamicsConfig, SimulatedJointDevice

BACKENDS = ("fake", "sim", "real")

# Feedback rates of the real devices (notes/hardware.md): Piper streams joints at 200 Hz; LinkerHand angles are
# polled at 60 Hz by the vendor SDK.
DEFAULT_FEEDBACK_HZ = {"arm": 200.0, "hand": 60.0}


def make_joint_device(backend: str, part, sim: SimDynamicsConfig) -> JointDevice:
    if backend == "fake":
        return FakeJointDevice(part.home)
    if backend == "sim":
        return SimulatedJointDevice(part.home, part.velocity_limits, sim, DEFAULT_FEEDBACK_HZ[part.role])
    if backend == "real":
        raise NotImplementedError(
            f"backend='real' for {part.spec.model!r} is not available in this version: the vendor-SDK drivers are "
            "not built yet. Use backend='sim' (simulated device) or backend='fake' (instantaneous)."
        )
    raise ValueError(f"Unknown backend {backend!r}; choose one of {BACKENDS}")
