"""Ours against dex-retargeting 0.5.0 at equal filtering, on real human motion and vendor hand URDFs.

dex-retargeting runs its official vector config unchanged (its URDF, links, scale and output filter) in its own
virtualenv (`bash benchmarks/setup_dex_retargeting.sh`); ours gets the same URDF with no per-hand settings except the
config's scale, and the same one-stage output filter at the config's low_pass_alpha. One evaluator
(benchmarks/retargeting.py) scores both: wrist-to-fingertip vectors against the human's times the config's scale.
Without the reference checkout (tests/reference_assets.py) or the dex-retargeting venv these tests skip and say why.

Figures (`.venv/bin/python benchmarks/retargeting.py`, dex-retargeting's example recording, 621 frames; pinches
here on the recording only: thumb and little finger, 20 frames, reachable on Ability only):
  hand      error mm ours/dex   jerk rad/frame³ ours/dex   pinch with the filter ours/dex
  allegro   47.11 / 44.36       0.0105 / 0.0124            - (no reachable pinch in the recording)
  ability   25.34 / 23.67       0.0152 / 0.0144            12/20 / 0/20
Our error is higher at equal filtering: dex-retargeting fits the fingertips alone (unfiltered, 0.5 mm above the
tips-only floor on Allegro), while our objective also weighs smoothness, a posture prior and the pinch coupling
(unfiltered 4.4 mm above the floor; dropping in turn the smoothness term, the posture prior and the coupling takes
2.5, 1.0 and 1.2 mm off, but leaves it jerkier than dex-retargeting's unfiltered output). Strict xfails, so a
fix shows up.
"""

import importlib.util
import logging
from pathlib import Path

import pytest
import yaml

import reference_assets

REPO = Path(__file__).resolve().parents[1]
HANDS = ("allegro", "ability")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not reference_assets.available(), reason=reference_assets.MISSING),
]


def _benchmark():
    spec = importlib.util.spec_from_file_location("retargeting_benchmark", REPO / "benchmarks" / "retargeting.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def compared() -> dict:
    bench = _benchmark()
    if not bench.DEX_PYTHON.is_file():
        pytest.skip(f"no dex-retargeting venv at {bench.DEX_PYTHON}: run `bash benchmarks/setup_dex_retargeting.sh`")
    from teledex_lerobot.kinematics import KinematicModel

    logging.getLogger("teledex_lerobot").setLevel(logging.ERROR)
    keypoints_dex = reference_assets.human_recording()
    keypoints = keypoints_dex @ reference_assets.DEX_TO_OURS.T
    results = {}
    for hand in HANDS:
        config_path = reference_assets.DEX_TELEOP_CONFIGS / f"{hand}_hand_right.yml"
        config = yaml.safe_load(config_path.read_text())["retargeting"]
        urdf = reference_assets.DEX_URDF_HANDS / config["urdf_path"]
        model = KinematicModel.from_urdf(urdf)
        evaluator = bench.Evaluator(model, config, keypoints_dex)
        alpha = float(config.get("low_pass_alpha", 1.0))
        ours = bench.run_ours(urdf, keypoints, {"hand_scale": evaluator.scale, "low_pass_alpha": alpha,
                                                "low_pass_order": 1}).joints
        dex = bench.dex_retargeting(str(bench.DEX_PYTHON), reference_assets,
                                    {"vector": (config_path, None, 1)}, keypoints_dex)["vector"]
        dex_joints = bench.actuated(model, dex.names, dex.joints)
        reachable = bench.reachable_pairs(evaluator)
        results[hand] = {
            name: {"error_mm": evaluator.error_mm(joints), "jerk": bench.jerk(joints),
                   "pinch": bench.pinches(evaluator, keypoints_dex, joints, reachable)}
            for name, joints in (("ours", ours), ("dex", dex_joints))}
    return results


@pytest.mark.parametrize("hand", ["allegro", pytest.param("ability", marks=pytest.mark.xfail(
    strict=True, reason="0.0152 vs 0.0144: resetting barely-determined directions (for recovery) adds jerk"))])
def test_jerk_at_equal_filtering_is_at_most_dex_retargetings(compared, hand):
    ours, dex = compared[hand]["ours"], compared[hand]["dex"]
    assert ours["jerk"] <= dex["jerk"], f"{hand}: jerk {ours['jerk']:.4f} > dex-retargeting's {dex['jerk']:.4f}"


@pytest.mark.parametrize("hand", [pytest.param(h, marks=pytest.mark.xfail(strict=True, reason=reason))
                                  for h, reason in (("allegro", "47.11 vs 44.36 mm"), ("ability", "25.34 vs 23.67 mm"))])
def test_tip_error_at_equal_filtering_is_at_most_dex_retargetings(compared, hand):
    ours, dex = compared[hand]["ours"], compared[hand]["dex"]
    assert ours["error_mm"] <= dex["error_mm"], f"{hand}: {ours['error_mm']:.2f} mm > {dex['error_mm']:.2f} mm"


@pytest.mark.xfail(strict=True, reason="12 of 20 pinch frames with dex-retargeting's filter on")
def test_pinches_hold_with_the_filter_on(compared):
    """Ability: the recording's thumb-little-finger pinches (human tips < 10 mm) -> robot pair < 15 mm in >= 95 %."""
    successes, attempts = compared["ability"]["ours"]["pinch"]
    assert attempts > 0 and successes >= 0.95 * attempts, f"{successes}/{attempts}"
