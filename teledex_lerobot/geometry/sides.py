"""The one definition of a side (of the operator, an arm, a hand)."""

from typing import Literal

from ..errors import ConfigError

Side = Literal["right", "left"]
SIDES: tuple[Side, ...] = ("right", "left")


def check_side(side: str, field: str = "side") -> Side:
    """`side` if it is "right" or "left"; otherwise a ConfigError naming the field and the fix."""
    if side not in SIDES:
        raise ConfigError(f"{field} must be 'right' or 'left' (got {side!r})")
    return SIDES[SIDES.index(side)]  # the same string, typed as the Side it is
