"""Agilex Piper CAN protocol facts, read from piper_sdk 0.6.2: frame IDs, payload layouts, device units.

Standard 11-bit IDs, DLC 8, big-endian two's complement. Joint angles travel in 0.001 deg, the gripper stroke and
end-pose positions in 0.001 mm, end-pose angles in 0.001 deg. Used by the driver for unit conversion and by the
simulator to build and parse frames; the driver itself never builds frames (the vendor SDK does).
"""

import math
import struct

import can
import numpy as np

from ...can.identify import BusSignature

# feedback, arm -> host
STATUS = 0x2A1
END_POSE = (0x2A2, 0x2A3, 0x2A4)  # int32 pairs X,Y / Z,RX / RY,RZ
JOINT_FEEDBACK = (0x2A5, 0x2A6, 0x2A7)  # int32 pairs J1,J2 / J3,J4 / J5,J6
GRIPPER_FEEDBACK = 0x2A8
MOTOR_HIGH_SPEED = tuple(range(0x251, 0x257))
MOTOR_LOW_SPEED = tuple(range(0x261, 0x267))
MOTOR_LIMITS_REPLY = 0x473
MOTOR_ACCEL_REPLY = 0x47C
FIRMWARE = 0x4AF  # query and reply share the ID

# commands, host -> arm
MOTION_CTRL_1 = 0x150  # [0] 1 = emergency stop, 2 = resume
MOTION_CTRL_2 = 0x151  # [0] ctrl mode, [1] move mode, [2] speed %, [3] mit
END_POSE_CTRL = (0x152, 0x153, 0x154)
JOINT_CTRL = (0x155, 0x156, 0x157)
GRIPPER_CTRL = 0x159
ENABLE = 0x471  # [0] motor 1-6 or 7 = all, [1] 0x02 enable / 0x01 disable
LIMITS_QUERY = 0x472  # [0] motor, [1] 1 = angle/speed, 2 = acceleration
COMMAND_IDS = frozenset({MOTION_CTRL_1, MOTION_CTRL_2, *END_POSE_CTRL, *JOINT_CTRL, GRIPPER_CTRL, ENABLE,
                         LIMITS_QUERY, FIRMWARE})

CTRL_MODE_STANDBY, CTRL_MODE_CAN = 0x00, 0x01
MOVE_MODE_P, MOVE_MODE_J, MOVE_MODE_L = 0x00, 0x01, 0x02
ESTOP_STOP, ESTOP_RESUME = 0x01, 0x02
ENABLE_ON, ENABLE_OFF = 0x02, 0x01
ALL_MOTORS = 7
FOC_DRIVER_ENABLED_BIT = 6  # 0x261-0x266 byte 5
GRIPPER_ENABLED_BIT = 6  # 0x2A8 byte 6
# Motor driver status (0x261-0x266 byte 5, piper_sdk's FOC_Status): the bits that are faults, by bit.
FOC_FAULT_BITS = {0: "supply voltage too low", 1: "motor over-temperature", 2: "driver over-current",
                  3: "driver over-temperature", 4: "collision", 5: "driver error", 7: "stalled"}
# Gripper status (0x2A8 byte 6): its fault bits (bit 6 = enabled, bit 7 = homed).
GRIPPER_FAULT_BITS = {0: "supply voltage too low", 1: "motor over-temperature", 2: "driver over-current",
                      3: "driver over-temperature", 4: "sensor error", 5: "driver error"}
# 0x2A1 byte 1
ARM_STATUS_NORMAL, ARM_STATUS_ESTOP, ARM_STATUS_TARGET_OVER_LIMIT, ARM_STATUS_COMM_ERROR = 0x00, 0x01, 0x04, 0x05
ARM_STATUS_NAMES = {0: "normal", 1: "emergency stop", 2: "no IK solution", 3: "singularity",
                    4: "target over limit", 5: "joint communication error", 6: "joint brake not released",
                    7: "collision", 8: "over-speed in teach drag", 9: "joint status abnormal", 10: "other abnormal",
                    11: "teach record", 12: "teach execution", 13: "teach pause", 14: "main control NTC over-temp",
                    15: "release resistor NTC over-temp"}
# The SDK's abnormal-data filters drop frames beyond these; a simulator must never produce them.
SDK_JOINT_FILTER_MILLIDEG = 3_000_000
SDK_GRIPPER_FILTER_UM = 150_000

MILLIDEG_PER_RAD = 1000 * 180 / math.pi  # 57295.7795..., the vendor demos' factor
UM_PER_M = 1e6  # gripper stroke and end-pose positions: 0.001 mm = 1 um
MILLIDEG_PER_DEG = 1000


def rad_to_millideg(q_rad) -> np.ndarray:
    """Radians -> integer 0.001 deg, rounded to nearest (JointCtrl raises TypeError on floats)."""
    return np.rint(np.asarray(q_rad, dtype=float) * MILLIDEG_PER_RAD).astype(np.int64)


def millideg_to_rad(q_millideg) -> np.ndarray:
    return np.asarray(q_millideg, dtype=float) / MILLIDEG_PER_RAD


def m_to_um(x_m) -> np.ndarray:
    return np.rint(np.asarray(x_m, dtype=float) * UM_PER_M).astype(np.int64)


def um_to_m(x_um) -> np.ndarray:
    return np.asarray(x_um, dtype=float) / UM_PER_M


def pack_int32_pair(a: int, b: int) -> bytes:
    return struct.pack(">ii", int(a), int(b))


def unpack_int32_pair(data: bytes) -> tuple[int, int]:
    return struct.unpack(">ii", bytes(data[:8]))


def err_code_bits(angle_limit_joints: set[int], comm_error_joints: set[int]) -> int:
    """0x2A1 bytes 6-7 (uint16 BE): high byte bit (j-1) = joint j angle limit; low byte bit (j-1) = comm error."""
    high = sum(1 << (j - 1) for j in angle_limit_joints)
    low = sum(1 << (j - 1) for j in comm_error_joints)
    return (high << 8) | low


def bit_names(value: int, names: dict[int, str]) -> list[str]:
    return [name for bit, name in names.items() if value & (1 << bit)]


def comm_error_joints(err_code: int) -> list[int]:
    """Joints 1-6 whose communication-error bit (0x2A1 err_code, low byte) is set."""
    return [j + 1 for j in range(6) if err_code & (1 << j)]


def angle_limit_joints(err_code: int) -> list[int]:
    return [j + 1 for j in range(6) if err_code & (1 << (8 + j))]


def _recognise(message: can.Message) -> str | None:
    if message.arbitration_id in (STATUS, *JOINT_FEEDBACK, GRIPPER_FEEDBACK):
        return f"an Agilex Piper (its feedback frames {STATUS:#x}-{GRIPPER_FEEDBACK:#x})"
    return None


BUS_SIGNATURE = BusSignature("Agilex Piper", (), _recognise)  # the arm streams its feedback unasked
