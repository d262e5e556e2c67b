"""Where the data files this package reads live (the repository's configs/ folder)."""

import os
from pathlib import Path

# The package is installed editable from the repository, so configs/ sits beside it. TELEDEX_CONFIGS_DIR overrides
# this for installs that keep the data elsewhere.
CONFIGS_DIR = Path(os.environ.get("TELEDEX_CONFIGS_DIR", Path(__file__).resolve().parents[1] / "configs"))
URDF_DIR = CONFIGS_DIR / "urdf"
PRESETS_DIR = CONFIGS_DIR / "presets"
JOINT_MAPS_DIR = CONFIGS_DIR / "joint_maps"
HANDS_DIR = CONFIGS_DIR / "hands"  # one descriptor per hand (kinematics/hands.py)
STREAMS_DIR = CONFIGS_DIR / "streams"
