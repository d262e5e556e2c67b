"""Linker Arm A7 CAN protocol facts, read from linkerbot.arm.a7 (0.5.4): IDs, registers, units.

One standard 11-bit ID per joint motor: 51-57 on a right arm, 61-67 on a left arm, shoulder first (the URDF joint
order). Frames are [register, value...]; a frame holding only a readable register is a read request and the motor
answers on the same ID with [register, float32 little-endian], except the one-byte registers (enabled, handshake).
Writes carry float32 LE values (angles in rad, speeds in rad/s) or one byte (enable 01/00, mode 05 = profile
position). Used by the simulator and teledex-doctor; the driver itself never builds frames (linkerbot's A7 does).
"""

import struct

import can
import numpy as np

from ...can.identify import BusSignature
from ...errors import ConfigError

JOINTS = 7
FIRST_ID = {"right": 51, "left": 61}

# reads: [reg] -> [reg, value]
HANDSHAKE = 0x01  # any reply within 20 ms means the motor is alive
TORQUE = 0x03
VELOCITY = 0x05  # rad/s
POSITION = 0x06  # rad
POSITION_KP = 0x19
VELOCITY_KP = 0x17
VELOCITY_KI = 0x18
ACCELERATION = 0x1D  # profile acceleration, rad/s^2
ENABLED = 0x2B  # one byte
TEMPERATURE = 0x5F  # deg C

# writes: [reg, value]
SET_MODE = 0x07  # one byte
SET_POSITION = 0x0A  # float32 target, rad
SET_VELOCITY_KP = 0x10
SET_VELOCITY_KI = 0x11
SET_POSITION_KP = 0x12
SET_VELOCITY = 0x1F  # profile speed, rad/s
SET_ACCELERATION = 0x20
SET_DECELERATION = 0x21
SET_ENABLE = 0x2A  # one byte: 01 enable, 00 disable
# one-byte commands that are not read requests
SAVE_PARAMS = 0x0D
SET_ZERO = 0x87
RESET_ERROR = 0xFE

MODE_PROFILE_POSITION = 0x05

# the gain each write register sets, by the register it is read back from
GAIN_WRITES = {SET_POSITION_KP: POSITION_KP, SET_VELOCITY_KP: VELOCITY_KP, SET_VELOCITY_KI: VELOCITY_KI}


def motor_ids(side: str) -> tuple[int, ...]:
    if side not in FIRST_ID:
        raise ConfigError(f"A7 side must be one of {sorted(FIRST_ID)} (got {side!r})")
    return tuple(range(FIRST_ID[side], FIRST_ID[side] + JOINTS))


def pack_float(value: float) -> bytes:
    return struct.pack("<f", value)


def unpack_float(data: bytes) -> float:
    return struct.unpack("<f", data[:4])[0]


def as_device_float(q_rad) -> np.ndarray:
    """What the motor receives for these angles: the nearest float32 (the device unit is one float32 step)."""
    return np.asarray(q_rad, dtype=np.float32).astype(float)


def device_unit_rad(q_rad) -> np.ndarray:
    """One device unit at these angles: the float32 spacing there."""
    return np.spacing(np.abs(np.asarray(q_rad, dtype=np.float32))).astype(float)


def _recognise(message: can.Message) -> str | None:
    if len(message.data) < 2:
        return None  # one-byte frames are requests, not a motor's replies
    for side in FIRST_ID:
        ids = motor_ids(side)
        if message.arbitration_id in ids:
            return f"a {side} Linker Arm A7 (CAN IDs {ids[0]}-{ids[-1]})"
    return None


BUS_SIGNATURE = BusSignature("Linker Arm A7", tuple((ids[0], bytes([HANDSHAKE])) for ids in map(motor_ids, FIRST_ID)),
                             _recognise)
