"""A training copy whose actions are where each hand should be: teledex-convert to-hand-pose.

The copy's action is each arm's hand pose beside its joints, then the hand's joints (world/hand_pose_actions.py);
its observation.state has each hand's measured pose after the joints. lerobot-eval acts in the same space with
--env.action_space=hand_pose. The copy keeps only what a policy reads (the action, the state, the environment
state, the cameras and LeRobot's own indices): on this CPU lerobot-train's data loading bounds its speed, and most of
it is the datasets library copying every column's features on every access (a copy with the policy's columns only
trained 1.6 times as fast, docs/world.md). The recording itself is not touched.

It is written with LeRobot's own dataset tools (modify_features, recompute_stats) in two passes, since a feature
cannot be replaced in place: the new columns beside the old under other names, then under the old names.
"""

import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
from lerobot.datasets.dataset_tools import modify_features, recompute_stats
from lerobot.datasets.lerobot_dataset import LeRobotDataset
from lerobot.utils.constants import ACTION, OBS_ENV_STATE, OBS_STATE

from ..storage.errors import DatasetError
from ..world.hand_pose_actions import hand_pose_actions_for

INDEX_COLUMNS = ("timestamp", "frame_index", "episode_index", "index", "task_index")
STAGED = "teledex_staged_"  # the new columns' names in the first pass


def _column(root: Path, key: str) -> np.ndarray:
    """A feature's values over the whole dataset, in the order modify_features adds columns (data files sorted)."""
    files = sorted((root / "data").glob("*/*.parquet"))
    return np.concatenate([np.stack(pd.read_parquet(path, columns=[key])[key].to_numpy()) for path in files])


def hand_pose_training_copy(source: Path, target: Path, repo_id: str, preset: str,
                            progress: Callable[[str], None] = print) -> None:
    """Writes the copy of the LeRobot dataset at source to target (a new folder, complete or absent)."""
    source, target = Path(source), Path(target)
    space = hand_pose_actions_for(preset)
    dataset = LeRobotDataset(repo_id, root=source)
    features = dataset.meta.features
    for key in (ACTION, OBS_STATE):
        names = features.get(key, {}).get("names")
        if names != space.joint_names:
            raise DatasetError(f"{source}: its {key} is not the joints of preset {preset!r} (expected "
                               f"{space.joint_names}, found {names}); give the preset it was recorded with (--preset)")
    progress(f"hand poses of {dataset.meta.total_frames} frames ...")
    joints_action, joints_state = _column(source, ACTION), _column(source, OBS_STATE)
    action = space.from_joints(joints_action).astype(np.float32)
    state = np.concatenate([joints_state, space.measured_poses(joints_state)], axis=-1).astype(np.float32)
    new = {ACTION: (action, {"dtype": "float32", "shape": [action.shape[1]], "names": space.action_names}),
           OBS_STATE: (state, {"dtype": "float32", "shape": [state.shape[1]],
                               "names": [*space.joint_names, *space.state_names]})}
    kept = {ACTION, OBS_STATE, OBS_ENV_STATE, *INDEX_COLUMNS, *dataset.meta.camera_keys}
    dropped = [key for key in features if key not in kept]
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=f".{target.name}.") as scratch:
        staged = modify_features(dataset, add_features={STAGED + key: value for key, value in new.items()},
                                 remove_features=[ACTION, OBS_STATE, *dropped], output_dir=Path(scratch) / "staged",
                                 repo_id=repo_id)
        progress(f"columns dropped from the copy: {dropped}")
        done = Path(scratch) / "done"
        copy = modify_features(staged, add_features=new, remove_features=[STAGED + key for key in new],
                               output_dir=done, repo_id=repo_id)
        recompute_stats(copy)
        if target.exists():  # empty: checked by the command
            target.rmdir()
        done.rename(target)
    progress(f"wrote {target}: {dataset.meta.total_episodes} episodes, action {len(space.action_names)} values "
             f"(each arm's hand pose and joints, the hands' joints), state {state.shape[1]}")
