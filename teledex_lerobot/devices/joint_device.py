"""The joint-device interface every backend implements.

A joint device owns a set of joints in radians (metres for prismatic joints). It accepts position targets and reports
measured positions and velocities, each measurement stamped with the time the device captured it (clock.now_ns).
A device with touch sensors also reports them (tactile_layout, tactile()).
"""

from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

from .device_fault import DeviceFault


@dataclass(frozen=True)
class JointState:
    positions: np.ndarray
    velocities: np.ndarray
    capture_ns: int


@dataclass(frozen=True)
class TactileLayout:
    """The touch sensors a device reports: one matrix of `shape` (rows, columns) per sensor, values 0-255."""

    sensors: tuple[str, ...]
    shape: tuple[int, int]


class JointDevice(ABC):
    def __init__(self, initial_positions: np.ndarray):
        self._initial = np.asarray(initial_positions, dtype=float).copy()

    @property
    def dof(self) -> int:
        return self._initial.size

    @abstractmethod
    def connect(self) -> None: ...

    @abstractmethod
    def disconnect(self) -> None: ...

    @abstractmethod
    def read(self) -> JointState:
        """The latest measurement the device has reported (non-blocking)."""

    def read_nearest(self, capture_ns: int) -> JointState:
        """The reported measurement captured closest to capture_ns; devices without a history give the latest."""
        return self.read()

    @abstractmethod
    def command(self, positions: np.ndarray) -> None:
        """Set a position target. The caller has already applied limits."""

    def held_target(self) -> np.ndarray | None:
        """The target the hardware holds: the last one that reached it. A faulted real device drops new targets and
        keeps its last accepted one, so this, not the command, is what a recording must store. None: every
        command reaches the device (simulated backends)."""
        return None

    def fault(self) -> "DeviceFault | None":
        """The latched fault, if any (real drivers; see device_fault.py). A faulted device holds its last target."""
        return None

    def clear_fault(self) -> None:  # noqa: B027 - optional: devices without faults have nothing to clear
        """Acknowledge the fault and accept targets again."""

    def tactile(self) -> dict[str, np.ndarray]:
        """The latest complete matrix per sensor of its TactileLayout (devices with touch sensors)."""
        return {}
