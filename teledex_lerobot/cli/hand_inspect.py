"""teledex-hand-inspect: what the retargeter makes of a hand URDF, in one look.

    teledex-hand-inspect HAND.urdf [--side auto|right|left] [--png HAND_layout.png]

Prints the inferred fingers (thumb first, then across the palm), each finger's keypoint frames, where its fingertip
is, the palm link, the wrist point and the base axes (the operator wrist frame: +z toward the middle-finger MCP, +y
out of the palm, +x toward the little finger on a right hand, toward the thumb on a left hand), plus anything the
inference was unsure of and any joint limits that fell back to defaults. Writes a picture of the hand at its zero
pose in that frame (three orthogonal views, the wrist point at the origin) with the axes drawn, fingers coloured and
tips labelled. Built-in hand names (e.g. linkerhand_l20) work too.
"""

import argparse
import logging
from pathlib import Path

import numpy as np

from ..geometry.sides import SIDES
from ..kinematics import KinematicModel
from ..kinematics.catalogue import resolve_urdf
from ..retargeting.hand_layout import HandednessError, HandKeypointLayout, build_layout, reference_pose
from ..retargeting.keypoint_kinematics import KeypointKinematics
from .errors import hand_model_errors, run_command, setup_logging

_FINGER_COLOURS = {"thumb": "tab:red", "index": "tab:orange", "middle": "tab:green", "ring": "tab:blue",
                   "pinky": "tab:purple"}


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("urdf", help="a hand URDF file, or a built-in hand name")
    parser.add_argument("--side", default="auto", choices=("auto", *SIDES),
                        help="auto: the side whose frame has the fingers flexing toward the palm (+y)")
    parser.add_argument("--png", type=Path, default=None, help="picture path (default: <urdf name>_layout.png)")
    return parser.parse_args(argv)


def describe(model: KinematicModel, layout: HandKeypointLayout) -> str:
    tips = KeypointKinematics(model, layout.fingertip_frames, layout).positions(reference_pose(model))
    x, y, z = layout.base_rotation
    lines = [f"{model.name}: {len(model.joint_names)} actuated joints, fingers from {layout.source}",
             f"palm link {layout.palm_link}; wrist point {_mm(layout.wrist_offset_m)} mm in it",
             "base axes in palm-link coordinates (operator frame):",
             f"  x {_vector(x)}  (across the palm)", f"  y {_vector(y)}  (out of the palm)",
             f"  z {_vector(z)}  (wrist toward the middle finger)",
             f"{'finger':8s}{'keypoint frames (base to tip)':60s}tip in operator frame (mm)"]
    for finger, tip in zip(layout.fingers, tips):
        lines.append(f"{finger.name:8s}{' > '.join(finger.frames):60s}{_mm(tip)}")
    for frame, offset in layout.frame_offsets_m.items():
        lines.append(f"{frame} = {frame.removesuffix('#tip')} origin + {_mm(offset)} mm (in that link's frame)")
    if model.description.defaulted_limits:
        lines.append(f"default limits used for: {', '.join(model.description.defaulted_limits)}")
    lines += [f"note: {note}" for note in layout.notes]
    return "\n".join(lines)


def draw(model: KinematicModel, layout: HandKeypointLayout, path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    q = reference_pose(model)
    palm = np.linalg.inv(model.frame_pose(q, layout.palm_link))

    def operator(points_root: np.ndarray) -> np.ndarray:
        in_palm = points_root @ palm[:3, :3].T + palm[:3, 3]
        return (in_palm - layout.wrist_offset_m) @ layout.base_rotation.T

    segments = operator(model.link_segments(q).reshape(-1, 3)).reshape(-1, 2, 3)
    keypoints = KeypointKinematics(model, layout.keypoint_frames, layout).positions(q)
    size = max(np.abs(keypoints).max(), 0.05)
    figure, panels = plt.subplots(1, 3, figsize=(15, 5.8))
    views = (((0, 2), "front: x across, z along the fingers (seen from -y, the back of the hand)"),
             ((1, 2), "side: y out of the palm, z along the fingers"),
             ((0, 1), "from the fingertips: x across, y out of the palm"))
    for axes, ((h, v), view) in zip(panels, views):
        for start, end in segments:
            axes.plot([start[h], end[h]], [start[v], end[v]], color="0.7", linewidth=1)
        row = 0
        for finger in layout.fingers:
            points = keypoints[row:row + len(finger.frames)]
            row += len(finger.frames)
            colour = _FINGER_COLOURS[finger.name]
            axes.plot(points[:, h], points[:, v], "o-", color=colour, label=finger.name, markersize=4)
            axes.annotate(finger.name, (points[-1, h], points[-1, v]), color=colour, fontsize=8,
                          xytext=(3, 3), textcoords="offset points")
        for index, colour in zip(range(3), ("red", "green", "blue")):
            axis = np.eye(3)[index] * 0.35 * size
            if abs(axis[h]) + abs(axis[v]) > 0:
                axes.annotate("", (axis[h], axis[v]), (0, 0), arrowprops={"color": colour, "width": 2})
                axes.text(axis[h] * 1.12, axis[v] * 1.12, "xyz"[index], color=colour, fontweight="bold")
        axes.plot(0, 0, "ko", markersize=5)
        axes.set(xlim=(-1.1 * size, 1.1 * size), ylim=(-0.5 * size if v == 2 else -1.1 * size, 1.2 * size),
                 xlabel="xyz"[h] + " (m)", ylabel="xyz"[v] + " (m)", title=view, aspect="equal")
        axes.title.set_fontsize(9)
        axes.grid(alpha=0.3)
    figure.legend(*panels[0].get_legend_handles_labels(), loc="lower center", ncol=5)
    figure.suptitle(title)
    figure.savefig(path, dpi=110)
    plt.close(figure)


def _hand_model(urdf: str, side: str) -> KinematicModel:
    """The model; a missing or bad URDF is one line."""
    with hand_model_errors():
        return KinematicModel.from_urdf(resolve_urdf(urdf, side))


def _hand(urdf: str, side: str) -> tuple[KinematicModel, HandKeypointLayout]:
    """The model and its inferred layout; a missing or bad URDF (or one that is no hand) is one line."""
    model = _hand_model(urdf, side)
    with hand_model_errors():
        return model, build_layout(model, side)


def inspect_hand(args: argparse.Namespace) -> None:
    setup_logging(logging.WARNING)
    side = args.side
    if side == "auto":  # read it as a right hand, quietly: a left one is refused saying so (HandednessError), or,
        # where its thumb cannot be told from its fingers, its fingers flex to -y
        model = _hand_model(args.urdf, "right")
        logging.disable(logging.WARNING)
        try:
            notes = build_layout(model, "right").notes
            side = "left" if any("flex toward the back" in note for note in notes) else "right"
        except HandednessError as err:
            side = err.side
        finally:
            logging.disable(logging.NOTSET)
    model, layout = _hand(args.urdf, side)
    print(f"side: {side}{' (from the geometry)' if args.side == 'auto' else ''}")
    print(describe(model, layout))
    output = args.png or Path(f"{Path(args.urdf).stem}_layout.png")
    draw(model, layout, output, f"{model.name} ({side}) at zero pose, operator wrist frame")
    print(f"picture written to {output}")


def main(argv=None) -> None:
    run_command("teledex-hand-inspect", inspect_hand, parse_args(argv))


def _mm(vector) -> str:
    return "[" + ", ".join(f"{1e3 * v:6.1f}" for v in vector) + "]"


def _vector(vector) -> str:
    return "[" + ", ".join(f"{v:6.3f}" for v in vector) + "]"


if __name__ == "__main__":
    main()
