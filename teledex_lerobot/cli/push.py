"""teledex-push: push a recording to the Hugging Face Hub, the LeRobot dataset to --repo-id and its native layout
(<root>_native) to <repo-id>_native, each with a dataset card naming the rig, its devices, the sync figures and the
licence. Stopped or failed halfway, run it again: it sends only what the Hub lacks. The Hub is HF_ENDPOINT
(huggingface.co by default), the token HF_TOKEN or `hf auth login`'s.
Exit codes: 0 pushed; 2 the Hub unreachable or refusing, or not a dataset (one line naming the fix); 130/143 stopped."""

import argparse
from pathlib import Path

from ..recording.hub import DEFAULT_LICENSE, NATIVE_REPO_SUFFIX, push  # LeRobot only once it pushes
from .errors import run_command


def push_recording(args) -> None:
    urls = push(args.dataset_root, args.repo_id, args.native_root, private=args.private or None,
                       tags=args.tag, license=args.license)
    print("Pushed: " + ", ".join(urls))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="teledex-push", description=__doc__)
    parser.add_argument("dataset_root", type=Path, help="the LeRobot dataset root (--dataset.root of the recording)")
    parser.add_argument("--repo-id", required=True, help="the Hub dataset, <user or org>/<name>; the native layout "
                                                         f"goes to <repo-id>{NATIVE_REPO_SUFFIX}")
    parser.add_argument("--native-root", type=Path, help="the native layout root (default: <dataset_root>_native)")
    parser.add_argument("--private", action="store_true", help="create the repositories private")
    parser.add_argument("--tag", action="append", default=[], help="a tag for the cards (repeat for more)")
    parser.add_argument("--license", default=DEFAULT_LICENSE,
                        help=f"the licence the cards give, a Hub licence id (default: {DEFAULT_LICENSE})")
    run_command("teledex-push", push_recording, parser.parse_args(argv))


if __name__ == "__main__":
    main()
