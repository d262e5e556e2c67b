"""The inferred hand layout on every public vendor hand URDF we have: frame angle, finger order, thumb, warnings.

    .venv/bin/python benchmarks/hand_layouts.py [--png-dir docs]

Hands: the dex-urdf fixture (tests/fixtures/dex_urdf_hands.json, reference frame: dex-retargeting's operator frame
its roots are drawn in), the vendor fixture (tests/fixtures/vendor_hands.json, reference: the per-hand axes a person
read off the URDF, tests/reference_assets.py VENDOR_HANDS) and, where their mirrors are here, the hands carried
only as mirrors (share-alike or unlicensed files: no reference, shown for their finger order and warnings). The
frame angle is the rotation between the inferred operator frame and the reference, in degrees.
"""

import argparse
import logging
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
import reference_assets as assets  # noqa: E402

from teledex_lerobot.cli.hand_inspect import draw  # noqa: E402
from teledex_lerobot.kinematics import KinematicModel  # noqa: E402
from teledex_lerobot.retargeting.hand_layout import build_layout, reference_pose  # noqa: E402

_AXES = {"x": 0, "y": 1, "z": 2}


def axis(spec: str) -> np.ndarray:
    """'+z', '-y', ... as a unit vector."""
    vector = np.zeros(3)
    vector[_AXES[spec[1]]] = 1.0 if spec[0] == "+" else -1.0
    return vector


def reference_rotation(hand: dict) -> np.ndarray:
    """operator coords = this @ coords of hand['frame'], from the person-read axes."""
    y, z = axis(hand["y"]), axis(hand["z"])
    return np.stack([np.cross(y, z), y, z])


def angle_deg(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.degrees(np.arccos(np.clip((np.trace(a @ b.T) - 1.0) / 2.0, -1.0, 1.0))))


def inferred_in(model: KinematicModel, layout, frame: str) -> np.ndarray:
    """operator coords = this @ coords of `frame`, as the layout infers it."""
    q = reference_pose(model)
    palm, link = model.frame_pose(q, layout.palm_link)[:3, :3], model.frame_pose(q, frame)[:3, :3]
    return layout.base_rotation @ palm.T @ link


def hands(folder: Path) -> list[tuple[str, Path, str, np.ndarray | None, str, list | None]]:
    """(name, urdf, side, reference rotation in `frame` or None, frame, expected tips) for every hand here."""
    rows = []
    dex = assets.write_fixture_hands(folder / "dex-urdf")
    for name in assets.dex_urdf_files(dex):
        if "glb" not in name and "bimanual" not in name and "panda" not in name:
            side = "left" if "left" in name else "right"
            model_root = assets.urdf_kinematics((dex / name).read_text())["links"][0]
            rows.append((f"dex-urdf/{name.split('/')[-1][:-5]}", dex / name, side, assets.DEX_TO_OURS, model_root,
                         None))
    if assets.dex_urdf_checkout() is not None:  # the GPL Shadow hand, only from a checkout
        for path in sorted((assets.dex_urdf_checkout() / "shadow_hand").glob("shadow_hand_*.urdf")):
            rows.append((f"dex-urdf/{path.stem}", path, "left" if "left" in path.stem else "right",
                         assets.DEX_TO_OURS, None, None))
    for name, path in assets.write_vendor_hands(folder).items():
        hand = assets.VENDOR_HANDS[name]
        rows.append((name, path, hand["side"], reference_rotation(hand), hand["frame"], hand["tips"]))
    for name, hand in assets.MIRROR_ONLY_HANDS.items():
        found = assets.vendor_urdf_text(hand["repository"], hand["path"])
        if found is not None:
            path = folder / f"{name}.urdf"
            path.write_text(found[0], encoding="utf-8")
            rows.append((name, path, hand["side"], None, None, None))
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--png-dir", type=Path, default=None, help="write each hand's inspection picture here")
    args = parser.parse_args(argv)
    logging.disable(logging.WARNING)  # the notes are printed in the table
    print(f"{'hand':34s}{'side':6s}{'angle':>7s}  {'fingers (tips)':60s}thumb  notes")
    with tempfile.TemporaryDirectory() as tmp:
        for name, path, side, reference, frame, tips in hands(Path(tmp)):
            try:
                model = KinematicModel.from_urdf(path)
                layout = build_layout(model, side)
            except Exception as error:  # a hand the inference refuses: its one-line reason
                print(f"{name:34s}{side:6s}{'-':>7s}  refused: {str(error)[:110]}")
                continue
            frame = frame or model.description.root_link
            angle = "-" if reference is None else f"{angle_deg(inferred_in(model, layout, frame), reference):.1f}"
            order = " ".join(f.split("#")[0] for f in layout.fingertip_frames)
            if tips is not None and list(layout.fingertip_frames) != tips:
                order += "  (expected " + " ".join(tips) + ")"
            notes = [note.split(";")[0].split(",")[0] for note in layout.notes
                     if "ends at its last knuckle" not in note]
            print(f"{name:34s}{side:6s}{angle:>7s}  {order[:58]:60s}{'yes' if layout.has_thumb else 'no':7s}"
                  f"{len(notes)}{': ' + ' | '.join(notes) if notes else ''}")
            if args.png_dir is not None:
                draw(model, layout, args.png_dir / f"hand_{name.split('/')[-1]}.png", f"{name} ({side})")


if __name__ == "__main__":
    main()
