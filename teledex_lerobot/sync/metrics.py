"""The one definition of every recording-quality figure, used by the recorder (progress line, metadata.json), the
sync report and the benchmarks alike.

Sync (per frame the validation packet gives valid and max_diff, the spread of the sources' capture times):
- sync success rate = valid frames / frames;
- mean sync error = mean max_diff over the VALID frames (the TeleDex report's definition: the temporal blur of the
  snapshots that passed);
- spread percentiles (p50, p90, p99) and mean of max_diff over ALL frames (what the sensors really did);
- per-source lag = how far a source's capture time is behind the newest source of the same frame (mean, p99, max),
  and the frames in which it reported nothing.

Frame timing (from the frames' check times alone, so the live recorder and an offline reader agree exactly):
- interval = time since the previous stored frame (0 on an episode's first frame);
- a frame follows a gap when its interval is longer than 1.5 control periods;
- frames expected = the control ticks the episode's span holds, round((last - first) / period) + 1; dropped ticks =
  frames expected - frames stored (a loop that runs slow without a single gap still drops ticks).
"""

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..errors import ConfigError
from .timesync import NO_STAMP

GAP_PERIODS = 1.5


def _percentile(values: np.ndarray, q: float) -> float | None:
    return float(np.percentile(values, q)) if len(values) else None


def _mean(values: np.ndarray) -> float | None:
    return float(values.mean()) if len(values) else None


def source_lags_ms(source_timestamps_ns: np.ndarray) -> np.ndarray:
    """(T, S) capture times (NO_STAMP = none) -> (T, S) lag behind the frame's newest source in ms (NaN = none)."""
    stamps = np.where(source_timestamps_ns != NO_STAMP, source_timestamps_ns, np.nan).astype(float)
    if not len(stamps):
        return stamps
    newest = np.nanmax(np.where(np.isnan(stamps).all(axis=1, keepdims=True), 0.0, stamps), axis=1, keepdims=True)
    return (newest - stamps) / 1e6


def sync_metrics(valid: np.ndarray, max_diff_ms: np.ndarray, source_names: list[str],
                 source_timestamps_ns: np.ndarray) -> dict:
    valid = np.asarray(valid, dtype=bool).reshape(-1)
    max_diff_ms = np.asarray(max_diff_ms, dtype=float).reshape(-1)
    frames = len(valid)
    lag_ms = source_lags_ms(np.asarray(source_timestamps_ns, dtype=np.int64).reshape(frames, len(source_names)))
    lags = {}
    for i, source in enumerate(source_names):
        column = lag_ms[:, i][~np.isnan(lag_ms[:, i])]
        lags[source] = {"mean_ms": _mean(column), "p99_ms": _percentile(column, 99),
                        "max_ms": float(column.max()) if len(column) else None,
                        "missing_frames": int(frames - len(column))}
    return {
        "frames": int(frames),
        "valid_frames": int(valid.sum()),
        "sync_success_rate": float(valid.mean()) if frames else None,
        "mean_sync_error_ms": _mean(max_diff_ms[valid]),
        "max_diff_mean_ms": _mean(max_diff_ms),
        "max_diff_p50_ms": _percentile(max_diff_ms, 50),
        "max_diff_p90_ms": _percentile(max_diff_ms, 90),
        "max_diff_p99_ms": _percentile(max_diff_ms, 99),
        "source_lag": lags,
    }


def lagging_source(metrics: dict) -> tuple[str, float] | None:
    """The source furthest behind on average (name, mean lag ms), or None when nothing lags."""
    lags = [(name, lag["mean_ms"]) for name, lag in metrics["source_lag"].items() if lag["mean_ms"] is not None]
    return max(lags, key=lambda item: item[1], default=None)


@dataclass(frozen=True)
class FrameTiming:
    interval_ns: np.ndarray  # (T,) int64, 0 on the first frame
    after_gap: np.ndarray  # (T,) bool


def frame_timing(frame_ns: npt.ArrayLike, fps: float, previous_ns: int | None = None) -> FrameTiming:
    """The timing of consecutive stored frames; previous_ns: the check time of the frame stored just before them (a
    sink fed one frame at a time), None when they start the episode. The one rule for both formats, the recorder's
    figures and the report."""
    frame_ns = np.asarray(frame_ns, dtype=np.int64).reshape(-1)
    interval = np.diff(frame_ns, prepend=frame_ns[:1] if previous_ns is None else np.int64(previous_ns))
    return FrameTiming(interval, interval > GAP_PERIODS * 1e9 / fps)


def timing_metrics(frame_ns: np.ndarray, fps: float) -> dict:
    frame_ns = np.asarray(frame_ns, dtype=np.int64).reshape(-1)
    timing = frame_timing(frame_ns, fps)
    frames = len(frame_ns)
    expected = int(round((frame_ns[-1] - frame_ns[0]) * fps / 1e9)) + 1 if frames else 0
    expected = max(expected, frames)  # a burst faster than the rate drops nothing
    intervals_ms = timing.interval_ns[1:] / 1e6
    # frames per second of the episode, each frame counted for one period: the loop's rate as the data shows it
    span_s = (frame_ns[-1] - frame_ns[0]) / 1e9 + 1 / fps if frames else 0.0
    return {
        "frames_stored": int(frames),
        "frames_expected": expected,
        "dropped_ticks": expected - frames,
        "achieved_hz": round(frames / span_s, 2) if span_s else None,
        "gaps": int(timing.after_gap.sum()),
        "max_interval_ms": float(intervals_ms.max()) if len(intervals_ms) else None,
        "interval_p99_ms": _percentile(intervals_ms, 99),
    }


@dataclass(frozen=True)
class TimingPolicy:
    """What to do with an episode that dropped too many control ticks: "mark" keeps it and records the verdict in its
    metadata; "rerecord" discards it and records it again (as ALOHA does below its rate floor)."""

    # Too many: more than this share of the episode's expected frames were not stored (dropped ticks).
    max_dropped_fraction: float = 0.05
    on_exceed: str = "mark"  # mark or rerecord

    def __post_init__(self):
        if not 0 <= self.max_dropped_fraction <= 1:
            raise ConfigError(f"timing.max_dropped_fraction must be within 0..1 (got {self.max_dropped_fraction})")
        if self.on_exceed not in ("mark", "rerecord"):
            raise ConfigError(f"timing.on_exceed must be 'mark' or 'rerecord' (got {self.on_exceed!r})")

    def within(self, timing: dict) -> bool:
        expected = timing["frames_expected"]
        return not expected or timing["dropped_ticks"] / expected <= self.max_dropped_fraction
