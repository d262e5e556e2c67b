"""LinkerHand CAN protocol facts, read from linkerbot and the vendor's GitHub SDK: frame layouts per model and the
0-255 position scale.

One standard ID per hand (0x27 right, 0x28 left); frames are [cmd, values...] of variable length; a frame holding
only [cmd] is a read request and the hand answers on the same ID with [cmd, values...]; after a set command the
hand replies with its current values. Positions are bytes 0-255 with 255 = open (extended, spread, thumb out)
and 0 = closed; which end of each joint's range that is: byte_map.py.
"""

from dataclasses import dataclass

import can
import numpy as np

from ...can.identify import BusSignature
from ...errors import ConfigError

RIGHT_HAND_ID, LEFT_HAND_ID = 0x27, 0x28
RAW_MAX = 255
FINGERS = ("thumb", "index", "middle", "ring", "pinky")
TACTILE_SUMMARY = (0xB1, 0xB2, 0xB3, 0xB4, 0xB5)  # per finger, thumb first
VERSION = 0x64
SERIAL = 0xC0


@dataclass(frozen=True)
class FrameBlock:
    """One frame command carrying `count` consecutive values of a device vector, from `start`."""

    cmd: int
    start: int
    count: int


@dataclass(frozen=True)
class HandLayout:
    model: str
    dof: int  # joints in our URDF command order
    raw_size: int  # length of the device's position vector (L20: 20, 4 of them reserved)
    joint_to_raw: tuple[int, ...]  # raw index of each joint, in command order
    position_frames: tuple[FrameBlock, ...]  # in the order the device expects them sent
    speed_frames: tuple[FrameBlock, ...]
    torque_frames: tuple[FrameBlock, ...]
    temperature_frames: tuple[FrameBlock, ...]
    fault_frames: tuple[FrameBlock, ...]
    tactile_matrix_code: int | None  # second byte of a matrix request ([0xBn, code]); None = no matrix
    tactile_shape: tuple[int, int] | None  # rows x columns per finger

    @property
    def motor_count(self) -> int:
        return sum(block.count for block in self.speed_frames)

    def hand_id(self, side: str) -> int:
        return RIGHT_HAND_ID if side == "right" else LEFT_HAND_ID

    def blocks_by_cmd(self) -> dict[int, tuple[str, FrameBlock]]:
        kinds = {"position": self.position_frames, "speed": self.speed_frames, "torque": self.torque_frames,
                 "temperature": self.temperature_frames, "fault": self.fault_frames}
        return {block.cmd: (kind, block) for kind, blocks in kinds.items() for block in blocks}


def _blocks(*spec: tuple[int, int, int]) -> tuple[FrameBlock, ...]:
    return tuple(FrameBlock(*s) for s in spec)


LAYOUTS: dict[str, HandLayout] = {
    "linkerhand_o6": HandLayout(
        "linkerhand_o6", dof=6, raw_size=6, joint_to_raw=tuple(range(6)),
        position_frames=_blocks((0x01, 0, 6)), speed_frames=_blocks((0x05, 0, 6)),
        torque_frames=_blocks((0x02, 0, 6)), temperature_frames=_blocks((0x33, 0, 6)),
        fault_frames=_blocks((0x35, 0, 6)), tactile_matrix_code=0xA4, tactile_shape=(10, 4)),
    # L10: the last four joints (0x04) are sent before the first six (0x01); 5 motors per speed/torque frame
    "linkerhand_l10": HandLayout(
        "linkerhand_l10", dof=10, raw_size=10, joint_to_raw=tuple(range(10)),
        position_frames=_blocks((0x04, 6, 4), (0x01, 0, 6)), speed_frames=_blocks((0x05, 0, 5), (0x06, 5, 5)),
        torque_frames=_blocks((0x02, 0, 5), (0x03, 5, 5)), temperature_frames=_blocks((0x33, 0, 5), (0x34, 5, 5)),
        fault_frames=_blocks((0x35, 0, 5), (0x36, 5, 5)), tactile_matrix_code=0xC6, tactile_shape=(12, 6)),
    # L20: base pitch x5 (0x01), abduction x5 (0x02), thumb roll (0x03, first byte; 4 reserved), tips x5 (0x04).
    # Our 16 URDF joints skip the 4 reserved raw slots 11-14. Speed 0x05 (5 motors), faults 0x07; 0x02/0x03 are
    # positions on the L20, so it has no torque frames. The vendor SDK reports temperatures as unsupported on the
    # L20 (no frame to read). Tactile matrices: 12x6 per finger, requested with 0xC6 as on the L10.
    "linkerhand_l20": HandLayout(
        "linkerhand_l20", dof=16, raw_size=20, joint_to_raw=(*range(11), 15, 16, 17, 18, 19),
        position_frames=_blocks((0x03, 10, 5), (0x04, 15, 5), (0x01, 0, 5), (0x02, 5, 5)),
        speed_frames=_blocks((0x05, 0, 5)), torque_frames=(), temperature_frames=(),
        fault_frames=_blocks((0x07, 0, 5)), tactile_matrix_code=0xC6, tactile_shape=(12, 6)),
}


def layout_for(model: str) -> HandLayout:
    if model not in LAYOUTS:
        raise ConfigError(f"No LinkerHand CAN layout for {model!r}: give one of {sorted(LAYOUTS)}")
    return LAYOUTS[model]


def joint_raw_to_device_vector(layout: HandLayout, joint_raw: np.ndarray, reserved_value: int = 0) -> np.ndarray:
    vector = np.full(layout.raw_size, reserved_value, dtype=np.int64)
    vector[list(layout.joint_to_raw)] = joint_raw
    return vector


def position_frames(layout: HandLayout, joint_raw: np.ndarray) -> list[bytes]:
    """Set-position frames in the device's order, from raw values in joint order."""
    vector = joint_raw_to_device_vector(layout, joint_raw)
    return [bytes([block.cmd, *vector[block.start:block.start + block.count]]) for block in layout.position_frames]


def value_frames(blocks: tuple[FrameBlock, ...], values) -> list[bytes]:
    """Set frames for a per-motor vector (speed, torque)."""
    values = np.asarray(values, dtype=np.int64)
    return [bytes([block.cmd, *values[block.start:block.start + block.count]]) for block in blocks]


def _recognise(message: can.Message) -> str | None:
    if message.arbitration_id not in (RIGHT_HAND_ID, LEFT_HAND_ID) or len(message.data) < 2:
        return None  # one-byte frames are requests, not a hand's replies
    side = "right" if message.arbitration_id == RIGHT_HAND_ID else "left"
    return f"a {side} LinkerHand (CAN ID {message.arbitration_id:#x})"


# the version request makes an O6 or L10 answer; an L20 may only answer the serial-number request
BUS_SIGNATURE = BusSignature("LinkerHand", tuple((hand_id, bytes([cmd])) for hand_id in (RIGHT_HAND_ID, LEFT_HAND_ID)
                                                 for cmd in (VERSION, SERIAL)), _recognise)
