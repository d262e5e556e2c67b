"""Leader-arm joint datagrams <-> OperatorFrame: {"timestamp_ns": int (optional), "positions": {joint: rad}}.

A leader arm read in this process needs no datagrams (the leader-arm teleoperator reads it directly); this format
lets a leader on another machine stream its joints, and lets a leader session be recorded and replayed.
"""

import json

from .frame import OperatorFrame, sender_timestamp_ns


def parse_joints(data: bytes, received_ns: int) -> OperatorFrame:
    message = json.loads(data)
    positions = {str(name): float(value) for name, value in message["positions"].items()}
    if not positions:
        raise ValueError("no joint positions")
    return OperatorFrame(received_ns=received_ns, joint_positions=positions,
                         sender_time_ns=sender_timestamp_ns(message.get("timestamp_ns"))).check_finite()


def encode_joints(positions: dict[str, float], timestamp_ns: int | None = None) -> bytes:
    """timestamp_ns: the sender's clock; None (a leader read in this process, already on our clock) omits it."""
    message: dict[str, object] = {} if timestamp_ns is None else {"timestamp_ns": int(timestamp_ns)}
    message["positions"] = {k: round(float(v), 6) for k, v in positions.items()}
    return json.dumps(message).encode()
