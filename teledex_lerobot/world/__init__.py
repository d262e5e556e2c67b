"""The MuJoCo world: MJCF from our URDFs, the report's tasks, cameras, world-backed joint devices, scripted expert."""

import os

# Headless rendering (EGL on CPU). MuJoCo picks its GL backend when it is first imported, and every module of this
# package imports it: the package sets it before any of them runs.
os.environ.setdefault("MUJOCO_GL", "egl")
