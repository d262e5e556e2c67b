"""Keep every test offline and away from the user's LeRobot home (calibration files, datasets)."""

import os
import tempfile

# Must be set before lerobot is imported: its constants read these at import time.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.setdefault("HF_LEROBOT_HOME", tempfile.mkdtemp(prefix="teledex-tests-lerobot-home-"))
