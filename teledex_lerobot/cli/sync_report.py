"""teledex-sync-report: the report's table 2 sync metrics for a dataset in either format, as a table, JSON, and a
PNG plot of max_diff over time per episode."""

import argparse
import json
from pathlib import Path

from ..storage.sync_readers import read_sync
from ..sync.report import format_table, report


def plot(episodes, path: Path, tolerance_ms: float | None) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(len(episodes), 1, figsize=(9, 1.8 * len(episodes) + 0.6), squeeze=False)
    for axis, episode in zip(axes[:, 0], episodes, strict=True):
        frames = range(len(episode.max_diff_ms))
        axis.plot(frames, episode.max_diff_ms, lw=0.8, label="max_diff")
        invalid = ~episode.valid
        axis.scatter([f for f, bad in zip(frames, invalid, strict=True) if bad], episode.max_diff_ms[invalid],
                     s=6, c="red", label="invalid")
        if tolerance_ms:
            axis.axhline(tolerance_ms, ls="--", c="gray", lw=0.8, label="tolerance")
        axis.set_ylabel(f"ep {episode.episode_index}\nms")
    axes[-1, 0].set_xlabel("frame")
    axes[0, 0].legend(loc="upper right", fontsize=7)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("path", type=Path, help="a LeRobot dataset root or a native TeleDex root")
    parser.add_argument("--json", type=Path, help="write the metrics here (default: <path>/sync_report.json)")
    parser.add_argument("--plot", type=Path, help="write the plot here (default: <path>/sync_report.png)")
    parser.add_argument("--tolerance-ms", type=float, default=100.0, help="drawn on the plot")
    args = parser.parse_args(argv)
    episodes = read_sync(args.path)
    result = report(episodes)
    print(format_table(result))
    json_path = args.json or args.path / "sync_report.json"
    json_path.write_text(json.dumps(result, indent=2))
    plot_path = args.plot or args.path / "sync_report.png"
    plot(episodes, plot_path, args.tolerance_ms)
    print(f"\nWrote {json_path} and {plot_path}")


if __name__ == "__main__":
    main()
