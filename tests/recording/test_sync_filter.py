"""Training on synchronised frames only (issue 32): teledex-convert only-synced writes a new LeRobotDataset of the
episodes with enough sync-valid frames, or with --split-at-invalid of the runs of valid frames, each its own episode;
it loads in LeRobotDataset, holds only what the filter keeps, and a refusal writes nothing and changes nothing.

One small recording (teledex-record's Recorder, the lockstep world and its expert, a camera: exactly 25 frames an
episode however loaded the machine; the fake rig in real time dropped ticks under load) made once per module; frames
are then made
sync-invalid as a stale source makes them: a source's capture time gone (-1) and sync_valid false, so every frame
still agrees with the recorded sync rule, which the filter judges every frame by again.
"""

import json
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from commands import command, run_main
from commands import run as run_command
from lerobot.configs.dataset import DatasetRecordConfig
from lerobot.datasets.lerobot_dataset import LeRobotDataset
from test_corrupted_inputs import snapshot

from lerobot_robot_teledex import TeledexConfig, TeledexWorldCameraConfig
from lerobot_teleoperator_teledex.world_expert import TeledexWorldExpertConfig
from teledex_lerobot.cli import convert
from teledex_lerobot.cli.errors import USER_ERROR_EXIT
from teledex_lerobot.recording.recorder import Recorder, TeledexRecordConfig
from teledex_lerobot.recording.sync_filter import valid_runs
from teledex_lerobot.storage.lerobot_meta import read_sidecar
from teledex_lerobot.storage.sync_readers import sync_from_lerobot
from teledex_lerobot.storage.teledex_columns import SYNC_VALID, source_column, source_names_in
from teledex_lerobot.world.world import LOCKSTEP, WorldConfig

FRAMES = 25  # each episode: 1 s at 25 fps
INVALID = {1: [*range(8, 11), 20], 2: range(0, 15)}  # episode -> the frames made invalid; episode 0 stays valid


def make_invalid(root: Path, invalid: dict) -> None:
    for path in sorted((root / "data").glob("*/*.parquet")):
        table = pq.read_table(path)
        episode, frame = (table.column(c).to_numpy() for c in ("episode_index", "frame_index"))
        mask = np.zeros(len(episode), dtype=bool)
        for index, frames in invalid.items():
            mask |= (episode == index) & np.isin(frame, list(frames))
        stale = source_column(source_names_in(table.column_names)[0])
        for column, value in ((SYNC_VALID, False), (stale, -1)):
            values = pc.if_else(pa.array(mask), pa.scalar(value, table.schema.field(column).type),
                                table.column(column))
            table = table.set_column(table.schema.get_field_index(column), column, values)
        pq.write_table(table, path)


@pytest.fixture(scope="module")
def recording(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("sync_filter") / "grasp"
    Recorder(TeledexRecordConfig(
        robot=TeledexConfig(backend="mujoco", preset_cameras=False, world=WorldConfig(seed=0, clock=LOCKSTEP),
                            cameras={"top": TeledexWorldCameraConfig(view="oblique", width=64, height=48, fps=25)}),
        teleop=TeledexWorldExpertConfig(), settle_s=-1,
        dataset=DatasetRecordConfig(repo_id="local/grasp", root=str(root), single_task="grasp", fps=25,
                                    episode_time_s=FRAMES / 25, reset_time_s=0, num_episodes=3, push_to_hub=False,
                                    video=True))).run()
    assert all(e.valid.all() and len(e.valid) == FRAMES for e in sync_from_lerobot(root))  # lockstep: all in sync
    make_invalid(root, INVALID)
    return root


def run(argv: list[str], capsys) -> tuple[int, str]:
    return run_main(convert.main, argv, capsys)


def loads(root: Path, repo_id: str) -> LeRobotDataset:
    dataset = LeRobotDataset(repo_id, root=root)
    item = dataset[len(dataset) - 1]
    assert item["observation.images.top"].shape == (3, 48, 64)
    indices = dataset.hf_dataset.with_format(None)["episode_index"]
    assert sorted(set(indices)) == list(range(dataset.meta.total_episodes))
    return dataset


def test_runs_of_valid_frames():
    assert valid_runs(np.array([1, 1, 0, 1, 1, 1, 0, 0, 1], bool), 2) == [(0, 2), (3, 6)]
    assert valid_runs(np.ones(4, bool), 5) == []


def test_by_episode_keeps_the_episodes_above_the_threshold(recording, tmp_path, capsys):
    before = snapshot(recording)
    code, out = run(["only-synced", str(recording), str(tmp_path / "kept"), "--repo-id", "local/kept",
                     "--min-valid", "0.8"], capsys)
    assert code == 0, out
    assert "episode 2: dropped, 40.0% of 25 frames sync-valid" in out
    dataset = loads(tmp_path / "kept", "local/kept")
    kept = sync_from_lerobot(tmp_path / "kept")
    assert [int(e.valid.sum()) for e in kept] == [FRAMES, FRAMES - 4]  # episodes 0 and 1, as recorded
    source = {e.episode_uuid: e for e in sync_from_lerobot(recording)}
    for new_index, episode in enumerate(kept):
        sidecar = read_sidecar(tmp_path / "kept", episode.episode_uuid)
        assert sidecar is not None and sidecar["metadata"]["lerobot"]["episode_index"] == new_index
        assert np.array_equal(episode.valid, source[episode.episode_uuid].valid)
    assert dataset.meta.total_frames == 2 * FRAMES
    assert snapshot(recording) == before  # the source only read


def test_by_frame_keeps_only_runs_of_valid_frames(recording, tmp_path, capsys):
    code, out = run(["only-synced", str(recording), str(tmp_path / "runs"), "--repo-id", "local/runs",
                     "--split-at-invalid", "--min-run", "5"], capsys)
    assert code == 0, out
    dataset = loads(tmp_path / "runs", "local/runs")
    episodes = sync_from_lerobot(tmp_path / "runs")
    # episode 0 whole; 1: 0..7 and 11..19 (20 invalid, 21..24 shorter than 5); 2: 15..24
    assert [len(e.valid) for e in episodes] == [25, 8, 9, 10]
    assert all(e.valid.all() for e in episodes)
    assert dataset.meta.total_frames == 52
    sidecars = [read_sidecar(tmp_path / "runs", e.episode_uuid) for e in episodes]
    assert [s["metadata"]["sync_filter"]["frames"] for s in sidecars] == [[0, 25], [0, 8], [11, 20], [15, 25]]
    assert "52 of 75 frames kept (23 dropped)" in out


def test_by_frame_keeps_depth_as_lerobot_s_depth_feature(tmp_path, capsys):
    """A run's depth is decoded in millimetres and encoded again with the source's quantization."""
    root = tmp_path / "world"
    camera = TeledexWorldCameraConfig(view="oblique", width=64, height=48, fps=25, use_depth=True)
    Recorder(TeledexRecordConfig(
        robot=TeledexConfig(backend="mujoco", preset_cameras=False, cameras={"top": camera},
                            world=WorldConfig(seed=0, clock=LOCKSTEP)),
        teleop=TeledexWorldExpertConfig(), settle_s=-1,
        dataset=DatasetRecordConfig(repo_id="local/rgbd", root=str(root), single_task="cube", fps=25,
                                    episode_time_s=0.8, reset_time_s=0, num_episodes=1, push_to_hub=False))).run()
    make_invalid(root, {0: [10]})
    code, out = run(["only-synced", str(root), str(tmp_path / "runs"), "--repo-id", "local/runs",
                     "--split-at-invalid", "--min-run", "5"], capsys)
    assert code == 0, out
    source, runs = (LeRobotDataset(r, root=p) for r, p in (("local/rgbd", root), ("local/runs", tmp_path / "runs")))
    assert runs.meta.depth_keys == source.meta.depth_keys == ["observation.images.top_depth"]
    assert runs.meta.total_episodes == 2 and len(runs) == len(source) - 1
    depth = "observation.images.top_depth"
    for new, old in ((0, 0), (len(runs) - 1, len(source) - 1)):  # the same depth, within LeRobot's quantization
        assert np.allclose(runs[new][depth].numpy(), source[old][depth].numpy(), rtol=0.02, atol=0.01)


@pytest.mark.parametrize("argv, says", [
    (["--min-valid", "1.0"], "the filter keeps nothing of its 3 episodes"),
    (["--split-at-invalid", "--min-run", "30"], "lower --min-run (now 30)"),
])
def test_a_filter_that_keeps_nothing_is_refused_and_writes_nothing(recording, tmp_path, capsys, argv, says):
    shutil.copytree(recording, tmp_path / "ds")
    make_invalid(tmp_path / "ds", {0: [0]})  # no episode wholly valid now
    before = snapshot(tmp_path)
    code, out = run(["only-synced", str(tmp_path / "ds"), str(tmp_path / "new"), "--repo-id", "local/new", *argv],
                    capsys)
    assert code == USER_ERROR_EXIT and says in out and len(out.strip().splitlines()) == 1, out
    assert snapshot(tmp_path) == before


def test_a_dataset_without_sync_columns_is_refused(recording, tmp_path, capsys):
    root = tmp_path / "plain"
    shutil.copytree(recording, root)
    for path in (root / "data").glob("*/*.parquet"):
        pq.write_table(pq.read_table(path).drop_columns([SYNC_VALID]), path)
    info = json.loads((root / "meta" / "info.json").read_text())
    del info["features"][SYNC_VALID]
    (root / "meta" / "info.json").write_text(json.dumps(info))
    before = snapshot(tmp_path)
    code, out = run(["only-synced", str(root), str(tmp_path / "new"), "--repo-id", "local/new"], capsys)
    assert code == USER_ERROR_EXIT and "not recorded with this version of teledex-record" in out, out
    assert snapshot(tmp_path) == before


@pytest.mark.slow
def test_lerobot_train_trains_on_the_synchronised_frames(recording, tmp_path, capsys):
    """What the filter writes is what lerobot-train reads as it is: two steps of ACT on the runs of valid frames."""
    code, out = run(["only-synced", str(recording), str(tmp_path / "runs"), "--repo-id", "local/runs",
                     "--split-at-invalid", "--min-run", "5"], capsys)
    assert code == 0, out
    out_dir = tmp_path / "train"
    run_command(command("lerobot-train", "--dataset.repo_id=local/runs", f"--dataset.root={tmp_path / 'runs'}",
                        "--policy.type=act", "--policy.device=cpu", "--policy.push_to_hub=false",
                        "--policy.pretrained_backbone_weights=null", "--steps=2", "--batch_size=2", "--save_freq=2",
                        "--num_workers=0", "--wandb.enable=false", f"--output_dir={out_dir}"), tmp_path)
    assert (out_dir / "checkpoints/000002/pretrained_model/model.safetensors").is_file()
