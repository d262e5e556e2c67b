"""A recording pushed to the Hugging Face Hub (teledex-push, and teledex-record's --dataset.push_to_hub=true).

The LeRobot dataset goes up as LeRobotDataset.push_to_hub sends it: every file but images/ (LeRobot's temporary
frames), a card from LeRobot's create_lerobot_dataset_card, and the codebase-version tag LeRobot loads a Hub dataset
by. Its card adds what TeleDex knows: the rig, its devices, the sync figures (teledex-sync-report's) and the licence.

The native layout goes to a second repository, <repo_id>_native (as <root>_native beside the root), not to a folder
of the first: LeRobot downloads the whole repository of a dataset it loads (snapshot_download, no file pattern), so a
native/ folder would double every `LeRobotDataset(repo_id)` and lerobot-train download. Each card names its twin.

Resumable: running the push again sends only what the Hub lacks. huggingface_hub asks the Hub what it holds, file by
file (preupload): a file committed with the same content is left out of the commit, and content stored by a push
that stopped before its commit is not sent again (the Hub's LFS batch answer; Xet's deduplication with hf_xet).
"""

import contextlib
import shlex
from collections.abc import Callable, Sequence
from pathlib import Path

from ..errors import TeledexError
from ..storage.errors import DatasetError
from ..storage.lerobot_meta import read_info, read_sidecar
from ..storage.native import NATIVE_FORMAT
from ..storage.repair import committed_episodes
from ..storage.sync_readers import read_sync
from ..sync.report import report

NATIVE_REPO_SUFFIX = "_native"
DEFAULT_LICENSE = "apache-2.0"  # LeRobot's push_to_hub default
TAG = "teledex"
NATIVE_IGNORE = ["*.partial/*"]  # an episode a killed recording left half-written (teledex-repair settles it)


class PushError(TeledexError):
    """The Hub could not be reached or refused the push; nothing local was changed, and the command says how to
    push later."""


def push_command(root: Path, repo_id: str, native_root: Path | None = None, private: bool | None = None,
                 tags: Sequence[str] = ()) -> str:
    """The one command that pushes a recording (again: it sends only what the Hub lacks)."""
    args = ["teledex-push", str(root), f"--repo-id={repo_id}"]
    if native_root is not None and Path(native_root) != _default_native_root(root):
        args.append(f"--native-root={native_root}")
    if private:
        args.append("--private")
    args += [f"--tag={tag}" for tag in tags]
    return shlex.join(args)


def _default_native_root(root: Path) -> Path:
    return Path(f"{root}_native")


def push(root: Path, repo_id: str, native_root: Path | None = None, *, private: bool | None = None,
         tags: Sequence[str] = (), license: str = DEFAULT_LICENSE,
         progress: Callable[[str], None] = print) -> list[str]:
    """Push the LeRobot dataset at root to repo_id and its native layout (when there is one) to
    repo_id + "_native"; returns their URLs. PushError when the Hub cannot be reached or refuses."""
    from huggingface_hub import HfApi, constants

    root = Path(root)
    given_native = native_root
    native_root = Path(native_root) if native_root is not None else _default_native_root(root)
    again = push_command(root, repo_id, given_native, private, tags)
    if not root.is_dir():
        raise DatasetError(f"{root} is not a folder: give the LeRobot dataset root (--dataset.root of the recording)")
    read_info(root)  # not a dataset, or a damaged one: one line, before anything is sent
    native_repo_id = repo_id + NATIVE_REPO_SUFFIX if native_root.is_dir() else None
    description = card_description(root, repo_id, native_repo_id)
    if constants.HF_HUB_OFFLINE:
        raise PushError(f"offline mode is on (HF_HUB_OFFLINE=1); unset it, and push later with `{again}`")
    api = HfApi()
    tags = [TAG, *tags]
    urls = []
    with _hub_errors(api.endpoint, repo_id, again):
        progress(f"Pushing {root} to {api.endpoint}/datasets/{repo_id} (LeRobot format)")
        urls.append(_push_lerobot(api, root, repo_id, private, tags, license, description))
        if native_repo_id is not None:
            progress(f"Pushing {native_root} to {api.endpoint}/datasets/{native_repo_id} (native layout)")
            urls.append(_push_native(api, native_root, native_repo_id, private, tags, license,
                                     description))
    return urls


def _push_lerobot(api, root: Path, repo_id: str, private: bool | None, tags: list[str], license: str,
                  description: str) -> str:
    """LeRobotDataset.push_to_hub's steps, with our card. Not called itself: it needs the dataset loaded (which
    caches an Arrow copy of every parquet file), and its card is checked at huggingface.co whatever HF_ENDPOINT says."""
    # the repository first: an unreachable Hub is said before LeRobot is imported (seconds: torch)
    url = api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
    from huggingface_hub.errors import RevisionNotFoundError
    from lerobot.datasets import CODEBASE_VERSION, create_lerobot_dataset_card
    from lerobot.datasets.io_utils import load_info

    api.upload_folder(repo_id=repo_id, folder_path=root, repo_type="dataset", ignore_patterns=["images/"],
                      commit_message="Upload a TeleDex recording (LeRobot format)")
    card = create_lerobot_dataset_card(tags=tags, dataset_info=load_info(root), license=license, repo_id=repo_id,
                                       dataset_description=description)
    api.upload_file(path_or_fileobj=str(card).encode(), path_in_repo="README.md", repo_id=repo_id,
                    repo_type="dataset", commit_message="Dataset card")
    with contextlib.suppress(RevisionNotFoundError):
        api.delete_tag(repo_id, tag=CODEBASE_VERSION, repo_type="dataset")
    api.create_tag(repo_id, tag=CODEBASE_VERSION, repo_type="dataset")
    return str(url)


def _push_native(api, native_root: Path, repo_id: str, private: bool | None, tags: list[str], license: str,
                 description: str) -> str:
    from huggingface_hub import DatasetCard, DatasetCardData

    url = api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
    api.upload_folder(repo_id=repo_id, folder_path=native_root, repo_type="dataset", ignore_patterns=NATIVE_IGNORE,
                      commit_message="Upload a TeleDex recording (native layout)")
    # viewer off: the Hub's viewer reads tables, and this layout is archives and videos per episode
    data = DatasetCardData(license=license, tags=tags, task_categories=["robotics"], viewer=False)
    card = DatasetCard(f"---\n{data.to_yaml()}\n---\n\n# {repo_id}\n\nThe native TeleDex layout ({NATIVE_FORMAT}): "
                       "a folder per recording session, in it a folder per episode holding telemetry.npz, "
                       "metadata.json, camera_info.json, videos/ and manifest.json (each file's size and SHA-256)."
                       f"\n\n{description}\n\n- **License:** {license}\n")
    api.upload_file(path_or_fileobj=str(card).encode(), path_in_repo="README.md", repo_id=repo_id,
                    repo_type="dataset", commit_message="Dataset card")
    return str(url)


def card_description(root: Path, repo_id: str, native_repo_id: str | None) -> str:
    """What TeleDex adds to the card, from the recording itself: the rig and devices from each episode's metadata
    (its sidecar), the sync figures as teledex-sync-report computes them."""
    info = read_info(root)
    sidecars = [read_sidecar(root, e["episode_uuid"]) for e in committed_episodes(root, complete=True)
                if e.get("episode_uuid")]
    metadata = [sidecar["metadata"] for sidecar in sidecars if sidecar is not None]
    hardware = [m.get("hardware", {}) for m in metadata]
    collection = [m.get("collection", {}) for m in metadata]
    cameras = [f"{name} {c['type']} {c['width']}x{c['height']} at {c['fps']} fps{' with depth' if c['depth'] else ''}"
               for m in metadata for name, c in m.get("cameras", {}).items()]
    tactile = [f"{c['tactile_dim']} taxels ({', '.join(c['tactile_sensors'])})" if c.get("tactile_dim") else "none"
               for c in collection]
    twin = (f"its native TeleDex layout is in [{native_repo_id}](../{native_repo_id})" if native_repo_id
            else "the native layout was not recorded (--native.enabled=false)")
    lines = [
        "### TeleDex recording",
        "",
        f"Recorded with teledex-record in two formats paired episode by episode (by episode uuid): the LeRobot "
        f"dataset [{repo_id}](../{repo_id}); {twin}.",
        "",
        "| | |", "|---|---|",
        f"| Rig (robot_type) | {info.get('robot_type')} |",
        f"| Preset | {_distinct(h.get('preset') for h in hardware)} |",
        f"| Arm | {_distinct(h.get('arm_type') for h in hardware)} |",
        f"| Hand | {_distinct(h.get('hand_type') for h in hardware)} |",
        f"| Degrees of freedom | {_distinct(h.get('total_dof') for h in hardware)} |",
        f"| Backend | {_distinct(h.get('backend') for h in hardware)} |",
        f"| Cameras | {_distinct(cameras)} |",
        f"| Tactile | {_distinct(tactile)} |",
        f"| Rate | {info['fps']} Hz |",
        f"| Episodes, frames | {info['total_episodes']}, {info['total_frames']} |",
    ]
    episodes = read_sync(root)
    if episodes:
        overall = report(episodes)["overall"]
        timing = overall["timing"]
        tolerances = _distinct(p.get("tolerance_ms") for p in overall["policies"])
        lines += [
            "", "#### Sync (as teledex-sync-report computes it)", "",
            "| frames | sync ok | mean sync error | spread p50 | spread p99 | tolerance | dropped ticks |",
            "|---|---|---|---|---|---|---|",
            f"| {overall['frames']} | {_percent(overall['sync_success_rate'])} | "
            f"{_ms(overall['mean_sync_error_ms'])} | {_ms(overall['max_diff_p50_ms'])} | "
            f"{_ms(overall['max_diff_p99_ms'])} | {tolerances} ms | {timing['dropped_ticks']} of "
            f"{timing['frames_expected']} |",
            "", "| source | mean lag | p99 lag | frames missing |", "|---|---|---|---|",
            *(f"| {source} | {_ms(lag['mean_ms'])} | {_ms(lag['p99_ms'])} | {lag['missing_frames']} |"
              for source, lag in overall["source_lag"].items()),
        ]
    return "\n".join(lines)


def _distinct(values) -> str:
    seen = list(dict.fromkeys(str(v) for v in values if v not in (None, "")))
    return ", ".join(seen) if seen else "none"


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f} ms"


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.2f}%"


@contextlib.contextmanager
def _hub_errors(endpoint: str, repo_id: str, again: str):
    """What the Hub or the network refused, as one line saying how to push later; anything else is a bug."""
    import httpx
    from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled

    try:
        yield
    except Exception as err:
        cause: BaseException | None = err
        while cause is not None and not isinstance(cause, (HfHubHTTPError, httpx.TransportError, ConnectionError)):
            cause = cause.__cause__ or cause.__context__  # huggingface_hub wraps an upload's error in RuntimeError
        if cause is None:
            raise
        status = cause.response.status_code if isinstance(cause, HfHubHTTPError) and cause.response else None
        if isinstance(cause, OfflineModeIsEnabled):
            reason = "offline mode is on (HF_HUB_OFFLINE=1); unset it"
        elif status == 401:
            reason = (f"{endpoint} did not accept the token (401); log in with `hf auth login` or set HF_TOKEN to a "
                      "token with write access")
        elif status == 403:
            reason = (f"no write access to {repo_id} on {endpoint} (403); push to your own namespace "
                      "(--repo-id=<user>/<name>) or ask for write access")
        elif status is not None:
            reason = f"{endpoint} answered {status}: {str(cause).splitlines()[0]}"
        else:
            reason = f"cannot reach {endpoint} ({str(cause) or type(cause).__name__})"
        raise PushError(f"{reason}; push later with `{again}` (run again, it sends only what the Hub lacks)") from err
