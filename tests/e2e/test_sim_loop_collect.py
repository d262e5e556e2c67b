"""benchmarks/sim_loop.py's collection in several teledex-record processes at once: each records its share of the
demonstrations on its own layouts, and lerobot-edit-dataset merges their datasets into the one lerobot-train reads;
--bf16 reaches lerobot-train only (lerobot-eval under autocast fails, LeRobot issue 2956)."""

import json
import time
from pathlib import Path

import pytest
from lerobot.datasets.lerobot_dataset import LeRobotDataset
from test_sim_loop_pixels import sim_loop

PRESET = "piper_linkerhand_o6_single"


@pytest.mark.slow
@pytest.mark.long
def test_two_workers_record_their_own_layouts_into_one_dataset(tmp_path):
    loop = sim_loop()
    smoke = loop.Loop(episode_s=0.4, keep="all")  # too short to succeed: every attempt kept
    wall_s, attempts = loop.collect("cube_assembly", PRESET, 3, 0.0, tmp_path, loop=smoke, workers=2)
    assert attempts == 3 and wall_s > 0
    seeds = sorted(json.loads(path.read_text())["world"]["seed"]
                   for path in tmp_path.glob("data_part*_native/*/episode_*/metadata.json"))
    assert seeds == [0, 1, loop.EVAL_SEED // 2]  # worker 0 records 2, worker 1 one, from its own first layout
    merged = LeRobotDataset("local/sim_cube_assembly", root=tmp_path / "data")
    parts = [LeRobotDataset(f"local/sim_cube_assembly_part{k}", root=tmp_path / f"data_part{k}") for k in (0, 1)]
    assert merged.meta.total_episodes == 3
    assert merged.meta.total_frames == sum(part.meta.total_frames for part in parts)
    assert set(merged.meta.features) == set(parts[0].meta.features)
    recorded = [frame for part in parts for frame in part.hf_dataset["action"]]  # parts in order, frames unchanged
    assert [list(frame) for frame in merged.hf_dataset["action"]] == [list(frame) for frame in recorded]


def test_too_many_demonstrations_per_worker_would_reach_the_evaluation_layouts(tmp_path):
    loop = sim_loop()
    with pytest.raises(SystemExit, match="give fewer --demos or --collect-workers"):
        loop.collect("cube_assembly", PRESET, 600, 0.0, tmp_path, workers=2)


def test_bf16_trains_in_autocast_and_evaluates_in_float32(tmp_path, monkeypatch):
    loop = sim_loop()
    bf16 = loop.Loop(bf16=True)
    assert "--policy.use_amp=true" in bf16.policy_flags("bottle_peg_in_hole")
    assert not any(flag.startswith("--policy.use_amp") for flag in loop.Loop().policy_flags("bottle_peg_in_hole"))
    commands = []

    def run(args, log, budget_s=None, environment=None):  # lerobot-eval stood in for: one success
        commands.append(args)
        out = Path(next(arg for arg in args if arg.startswith("--output_dir=")).split("=", 1)[1])
        out.mkdir(parents=True)
        (out / "eval_info.json").write_text(json.dumps({"per_task": [{"metrics": {"max_rewards": [1.0]}}]}))
        return 1.0

    monkeypatch.setattr(loop, "run", run)
    stages, _ = loop.evaluate("bottle_peg_in_hole", PRESET, 1, 1, tmp_path, 1000, bf16)
    assert stages["success"] == 1
    assert "--policy.use_amp=false" in commands[0]


def test_a_failed_worker_stops_the_others_and_names_its_log(tmp_path):
    loop = sim_loop()
    commands = [(["sleep", "120"], tmp_path / "record_part0.log"), (["false"], tmp_path / "record_part1.log")]
    started = time.monotonic()
    with pytest.raises(SystemExit, match=r"1 of 2 commands failed; see .*record_part1\.log$"):
        loop.run_together(commands, {})
    assert time.monotonic() - started < 60  # the sleeping worker was stopped, not waited for


def test_no_recorder_is_refused(capsys):
    with pytest.raises(SystemExit):
        sim_loop().main(["--collect-workers=0"])
    assert "--collect-workers 0: give 1 (one recorder) or more" in capsys.readouterr().err
