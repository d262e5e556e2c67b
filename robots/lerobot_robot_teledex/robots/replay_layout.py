"""lerobot-replay in the MuJoCo world: the episode's own layout, and whether the replay succeeded.

LeRobot's replay command builds the robot from its --robot.* flags and then sends the episode's actions; it never
tells the robot which episode that is. A world robot started by lerobot-replay therefore reads the episode named by
the same command line (--dataset.root or --dataset.repo_id, --dataset.episode), finds the layout seed teledex-record
kept for it (the episode's TeleDex sidecar), and lays that scene out; at the end it prints the replay's outcome.
Only lerobot-replay's own command line is read, and nothing else is changed by it.
"""

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from teledex_lerobot.errors import DataError
from teledex_lerobot.storage.repair import committed_episodes
from teledex_lerobot.storage.teledex_columns import SIDECAR_DIR

REPLAY_COMMAND = "lerobot-replay"


@dataclass(frozen=True)
class ReplayedEpisode:
    root: Path
    index: int
    seed: int


def _flag(argv: list[str], name: str) -> str | None:
    prefix = f"--{name}="
    return next((arg[len(prefix):] for arg in argv if arg.startswith(prefix)), None)


def replayed_episode(argv: list[str] | None = None) -> ReplayedEpisode | None:
    """The episode this process replays, when it is lerobot-replay of a teledex-record world recording; else None.
    Raises DataError naming the flag when the dataset has no such episode."""
    argv = sys.argv if argv is None else argv
    if not argv or Path(argv[0]).name != REPLAY_COMMAND:
        return None
    episode, root_flag, repo_id = (_flag(argv, "dataset.episode"), _flag(argv, "dataset.root"),
                                   _flag(argv, "dataset.repo_id"))
    if episode is None:
        return None
    if root_flag is not None:
        root = Path(root_flag)
    elif repo_id is not None:
        root = Path(os.environ.get("HF_LEROBOT_HOME", Path.home() / ".cache" / "huggingface" / "lerobot")) / repo_id
    else:
        return None
    index = int(episode)
    match = [e for e in committed_episodes(root) if int(e["episode_index"]) == index]
    if not match:
        raise DataError(f"--dataset.episode={index}: {root} has no such episode; give one of its episodes' indices")
    sidecar = root / SIDECAR_DIR / f"{match[0]['episode_uuid']}.json"
    world = json.loads(sidecar.read_text())["metadata"].get("world") if sidecar.is_file() else None
    if not world:
        return None  # not recorded in the world by teledex-record: LeRobot replays it as usual
    return ReplayedEpisode(root, index, int(world["seed"]))
