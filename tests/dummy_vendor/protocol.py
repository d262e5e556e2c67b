"""The Acme gripper's CAN protocol (invented for the registry test): targets to 0x310 and positions from 0x311, each
frame [joint index, float32 LE radians]; the gripper streams its positions unasked."""

import struct

import can

from teledex_lerobot.can.identify import BusSignature

TARGET_ID, POSITION_ID = 0x310, 0x311


def pack(joint: int, value_rad: float) -> bytes:
    return bytes([joint]) + struct.pack("<f", value_rad)


def unpack(data: bytes) -> tuple[int, float]:
    return data[0], struct.unpack("<f", bytes(data[1:5]))[0]


def _recognise(message: can.Message) -> str | None:
    return "an Acme gripper" if message.arbitration_id == POSITION_ID else None


BUS_SIGNATURE = BusSignature("Acme gripper", (), _recognise)
