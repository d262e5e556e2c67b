"""benchmarks/sim_loop.py --pixels on this CPU, a few steps of each stage (its figures mean nothing): teledex-record
with the preset's top and wrist cameras and no object poses, lerobot-train of image ACT and Diffusion, lerobot-eval
on the env's same cameras. The real run is a GPU job (--device cuda)."""

import importlib.util
import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TASK_DIR = Path("piper_linkerhand_o6_single") / "cube_assembly"
SMOKE = ["--pixels", "--device=cpu", "--tiny", "--tasks=cube_assembly", "--demos=2", "--episode-s=1.2", "--keep=all",
        "--image-size=64x48", "--train-steps=2", "--batch-size=2", "--eval-episodes=1"]


def sim_loop():
    spec = importlib.util.spec_from_file_location("sim_loop", REPO / "benchmarks" / "sim_loop.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_loop(out: Path, *flags: str) -> None:
    """sim_loop.main; a command that failed fails the test with the tail of every log."""
    try:
        sim_loop().main([*SMOKE, f"--out={out}", *flags])
    except SystemExit as failure:
        logs = "\n".join(f"== {log}\n{log.read_text()[-3000:]}" for log in sorted(out.rglob("*.log")))
        pytest.fail(f"{failure}\n{logs}")


@pytest.mark.slow
@pytest.mark.long
def test_the_pixels_loop_records_trains_act_and_diffusion_and_evaluates(tmp_path):
    run_loop(tmp_path, "--policy=act")
    run_loop(tmp_path, "--policy=diffusion", "--skip-collect")  # the same recording
    for policy in ("act", "diffusion"):
        work = tmp_path / TASK_DIR / policy
        config = json.loads((work / "train" / "checkpoints" / "000002" / "pretrained_model" / "config.json")
                            .read_text())
        assert config["type"] == policy
        assert set(config["input_features"]) == {"observation.state", "observation.images.top",
                                                 "observation.images.wrist"}  # no observation.environment_state
        assert config["input_features"]["observation.images.wrist"]["shape"] == [3, 48, 64]
        info = json.loads((work / "eval" / "seeds_1000" / "eval_info.json").read_text())
        assert info["overall"]["n_episodes"] == 1
        assert len(info["per_task"][0]["metrics"]["max_rewards"]) == 1
