"""teledex-sync-report: sync and frame-timing figures of a dataset in either format, as a table, JSON, a dataset
summary plot (one point per episode: its size does not grow with the dataset) and, on request, one plot per episode
(spread and each source's lag over time, with the recorded tolerance and the frames that follow dropped ticks)."""

import argparse
import json
from pathlib import Path

import numpy as np

from ..storage.errors import DatasetError
from ..storage.sync_readers import read_sync
from ..sync.metrics import frame_timing, source_lags_ms
from ..sync.report import EpisodeSync, format_table, report
from .errors import run_command


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def summary_plot(result: dict, path: Path, title: str) -> None:
    plt = _pyplot()
    episodes = result["episodes"]
    x = np.array([int(e) for e in episodes])

    def column(getter) -> np.ndarray:
        return np.array([np.nan if getter(m) is None else getter(m) for m in episodes.values()], float)

    figure, axes = plt.subplots(4, 1, figsize=(10, 9), sharex=True)
    marker = "o" if len(x) <= 60 else None
    axes[0].plot(x, 100 * column(lambda m: m["sync_success_rate"]), marker=marker, ms=3, lw=0.8)
    axes[0].set_ylabel("sync ok %")
    axes[1].plot(x, column(lambda m: m["max_diff_p50_ms"]), lw=0.8, marker=marker, ms=3, label="p50")
    axes[1].plot(x, column(lambda m: m["max_diff_p99_ms"]), lw=0.8, marker=marker, ms=3, label="p99")
    axes[1].plot(x, column(lambda m: m["mean_sync_error_ms"]), lw=0.8, ls=":", label="mean over valid frames")
    tolerances = column(lambda m: m["policy"].get("tolerance_ms"))
    axes[1].step(x, tolerances, where="mid", c="gray", ls="--", lw=0.8, label="tolerance (as recorded)")
    axes[1].set_ylabel("spread ms")
    axes[1].legend(loc="upper right", fontsize=7)
    for source in result["overall"]["source_lag"]:
        axes[2].plot(x, column(lambda m, s=source: m["source_lag"][s]["mean_ms"]), lw=0.8, marker=marker, ms=3,
                     label=source)
    axes[2].set_ylabel("mean lag ms")
    axes[2].legend(loc="upper right", fontsize=7, ncol=4)
    axes[3].plot(x, 100 * column(lambda m: m["timing"]["frames_stored"] / max(m["timing"]["frames_expected"], 1)),
                 lw=0.8, marker=marker, ms=3)
    axes[3].set_ylabel("stored / expected %")
    axes[3].set_xlabel("episode")
    figure.suptitle(title, fontsize=10)
    figure.tight_layout()
    figure.savefig(path, dpi=80)
    plt.close(figure)


def episode_plot(episode: EpisodeSync, path: Path, title: str) -> None:
    plt = _pyplot()
    seconds = (episode.frame_ns - episode.frame_ns[0]) / 1e9
    gaps = frame_timing(episode.frame_ns, episode.fps).after_gap
    figure, (spread, lag) = plt.subplots(2, 1, figsize=(10, 5.5), sharex=True)
    spread.plot(seconds, episode.max_diff_ms, lw=0.8, label="spread (max_diff)")
    spread.scatter(seconds[~episode.valid], episode.max_diff_ms[~episode.valid], s=8, c="red", label="invalid")
    if episode.policy.get("tolerance_ms"):
        spread.axhline(episode.policy["tolerance_ms"], ls="--", c="gray", lw=0.8, label="tolerance (as recorded)")
    lags = source_lags_ms(episode.source_timestamps_ns)
    for i, source in enumerate(episode.source_names):
        lag.plot(seconds, lags[:, i], lw=0.8, label=source)
    for axis in (spread, lag):
        for t in seconds[gaps]:
            axis.axvline(t, c="orange", lw=0.6, alpha=0.7)
    spread.set_ylabel("ms")
    spread.legend(loc="upper right", fontsize=7)
    lag.set_ylabel("lag behind newest ms")
    lag.set_xlabel(f"s (orange: frames after dropped ticks, {int(gaps.sum())})")
    lag.legend(loc="upper right", fontsize=7, ncol=4)
    figure.suptitle(title, fontsize=10)
    figure.tight_layout()
    figure.savefig(path, dpi=80)
    plt.close(figure)


def _selected(spec: str, episodes: list[EpisodeSync]) -> list[EpisodeSync]:
    if spec == "all":
        return episodes
    wanted = {int(i) for i in spec.split(",")}
    chosen = [e for e in episodes if e.episode_index in wanted]
    missing = wanted - {e.episode_index for e in chosen}
    if missing:
        raise DatasetError(f"--episode-plots: no episode {sorted(missing)} in this dataset "
                           f"({len(episodes)} episodes, 0..{len(episodes) - 1})")
    return chosen


def sync_report(args) -> None:
    episodes = read_sync(args.path)
    result = report(episodes)
    print(format_table(result))
    name = args.path.resolve().name
    overall = result["overall"]
    title = (f"{name}: {len(episodes)} episodes, {overall['frames']} frames, sync ok "
             f"{100 * overall['sync_success_rate']:.2f}%, {overall['timing']['dropped_ticks']} dropped ticks")
    json_path = args.json or args.path / "sync_report.json"
    json_path.write_text(json.dumps(result, indent=2))
    plot_path = args.plot or args.path / "sync_report.png"
    summary_plot(result, plot_path, title)
    written = [json_path, plot_path]
    if args.episode_plots:
        folder = args.plot_dir or args.path / "sync_report_episodes"
        folder.mkdir(parents=True, exist_ok=True)
        for episode in _selected(args.episode_plots, episodes):
            m = result["episodes"][str(episode.episode_index)]
            path = folder / f"episode_{episode.episode_index:06d}.png"
            episode_plot(episode, path, f"{name} episode {episode.episode_index} ({episode.episode_uuid}): sync ok "
                                        f"{100 * m['sync_success_rate']:.2f}%, {m['timing']['dropped_ticks']} "
                                        "dropped ticks")
            written.append(path)
    print("\nWrote " + ", ".join(str(p) for p in written))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("path", type=Path, help="a LeRobot dataset root or a native TeleDex root")
    parser.add_argument("--json", type=Path, help="write the figures here (default: <path>/sync_report.json)")
    parser.add_argument("--plot", type=Path, help="the dataset summary plot (default: <path>/sync_report.png)")
    parser.add_argument("--episode-plots", help="episodes to plot one by one: 'all' or indices like 0,5,12")
    parser.add_argument("--plot-dir", type=Path, help="where episode plots go (default: <path>/sync_report_episodes)")
    run_command("teledex-sync-report", sync_report, parser.parse_args(argv))


if __name__ == "__main__":
    main()
