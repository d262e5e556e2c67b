"""Where published reference artefacts live on this machine (never committed): tests and benchmarks skip without them.

One folder, `$TELEDEX_REFERENCE_ASSETS` (default `~/.cache/teledex/reference`), holding plain checkouts of
- `dex-urdf/`: dexsuite/dex-urdf (the hand URDFs; meshes are not needed), checked at commit 93505db;
- `dex-retargeting/`: dexsuite/dex-retargeting (its teleop configs and its example MediaPipe recording
  `example/profiling/human_joint_right.pkl`, MIT), checked at commit 3f56141.
Clone both repositories by those names into the folder (`git clone <host>/dexsuite/dex-urdf`, ...).
"""

import os
from pathlib import Path

import numpy as np

ASSETS = Path(os.environ.get("TELEDEX_REFERENCE_ASSETS", Path.home() / ".cache" / "teledex" / "reference"))
DEX_URDF_HANDS = ASSETS / "dex-urdf" / "robots" / "hands"
DEX_RETARGETING = ASSETS / "dex-retargeting"
DEX_TELEOP_CONFIGS = DEX_RETARGETING / "src" / "dex_retargeting" / "configs" / "teleop"
HUMAN_RECORDING = DEX_RETARGETING / "example" / "profiling" / "human_joint_right.pkl"
MISSING = (f"reference assets not found under {ASSETS} (set TELEDEX_REFERENCE_ASSETS): clone dexsuite/dex-urdf and "
           "dexsuite/dex-retargeting there (see tests/reference_assets.py)")

# dex-retargeting's operator frame (x out of the palm, y from the little finger to the thumb on a right hand and
# the reverse on a left hand, z from the wrist to the middle finger) to ours (x toward the little finger on a right
# hand and toward the thumb on a left hand, y out of the palm, z the same): ours = DEX_TO_OURS @ theirs, both sides.
DEX_TO_OURS = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])


def available() -> bool:
    return DEX_URDF_HANDS.is_dir() and DEX_TELEOP_CONFIGS.is_dir() and HUMAN_RECORDING.is_file()


def human_recording() -> np.ndarray:
    """dex-retargeting's example recording: (621, 21, 3) MediaPipe keypoints of a right hand at 30 Hz, metres,
    wrist-centred, in dex-retargeting's operator frame. Stored as a pickled list of arrays (the file is read as
    published; it comes from a checkout the user made, not from a network source)."""
    return np.array(list(np.load(HUMAN_RECORDING, allow_pickle=True)), dtype=float)
