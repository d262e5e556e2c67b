"""The teleoperation state machine of seed 002: Emergency, ZeroPos, Teleoperation, Down; starts in Emergency.

Keys (seed 002's gamepad L1/L2/R1/R2) request transitions; a key pressed in a state where it is not allowed is
ignored and the reason logged:

    key  allowed from              goes to
    L1   Emergency, Down           ZeroPos
    L2   ZeroPos                   Teleoperation
    R1   any state                 Emergency
    R2   Emergency, Teleoperation  Down

Emergency is a software hold of the last command, not a hardware stop.
"""

import enum
import logging

logger = logging.getLogger(__name__)


class TeleopState(enum.Enum):
    EMERGENCY = "Emergency"
    ZERO_POS = "ZeroPos"
    TELEOPERATION = "Teleoperation"
    DOWN = "Down"


KEYS = ("L1", "L2", "R1", "R2")
_TRANSITIONS = {
    "L1": ({TeleopState.EMERGENCY, TeleopState.DOWN}, TeleopState.ZERO_POS),
    "L2": ({TeleopState.ZERO_POS}, TeleopState.TELEOPERATION),
    "R1": (set(TeleopState), TeleopState.EMERGENCY),
    "R2": ({TeleopState.EMERGENCY, TeleopState.TELEOPERATION}, TeleopState.DOWN),
}


class TeleopStateMachine:
    def __init__(self):
        self.state = TeleopState.EMERGENCY
        self.entered = True  # the state was entered since the controller last looked (it resets its chain then)

    def press(self, key: str) -> bool:
        """Request the key's transition; returns whether it happened."""
        if key not in _TRANSITIONS:
            raise ValueError(f"unknown key {key!r}; keys are {KEYS}")
        allowed_from, target = _TRANSITIONS[key]
        if self.state not in allowed_from:
            names = ", ".join(sorted(s.value for s in allowed_from))
            logger.info("[keys] %s ignored in %s: %s is available from %s", key, self.state.value, target.value, names)
            return False
        if target != self.state:
            logger.info("[keys] %s: %s -> %s", key, self.state.value, target.value)
            self.state = target
            self.entered = True
        return True

    def take_entered(self) -> bool:
        """Whether a state was entered since the last call (and forget it)."""
        entered, self.entered = self.entered, False
        return entered


class ButtonKeys:
    """Input buttons -> state machine keys, on the press (rising edge) only, so a held button acts once."""

    def __init__(self, bindings: dict[str, str]):
        unknown = sorted(set(bindings.values()) - set(KEYS))
        if unknown:
            raise ValueError(f"key_bindings map to unknown key(s) {unknown}; keys are {KEYS}")
        self.bindings = dict(bindings)
        self._down: set[str] = set()

    def presses(self, buttons: dict[str, bool]) -> list[str]:
        down = {name for name, pressed in buttons.items() if pressed and name in self.bindings}
        pressed = [self.bindings[name] for name in sorted(down - self._down)]
        self._down = down
        return pressed
