"""The teleoperation state machine: Emergency, ZeroPos, Teleoperation, Down; it starts in Emergency.

Keys (the gamepad keys L1/L2/R1/R2 of the Pico teleoperation guide) request transitions; a key pressed in a state
where it is not allowed is ignored and the reason logged:

    key     allowed from              goes to
    L1      any state                 ZeroPos
    L2      ZeroPos                   Teleoperation
    R1      any state                 Emergency
    R2      Emergency, Teleoperation  Down
    ENGAGE  L1 from Emergency or Down, L2 from ZeroPos: one button (or gesture) steps Emergency -> ZeroPos ->
            Teleoperation, and does nothing in Teleoperation

Home (ZeroPos) and Emergency are reachable from every state: an operator who is lost can always stop, or send the
arm home, with one key. Emergency holds the robot where it is measured to be: a software hold, not a hardware stop.
"""

import enum
import logging

logger = logging.getLogger(__name__)


class TeleopState(enum.Enum):
    EMERGENCY = "Emergency"
    ZERO_POS = "ZeroPos"
    TELEOPERATION = "Teleoperation"
    DOWN = "Down"


KEYS = ("L1", "L2", "R1", "R2", "ENGAGE")
_TRANSITIONS = {
    "L1": (set(TeleopState), TeleopState.ZERO_POS),
    "L2": ({TeleopState.ZERO_POS}, TeleopState.TELEOPERATION),
    "R1": (set(TeleopState), TeleopState.EMERGENCY),
    "R2": ({TeleopState.EMERGENCY, TeleopState.TELEOPERATION}, TeleopState.DOWN),
}


class TeleopStateMachine:
    def __init__(self):
        self.state = TeleopState.EMERGENCY

    def press(self, key: str) -> bool:
        """Request the key's transition; returns whether it happened."""
        if key not in KEYS:
            raise ValueError(f"unknown key {key!r}; keys are {KEYS}")
        if key == "ENGAGE":
            key = "L1" if self.state in (TeleopState.EMERGENCY, TeleopState.DOWN) else "L2"
        allowed_from, target = _TRANSITIONS[key]
        if self.state not in allowed_from:
            names = ", ".join(sorted(s.value for s in allowed_from))
            logger.info("[keys] %s ignored in %s: %s is available from %s", key, self.state.value, target.value, names)
            return False
        if target != self.state:
            logger.info("[keys] %s: %s -> %s", key, self.state.value, target.value)
            self.state = target
        return True


class ButtonKeys:
    """Input buttons -> state machine keys, on the press (rising edge) only, so a held button acts once."""

    def __init__(self, bindings: dict[str, str]):
        self.bindings = dict(bindings)
        self._down: set[str] = set()

    def presses(self, buttons: dict[str, bool]) -> list[str]:
        down = {name for name, pressed in buttons.items() if pressed and name in self.bindings}
        pressed = [self.bindings[name] for name in sorted(down - self._down)]
        self._down = down
        return pressed
