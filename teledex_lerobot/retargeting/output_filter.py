"""The retargeter's output low-pass filter: `order` exponential stages in a row, y_k ← y_k + α (y_{k−1} − y_k).

One stage (order 1) is dex-retargeting's filter. Stages in a row make a critically damped low-pass of that order
that cuts the highest frequencies harder for its delay: at the frame rate's Nyquist frequency each stage passes
α / (2 − α) of the signal, so one stage with α = 0.2 passes 0.11 with a delay of (1 − α)/α = 4 frames, three stages
with α = 0.55 pass 0.055 with a delay of 3 (1 − α)/α = 2.5 frames. Jerk (the third difference of the joint angles)
weighs the highest frequencies most; lag is most of the tip error of a filtered output. The gain is the filter's,
not the retargeter's: dex-retargeting's own unfiltered output on its example recording (Allegro) gives 42.4 mm /
jerk 0.0103 through three stages at 0.55 against 44.4 mm / 0.0124 through its one stage at 0.2.

α is per frame: the same setting smooths a 90 Hz stream over a third of the time of a 30 Hz one. The first frame
after a reset sets every stage; frames that are not retargeted (held) do not advance the filter.
"""

import numpy as np


class CascadedLowPass:
    def __init__(self, alpha: float, order: int):
        """alpha in (0, 1] (1 = no filtering), order >= 1 (checked by `RetargetingConfig`)."""
        self.alpha, self.order = alpha, order
        self._stages: np.ndarray | None = None  # (order, n)

    def reset(self) -> None:
        self._stages = None

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """The filtered value after input x (a new array)."""
        if self._stages is None:
            self._stages = np.tile(x, (self.order, 1))
        elif self.alpha < 1.0:
            stages, alpha = self._stages, self.alpha
            for k in range(self.order):
                stages[k] += alpha * (x - stages[k])
                x = stages[k]
        else:
            self._stages[:] = x
        return self._stages[-1].copy()
