"""The one definition of a side (of the operator, an arm, a hand)."""

from typing import Literal

Side = Literal["right", "left"]
SIDES: tuple[Side, ...] = ("right", "left")


def check_side(side: str, field: str = "side") -> Side:
    """`side` if it is "right" or "left"; otherwise a ValueError naming the field and the fix."""
    if side not in SIDES:
        raise ValueError(f"{field} must be 'right' or 'left' (got {side!r})")
    return side  # type: ignore[return-value]
