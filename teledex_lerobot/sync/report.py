"""The report's table 2 sync metrics for recorded episodes, from either storage format.

Per episode and overall: sync success rate (valid frames / frames), mean sync error (mean max_diff over the valid
frames, the report's definition), p50/p99 max_diff over all frames, and each source's lag (how far its timestamp is
behind the newest source of the same frame; mean and p99).
"""

from dataclasses import dataclass

import numpy as np


@dataclass
class EpisodeSync:
    episode_index: int
    valid: np.ndarray  # (T,) bool
    max_diff_ms: np.ndarray  # (T,)
    source_names: list[str]
    source_timestamps_ns: np.ndarray  # (T, S) int64, -1 where a source reported nothing


def sync_metrics(valid: np.ndarray, max_diff_ms: np.ndarray, source_names: list[str],
                 source_timestamps_ns: np.ndarray) -> dict:
    frames = len(valid)
    stamps = np.where(source_timestamps_ns >= 0, source_timestamps_ns, np.nan).astype(float)
    lag_ms = (np.nanmax(stamps, axis=1, keepdims=True) - stamps) / 1e6 if frames else stamps
    lags = {}
    for i, source in enumerate(source_names):
        column = lag_ms[:, i][~np.isnan(lag_ms[:, i])] if frames else np.array([])
        lags[source] = {"mean_ms": float(column.mean()) if len(column) else None,
                        "p99_ms": float(np.percentile(column, 99)) if len(column) else None,
                        "missing_frames": int(frames - len(column))}
    return {
        "frames": int(frames),
        "valid_frames": int(valid.sum()),
        "sync_success_rate": float(valid.mean()) if frames else None,
        "mean_sync_error_ms": float(max_diff_ms[valid].mean()) if valid.any() else None,
        "max_diff_p50_ms": float(np.percentile(max_diff_ms, 50)) if frames else None,
        "max_diff_p99_ms": float(np.percentile(max_diff_ms, 99)) if frames else None,
        "source_lag": lags,
    }


def report(episodes: list[EpisodeSync]) -> dict:
    if not episodes:
        raise ValueError("No episodes to report on")
    names = episodes[0].source_names
    per_episode = {str(e.episode_index): sync_metrics(e.valid, e.max_diff_ms, e.source_names, e.source_timestamps_ns)
                   for e in episodes}
    overall = sync_metrics(np.concatenate([e.valid for e in episodes]),
                           np.concatenate([e.max_diff_ms for e in episodes]), names,
                           np.concatenate([e.source_timestamps_ns for e in episodes]))
    return {"overall": overall, "episodes": per_episode}


def format_table(result: dict) -> str:
    header = f"{'episode':>8} {'frames':>7} {'sync ok %':>10} {'mean err ms':>12} {'p50 ms':>8} {'p99 ms':>8}"
    rows = [header]
    for name, m in [*result["episodes"].items(), ("all", result["overall"])]:
        rate = "-" if m["sync_success_rate"] is None else f"{100 * m['sync_success_rate']:.2f}"
        err = "-" if m["mean_sync_error_ms"] is None else f"{m['mean_sync_error_ms']:.2f}"
        rows.append(f"{name:>8} {m['frames']:>7} {rate:>10} {err:>12} {m['max_diff_p50_ms']:>8.2f} "
                    f"{m['max_diff_p99_ms']:>8.2f}")
    rows.append("")
    rows.append(f"{'source':>12} {'mean lag ms':>12} {'p99 lag ms':>11} {'missing':>8}")
    for source, lag in result["overall"]["source_lag"].items():
        mean = "-" if lag["mean_ms"] is None else f"{lag['mean_ms']:.2f}"
        p99 = "-" if lag["p99_ms"] is None else f"{lag['p99_ms']:.2f}"
        rows.append(f"{source:>12} {mean:>12} {p99:>11} {lag['missing_frames']:>8}")
    return "\n".join(rows)
