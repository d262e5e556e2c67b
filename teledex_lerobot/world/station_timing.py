"""A real station's timing for the world's devices, on demand (--robot.world.timing.*), seeded, so that the recorder's
sync validation sees in a simulated world what it sees on hardware.

By default the world hands out what it shows at that instant: a camera frame rendered at the tick it is read, joint
measurements readable at their capture. A station is not like that: a camera's frame reaches the host tens of ms
after the exposure it shows (exposure, readout, USB transport, decoding), some frames never arrive, and the servo bus
delivers a measurement some ms after it was taken, with jitter. With these settings:

- a camera frame shows the world at its capture tick and becomes readable `camera_latency_ms` (+- `camera_jitter_ms`,
  normal, never earlier than its capture, never overtaking the frame before it) later; a frame is lost with
  probability `camera_drop` (the reader keeps the one before, as LeRobot's cameras do);
- a joint measurement becomes readable `joint_latency_ms` (+- `joint_jitter_ms`) after its capture, in order;
- the scripted input (the world's expert) stalls `input_stalls_per_min` times a minute on average, for
  `input_stall_ms` each: it delivers nothing new meanwhile (a Wi-Fi blip, a loaded PC's late frames), so the robot
  holds its last action and the sample behind it grows old.

Every stamp stays the capture's, as on hardware: the sync validation judges the lag, the policy sees the state it
would see. Draws come from `seed` with the device's name, so a lockstep recording is reproducible; the settings are
recorded with the episode (its metadata's `world.timing`).
"""

import math
import zlib
from collections import deque
from dataclasses import dataclass

import numpy as np

from ..errors import ConfigError


@dataclass
class StationTimingConfig:
    camera_latency_ms: float = 0.0  # a lockstep camera's frame is readable this long after its capture
    camera_jitter_ms: float = 0.0  # the spread (std) of that latency, frame to frame
    camera_drop: float = 0.0  # the chance a frame is lost in transport (the reader keeps the one before)
    joint_latency_ms: float = 0.0  # a joint measurement is readable this long after its capture
    joint_jitter_ms: float = 0.0  # the spread (std) of that latency
    input_stalls_per_min: float = 0.0  # how often, on average, the world expert's input stalls
    input_stall_ms: float = 500.0  # how long each stall lasts: nothing new from the input meanwhile
    seed: int = 0  # of every draw (with each device's name): a lockstep recording is reproducible

    def validate(self) -> None:
        delays = {name: getattr(self, name) for name in ("camera_latency_ms", "camera_jitter_ms", "joint_latency_ms",
                                                          "joint_jitter_ms", "input_stalls_per_min", "input_stall_ms")}
        negative = [f"world.timing.{name}={value}" for name, value in delays.items() if not value >= 0]
        if negative:
            raise ConfigError(f"{', '.join(negative)}: delays and rates are >= 0 (0: none)")
        if not 0 <= self.camera_drop < 1:
            raise ConfigError(f"world.timing.camera_drop={self.camera_drop}: a probability per frame, 0 <= p < 1")

    @property
    def active(self) -> bool:
        return any((self.camera_latency_ms, self.camera_jitter_ms, self.camera_drop, self.joint_latency_ms,
                    self.joint_jitter_ms, self.input_stalls_per_min))


class Transport:
    """Items in transit from capture to the reader, in order: `send(item, capture_ns)` at capture, `arrived(now_ns)`
    the items readable by then that had not arrived before, oldest first."""

    def __init__(self, latency_ms: float, jitter_ms: float, drop: float, seed: int, name: str):
        self.latency_ns, self.jitter_ns, self.drop = latency_ms * 1e6, jitter_ms * 1e6, drop
        self._rng = np.random.default_rng([seed, zlib.crc32(name.encode())])
        self._in_transit: deque[tuple[int, object]] = deque()
        self.lost = 0

    def send(self, item, capture_ns: int) -> None:
        if self.drop and self._rng.random() < self.drop:
            self.lost += 1
            return
        delay_ns = self.latency_ns + (self._rng.normal(0.0, self.jitter_ns) if self.jitter_ns else 0.0)
        arrives_ns = capture_ns + max(0, int(round(delay_ns)))
        if self._in_transit:  # a link delivers in order
            arrives_ns = max(arrives_ns, self._in_transit[-1][0])
        self._in_transit.append((arrives_ns, item))

    def arrived(self, now_ns: int) -> list:
        items = []
        while self._in_transit and self._in_transit[0][0] <= now_ns:
            items.append(self._in_transit.popleft()[1])
        return items

    def clear(self) -> None:
        self._in_transit.clear()


class InputStall:
    """An input's stalls: each starts at a random moment (`per_min` a minute of the input's time, on average) and
    lasts `duration_ms`; `stalled(now_ns)` says whether one lasts at now_ns."""

    def __init__(self, per_min: float, duration_ms: float, seed: int, name: str):
        self.rate_per_ns, self.duration_ns = per_min / 60e9, int(duration_ms * 1e6)
        self._rng = np.random.default_rng([seed, zlib.crc32(name.encode())])
        self._until_ns = -1
        self._last_ns: int | None = None

    def stalled(self, now_ns: int) -> bool:
        if now_ns < self._until_ns:
            return True
        elapsed_ns, self._last_ns = (0 if self._last_ns is None else now_ns - self._last_ns), now_ns
        if self.rate_per_ns and self._rng.random() < -math.expm1(-self.rate_per_ns * elapsed_ns):
            self._until_ns = now_ns + self.duration_ns
            return True
        return False
