"""benchmarks/sim_loop.py --select-among: the newest K checkpoints are scored on the validation layouts (seeds from
VALIDATION_SEED, never the evaluation's) and the best is kept, the newer of a tie. lerobot-eval is stood in for by
the scores given per checkpoint (the real runs: docs/world.md)."""

from collections import Counter

from test_sim_loop_pixels import sim_loop


def test_the_best_of_the_newest_checkpoints_on_the_validation_layouts_is_kept(tmp_path, monkeypatch):
    loop = sim_loop()
    for step in (1000, 2000, 3000, 4000):
        (tmp_path / "train" / "checkpoints" / f"{step:06d}").mkdir(parents=True)
    (tmp_path / "train" / "checkpoints" / "last").mkdir()  # lerobot-train's link to the newest: not a checkpoint
    scores = {1000: 9, 2000: 5, 3000: 7, 4000: 7}
    asked = []

    def evaluate(task, preset, episodes, chunk, out, step, run_loop, first_seed, name):
        asked.append((step, first_seed, name, episodes))
        return Counter(success=scores[step], lifted=episodes - scores[step]), 2.0

    monkeypatch.setattr(loop, "evaluate", evaluate)
    best, successes, wall_s = loop.select_checkpoint("handover", "bimanual_piper_linkerhand_l10", 3, 10, 10, tmp_path)
    assert successes == {2000: 5, 3000: 7, 4000: 7}  # the newest 3: the 1000-step one's 9 is not looked at
    assert best == 4000 and wall_s == 6.0  # a tie goes to the newer
    assert {seed for _, seed, _, _ in asked} == {loop.VALIDATION_SEED} != {loop.EVAL_SEED}
    assert [name for _, _, name, _ in asked] == ["validate_002000", "validate_003000", "validate_004000"]
