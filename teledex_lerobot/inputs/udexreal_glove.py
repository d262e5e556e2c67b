"""UdexReal HandDriver JSON datagrams (the glove driver's UDP output) <-> OperatorFrame.

One datagram: {"<device name>": {"Bones": [...], "Parameter": [{"Name": "r0", "Value": deg}, ... "r23", "l0", ...]}}.
Each hand whose 24 parameters are all present becomes canonical angles (operator.glove); Bones are not used.
"""

import json

import numpy as np

from ..operator.glove import NUM_GLOVE_ANGLES, canonical_to_glove, glove_parameter_names, glove_to_canonical
from .frame import OperatorFrame


def parse_udexreal(data: bytes, received_ns: int) -> OperatorFrame:
    message = json.loads(data)
    if not isinstance(message, dict) or not message:
        raise ValueError("expected {device name: {Parameter: [...]}}")
    values = {}
    for device in message.values():
        for parameter in device.get("Parameter", []):
            values[str(parameter["Name"])] = float(parameter["Value"])
    frame = OperatorFrame(received_ns=received_ns)
    for side in ("right", "left"):
        names = glove_parameter_names(side)
        present = [name in values for name in names]
        if any(present) and not all(present):
            raise ValueError(f"{side} glove: {NUM_GLOVE_ANGLES - sum(present)} of {NUM_GLOVE_ANGLES} angles missing")
        if all(present):
            frame.hand_angles_rad[side] = glove_to_canonical(np.array([values[n] for n in names]), side)
    if not frame.hand_angles_rad:
        raise ValueError("no complete glove in the datagram")
    return frame.check_finite()


def encode_udexreal(angles_rad_by_side: dict[str, np.ndarray], device: str = "UdexReal") -> bytes:
    """A HandDriver datagram from canonical angles per side (fixtures, tests, simulated gloves)."""
    parameters = []
    for side, angles in angles_rad_by_side.items():
        degrees = canonical_to_glove(angles, side)
        parameters += [{"Name": n, "Value": round(float(v), 4)} for n, v in zip(glove_parameter_names(side), degrees)]
    return json.dumps({device: {"Bones": [], "Parameter": parameters}}, separators=(",", ":")).encode()
