"""Sync and frame-timing figures for recorded episodes, per episode and over a dataset, from either storage format.
Every figure comes from sync.metrics, the one definition the recorder and the benchmarks use too."""

from dataclasses import dataclass, field

import numpy as np

from .metrics import sync_metrics, timing_metrics


@dataclass
class EpisodeSync:
    episode_index: int
    valid: np.ndarray  # (T,) bool
    max_diff_ms: np.ndarray  # (T,)
    source_names: list[str]
    source_timestamps_ns: np.ndarray  # (T, S) int64, -1 where a source reported nothing
    frame_ns: np.ndarray  # (T,) int64, when each frame was checked
    fps: float
    policy: dict = field(default_factory=dict)  # the SyncPolicy the episode was recorded with
    episode_uuid: str | None = None


def episode_metrics(episode: EpisodeSync) -> dict:
    return {**sync_metrics(episode.valid, episode.max_diff_ms, episode.source_names, episode.source_timestamps_ns),
            "timing": timing_metrics(episode.frame_ns, episode.fps), "policy": episode.policy,
            "episode_uuid": episode.episode_uuid}


def report(episodes: list[EpisodeSync]) -> dict:
    if not episodes:
        raise ValueError("No episodes to report on")
    names = episodes[0].source_names
    per_episode = {str(e.episode_index): episode_metrics(e) for e in episodes}
    overall = sync_metrics(np.concatenate([e.valid for e in episodes]),
                           np.concatenate([e.max_diff_ms for e in episodes]), names,
                           np.concatenate([e.source_timestamps_ns for e in episodes]))
    timings = [m["timing"] for m in per_episode.values()]
    overall["timing"] = {key: sum(t[key] for t in timings)
                         for key in ("frames_stored", "frames_expected", "dropped_ticks", "gaps")}
    overall["policies"] = sorted({tuple(sorted(e.policy.items())) for e in episodes})
    overall["policies"] = [dict(p) for p in overall["policies"]]
    return {"overall": overall, "episodes": per_episode}


def _fmt(value, scale: float = 1.0) -> str:
    return "-" if value is None else f"{value * scale:.2f}"


def format_table(result: dict) -> str:
    header = (f"{'episode':>8} {'frames':>7} {'expected':>8} {'dropped':>7} {'sync ok %':>10} {'mean err ms':>12} "
              f"{'p50 ms':>8} {'p99 ms':>8}")
    rows = [header]
    for name, m in [*result["episodes"].items(), ("all", result["overall"])]:
        t = m["timing"]
        rows.append(f"{name:>8} {m['frames']:>7} {t['frames_expected']:>8} {t['dropped_ticks']:>7} "
                    f"{_fmt(m['sync_success_rate'], 100):>10} {_fmt(m['mean_sync_error_ms']):>12} "
                    f"{_fmt(m['max_diff_p50_ms']):>8} {_fmt(m['max_diff_p99_ms']):>8}")
    rows.append("")
    rows.append(f"{'source':>12} {'mean lag ms':>12} {'p99 lag ms':>11} {'max lag ms':>11} {'missing':>8}")
    for source, lag in result["overall"]["source_lag"].items():
        rows.append(f"{source:>12} {_fmt(lag['mean_ms']):>12} {_fmt(lag['p99_ms']):>11} {_fmt(lag['max_ms']):>11} "
                    f"{lag['missing_frames']:>8}")
    policies = ", ".join(f"tolerance {p.get('tolerance_ms')} ms, max age {p.get('max_age_ms')} ms"
                         for p in result["overall"]["policies"])
    rows.append(f"\nsync policy as recorded: {policies or 'unknown'}; mean err = mean max_diff over valid frames; "
                "p50/p99 over all frames")
    return "\n".join(rows)
