"""What a LinkerHand's position bytes mean: per model and side, per joint, the range and which end byte 255 is,
derived from the vendor's published mapping.

Source: linker-bot/linkerhand-python-sdk, LinkerHand/utils/mapping.py (release 3.1.0, commit b371361). For each
model and side it gives, per byte of the position vector, a range [min, max] in radians and a direction: -1 maps
byte 255 to min and byte 0 to max, 0 maps byte 255 to max. Byte 255 is the open hand (fingers extended, spread
out, thumb out to the side) on every joint: the vendor's named poses say so (the "open" pose of its GUI presets,
example/gui_control/config/constants.py, is 255 on the flexion, abduction and rotation bytes, the fist 0 or near
it; its L10_positions.yaml sends byte-identical poses to the left and the right hand).

Those ranges are in the vendor's joint conventions; our URDFs (configs/urdf/) are our own models, so each joint
below says how our angle relates to the vendor's:
- SAME: our q is the vendor's (same zero, same positive direction);
- NEGATED: our q = -vendor q (the right hands' spread and thumb rotation: our right URDFs mirror the left ones,
  the vendor's right-hand conventions are not mirrored for these joints);
- REVERSED: our q = min + max - vendor q, the vendor's zero is our far end (the thumb's side swing: our zero lays
  the thumb alongside the index finger, the vendor's zero, byte 255 on the open hand, swings it out).
Our URDF limits must span the vendor's range in our convention (tests/devices/test_linkerhand_byte_map.py checks it
against the vendor's file when it is present); the runtime scale reads the limits from the URDF (one source of
truth) and which end is byte 255 from here.
"""

from dataclasses import dataclass

import numpy as np

from ...errors import ConfigError, ModelError
from .protocol import RAW_MAX

SAME, NEGATED, REVERSED = "same", "negated", "reversed"
BYTE_255_AT_MIN, BYTE_255_AT_MAX = -1, 0  # mapping.py's direction ("derict") values


@dataclass(frozen=True)
class VendorJoint:
    """One of our joints: its row in the vendor's mapping and how our angle relates to the vendor's."""

    index: int  # position in the vendor's byte vector
    vendor_range: tuple[float, float]  # mapping.py min, max (rad, the vendor's convention)
    direction: int  # mapping.py: BYTE_255_AT_MIN or BYTE_255_AT_MAX
    ours: str = SAME

    @property
    def our_range(self) -> tuple[float, float]:
        low, high = self.vendor_range
        return (-high, -low) if self.ours == NEGATED else (low, high)

    @property
    def open_at_upper(self) -> bool:
        """Byte 255 at our upper limit (else at our lower one)."""
        vendor_max = self.direction == BYTE_255_AT_MAX
        return vendor_max if self.ours == SAME else not vendor_max


def _joints(rows) -> tuple[VendorJoint, ...]:
    return tuple(VendorJoint(index, (low, high), direction, ours) for index, low, high, direction, ours in rows)


_MIN, _MAX = BYTE_255_AT_MIN, BYTE_255_AT_MAX
# O6: thumb flexion, thumb opposition (our 0: in the palm plane, the vendor's open hand), four finger flexions.
_O6 = _joints([(0, 0, 0.58, _MIN, SAME), (1, 0, 1.36, _MIN, SAME),
               *[(i, 0, 1.6, _MIN, SAME) for i in range(2, 6)]])
# L10, our joint order = the vendor's bytes: thumb flexion, thumb side swing, four finger flexions, index / ring /
# pinky spread, thumb rotation.
_L10_LEFT = _joints([(0, 0, 1.45, _MIN, SAME), (1, 0, 1.43, _MIN, REVERSED),
                     *[(i, 0, 1.62, _MIN, SAME) for i in range(2, 6)],
                     (6, 0, 0.26, _MAX, SAME), (7, -0.26, 0, _MIN, SAME), (8, -0.26, 0, _MIN, SAME),
                     (9, -0.52, 1.01, _MIN, SAME)])
# The right L10 of the mapping is another generation (other ranges); byte 255 still fans the fingers out (the
# vendor sends the left hand's poses unchanged to it), which fixes the signs of its spreads and thumb rotation.
_L10_RIGHT = _joints([(0, 0, 0.75, _MIN, SAME), (1, 0, 1.43, _MIN, REVERSED),
                      *[(i, 0, 1.62, _MIN, SAME) for i in range(2, 6)],
                      (6, -0.26, 0.21, _MAX, NEGATED), (7, 0, 0.21, _MAX, SAME), (8, 0, 0.34, _MAX, SAME),
                      (9, -0.52, 1.01, _MIN, NEGATED)])


def _l20(side: str) -> tuple[VendorJoint, ...]:
    """Our 16 joints from the vendor's 20 bytes (11-14 reserved): flexion of thumb and fingers (0-4), thumb side
    swing (5), finger spreads (6-9; the vendor flips their direction on the right hand, our right URDF mirrors the
    left instead), thumb rotation (10), thumb and finger tips (15-19)."""
    spread = (_MIN, SAME) if side == "left" else (_MAX, NEGATED)
    return _joints([(0, 0, 0.87, _MIN, SAME), *[(i, 0, 1.4, _MIN, SAME) for i in range(1, 5)],
                    (5, -0.297, 0.683, _MIN, REVERSED), *[(i, -0.26, 0.26, *spread) for i in range(6, 10)],
                    (10, 0.122 if side == "left" else 0.0, 1.78, _MIN, SAME), (15, 0, 1.29, _MIN, SAME),
                    *[(i, 0, 1.08, _MIN, SAME) for i in range(16, 20)]])


VENDOR_MAPPING: dict[tuple[str, str], tuple[VendorJoint, ...]] = {
    ("linkerhand_o6", "left"): _O6, ("linkerhand_o6", "right"): _O6,
    ("linkerhand_l10", "left"): _L10_LEFT, ("linkerhand_l10", "right"): _L10_RIGHT,
    ("linkerhand_l20", "left"): _l20("left"), ("linkerhand_l20", "right"): _l20("right"),
}


class ByteScale:
    """Joint angles <-> position bytes for one hand: linear over each joint's URDF range, byte 255 at the end the
    vendor's mapping says (open_at_upper)."""

    def __init__(self, lower, upper, open_at_upper):
        self.lower = np.asarray(lower, dtype=float)
        self.upper = np.asarray(upper, dtype=float)
        self.open_at_upper = np.asarray(open_at_upper, dtype=bool)

    def to_bytes(self, q_rad) -> np.ndarray:
        """Clipped to the range, rounded to the nearest byte."""
        fraction = np.clip((np.asarray(q_rad, dtype=float) - self.lower) / (self.upper - self.lower), 0.0, 1.0)
        return np.rint(RAW_MAX * np.where(self.open_at_upper, fraction, 1.0 - fraction)).astype(np.int64)

    def to_radians(self, raw) -> np.ndarray:
        fraction = np.asarray(raw, dtype=float) / RAW_MAX
        return self.lower + np.where(self.open_at_upper, fraction, 1.0 - fraction) * (self.upper - self.lower)


def byte_scale(model: str, side: str, lower, upper) -> ByteScale:
    """The scale of a hand whose URDF limits (its joint order) are lower, upper."""
    if (model, side) not in VENDOR_MAPPING:
        raise ConfigError(f"No LinkerHand byte mapping for {model!r} {side!r}: give one of {sorted(VENDOR_MAPPING)}")
    joints = VENDOR_MAPPING[model, side]
    if len(joints) != len(lower):
        raise ModelError(f"the {model} {side} model has {len(lower)} joints where the hand has {len(joints)}: restore "
                         f"the built-in {model} URDF")
    return ByteScale(lower, upper, [joint.open_at_upper for joint in joints])
