"""teledex-repair and meta/tasks.parquet on datasets nobody killed: a task list in another order than first use (as
LeRobot's editing tools can leave it) is not touched; one lacking a task that an episode uses stops the repair with
the task named. (Kills inside LeRobot's write of the file: tests/e2e/test_crash_pairs.py.)"""

from pathlib import Path

import pandas as pd
import pytest
from lerobot.configs.dataset import DatasetRecordConfig

from lerobot_robot_teledex import TeledexConfig
from lerobot_teleoperator_teledex import TeledexReplayConfig
from teledex_lerobot.recording.recorder import Recorder, TeledexRecordConfig
from teledex_lerobot.storage.errors import DatasetError
from teledex_lerobot.storage.repair import repair_lerobot


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("tasks") / "ds"
    Recorder(TeledexRecordConfig(
        robot=TeledexConfig(backend="fake"), teleop=TeledexReplayConfig(),
        dataset=DatasetRecordConfig(repo_id="local/tasks", root=str(root), single_task="grasp", fps=25,
                                    episode_time_s=0.4, reset_time_s=0, num_episodes=1, push_to_hub=False))).run()
    return root


def write_tasks(root: Path, tasks: list[str]) -> Path:
    path = root / "meta" / "tasks.parquet"
    pd.DataFrame({"task_index": range(len(tasks))}, index=pd.Index(tasks, name="task")).to_parquet(path)
    return path


def test_a_task_list_in_another_order_is_left_alone(recorded):
    path = write_tasks(recorded, ["wave", "grasp"])
    before = path.read_bytes()
    actions, _ = repair_lerobot(recorded)
    assert path.read_bytes() == before and not any("tasks.parquet" in a for a in actions)


def test_a_task_list_without_a_used_task_stops_the_repair(recorded):
    write_tasks(recorded, ["wave"])
    with pytest.raises(DatasetError, match=r"lacks the tasks \['grasp'\].*manual repair"):
        repair_lerobot(recorded)
