"""The README's pictures of each task, taken by the world camera while the scripted expert carries the object.

    .venv/bin/python -m teledex_lerobot.world.pictures docs/
"""

import argparse
from pathlib import Path

import cv2

from ..presets import load_preset
from ..rig import Rig
from .camera import WorldRenderer
from .episode import control_tick
from .expert import ScriptedExpert
from .world import World, WorldConfig

# (layout seed, the expert phase to photograph, seconds into it)
MOMENTS = {"cube_assembly": (1, "place", 0.6), "bottle_peg_in_hole": (1, "insert", 0.4)}


def take(task: str, preset: str = "piper_linkerhand_o6_single", size=(320, 240)):
    """RGB image of the task's world, mid-task."""
    rig = Rig.from_preset(load_preset(preset))
    world = World(rig, WorldConfig(task=task), {"top": "oblique"})
    seed, phase, into_s = MOMENTS[task]
    expert = ScriptedExpert(rig, task)
    world.reset(seed)
    expert.reset(world)
    fps = 25
    entered_s = None
    while entered_s is None or world.time_s < entered_s + into_s:
        control_tick(world, expert.act(world), fps)
        if expert.phase == phase and entered_s is None:
            entered_s = world.time_s
    renderer = WorldRenderer(world, "top", *size)
    image = renderer.render()
    renderer.close()
    return image


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for task in MOMENTS:
        path = args.out / f"world_{task}.png"
        cv2.imwrite(str(path), cv2.cvtColor(take(task), cv2.COLOR_RGB2BGR), [cv2.IMWRITE_PNG_COMPRESSION, 9])
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
