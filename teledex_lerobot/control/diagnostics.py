"""The teleoperation diagnostics line of the Pico teleoperation guide, logged once per period:

    [teleop] diag input_age_ms=12 packets=100(total=5230) parse_fail=0(total=3) feedback_hz=100.0
    ik_ms(avg/max)=0.41/1.20 control_ms(avg/max)=0.62/1.51 trigger(L/R)=0.00/0.87 stale=False stale_ticks=0/100
    state=Teleoperation arm=following

packets / parse_fail: valid and rejected input packets in the last period (and in all); feedback_hz: control
ticks per second; ik_ms: IK solve time; control_ms: one whole tick; trigger: raw left/right trigger values; stale:
now, and how many of the period's ticks held for stale input (a gap shorter than the period still shows); arm: what
the arm does now (following, holding: input stale, disengaged, ...).
"""

import logging
from dataclasses import dataclass, field

logger = logging.getLogger(__name__)


@dataclass
class _Durations:
    total_s: float = 0.0
    max_s: float = 0.0
    count: int = 0

    def add(self, seconds: float) -> None:
        self.total_s += seconds
        self.max_s = max(self.max_s, seconds)
        self.count += 1

    def text(self) -> str:
        average_ms = 1000 * self.total_s / self.count if self.count else 0.0
        return f"{average_ms:.2f}/{1000 * self.max_s:.2f}"


@dataclass
class Diagnostics:
    period_s: float = 1.0
    ik: _Durations = field(default_factory=_Durations)
    control: _Durations = field(default_factory=_Durations)
    ticks: int = 0
    stale_ticks: int = 0
    _period_start_ns: int | None = None
    _packets_at_start: int = 0
    _failures_at_start: int = 0
    last_line: str = ""

    def add_tick(self, control_s: float, ik_s: float, stale: bool = False) -> None:
        self.ticks += 1
        self.stale_ticks += stale
        self.control.add(control_s)
        if ik_s > 0:
            self.ik.add(ik_s)

    def maybe_report(self, now_ns: int, *, input_age_ms: float | None, packets: int, parse_failures: int,
                     triggers: tuple[float, float], stale: bool, state: str, arm: str = "") -> str | None:
        """Log and return the line if a period has passed since the last one (the first call starts a period)."""
        if self._period_start_ns is None:
            self._period_start_ns, self._packets_at_start, self._failures_at_start = now_ns, packets, parse_failures
            return None
        elapsed_s = (now_ns - self._period_start_ns) / 1e9
        if elapsed_s < self.period_s:
            return None
        age = "none" if input_age_ms is None else f"{input_age_ms:.0f}"
        self.last_line = (
            f"[teleop] diag input_age_ms={age} packets={packets - self._packets_at_start}(total={packets}) "
            f"parse_fail={parse_failures - self._failures_at_start}(total={parse_failures}) "
            f"feedback_hz={self.ticks / elapsed_s:.1f} ik_ms(avg/max)={self.ik.text()} "
            f"control_ms(avg/max)={self.control.text()} trigger(L/R)={triggers[0]:.2f}/{triggers[1]:.2f} "
            f"stale={stale} stale_ticks={self.stale_ticks}/{self.ticks} state={state}" + (f" arm={arm}" if arm else ""))
        logger.info(self.last_line)
        self._period_start_ns, self._packets_at_start, self._failures_at_start = now_ns, packets, parse_failures
        self.ik, self.control, self.ticks, self.stale_ticks = _Durations(), _Durations(), 0, 0
        return self.last_line
