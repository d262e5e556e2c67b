"""Gesture buttons from tracked hands, for inputs without buttons (headset hand tracking): a pinch (thumb and
index fingertips together) reads as the button "<side>_pinch", which key_bindings can map to a state-machine key."""

import numpy as np

from ..operator.keypoints import FINGER_CHAINS


class PinchButtons:
    """Per side, pressed below `close_m` between the thumb and index tips, released above `open_m` (hysteresis, so
    tracking jitter at the threshold does not press it twice)."""

    THUMB_TIP, INDEX_TIP = FINGER_CHAINS["thumb"][-1], FINGER_CHAINS["index"][-1]

    def __init__(self, close_m: float, open_m: float):
        self.close_m, self.open_m = close_m, open_m
        self._pressed: dict[str, bool] = {}

    def __call__(self, hand_keypoints_m: dict[str, np.ndarray]) -> dict[str, bool]:
        for side, keypoints in hand_keypoints_m.items():
            gap = float(np.linalg.norm(keypoints[self.THUMB_TIP] - keypoints[self.INDEX_TIP]))
            was = self._pressed.get(side, False)
            self._pressed[side] = gap < self.close_m or (was and gap < self.open_m)
        return {f"{side}_pinch": pressed for side, pressed in self._pressed.items()}
