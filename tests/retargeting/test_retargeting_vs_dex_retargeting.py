"""Ours against dex-retargeting 0.5.0 at equal filtering, on human motion and vendor hand URDFs.

dex-retargeting (a test extra, from PyPI) runs its official vector config unchanged (its URDF, links, scale and
output filter); ours gets the same URDF with no per-hand settings except the config's scale, and the same one-stage
output filter at the config's low_pass_alpha. One evaluator (benchmarks/retargeting.py) scores both: wrist-to-
fingertip vectors against the human's times the config's scale; it must read each config as dex-retargeting does.

Two motions, each scored on both hands:
- everywhere: our synthetic pinch stream (configs/streams/pinches.npz at 30 Hz, every finger pinching the thumb in
  turn: generated, not recorded), on the dex-urdf hands rebuilt from tests/fixtures/dex_urdf_hands.json;
- where the reference checkouts are here (tests/reference_assets.py): dex-retargeting's example recording of a real
  hand (621 frames), on the checkout's URDFs. No fixture replaces that recording (a whole published file).
Figures (`.venv/bin/python benchmarks/retargeting.py` for the recording; pinches: thumb and little finger on the
recording, 20 frames, reachable on Ability only; every finger on the stream):
  motion     hand      error mm ours/dex   jerk rad/frame³ ours/dex   pinch with the filter ours/dex   ours unfiltered
  recording  allegro   46.57 / 44.36       0.0100 / 0.0124            - (no reachable pinch)            41.73 mm
  recording  ability   26.10 / 23.67       0.0131 / 0.0144            12/20 / 0/20                      23.15 mm
  stream     allegro   39.83 / 34.73       0.0023 / 0.0017            95/113 / 0/113                    39.47 mm
  stream     ability   18.68 / 14.24       0.0022 / 0.0017            137/149 / 31/149                  17.94 mm
At each system's own default filtering (ours: none) ours is the more accurate on the recording of a real hand, and
the less accurate on the synthetic stream, whose pinches our coupling closes past the human's scaled tips (the
tip error counts a pinch that lands as error). At equal filtering our error is higher: dex-retargeting fits the
fingertips alone, while our objective also weighs the other keypoints, smoothness, a posture prior and the pinch
coupling. On the smooth synthetic stream dex-retargeting's warm-started solver is the smoother of the two. Strict
xfails, so a fix shows up.
"""

import importlib.util
import logging
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import reference_assets

from teledex_lerobot.kinematics import KinematicModel
from teledex_lerobot.operator.stream import OperatorStream
from teledex_lerobot.paths import STREAMS_DIR

REPO = Path(__file__).resolve().parents[2]
HANDS = ("allegro", "ability")
STREAM, RECORDING = "stream", "recording"


def _benchmark():
    spec = importlib.util.spec_from_file_location("retargeting_benchmark", REPO / "benchmarks" / "retargeting.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BENCH = _benchmark()


def _config_path(hand: str) -> Path:
    return reference_assets.dex_teleop_configs() / f"{hand}_hand_right.yml"


def _filter_alpha(config: dict) -> float:
    """dex-retargeting's output filter: low_pass_alpha, 1 (no filtering) when absent."""
    return float(config.get("low_pass_alpha", 1.0))


@pytest.fixture(scope="module")
def fixture_hands(tmp_path_factory) -> Path:
    return reference_assets.write_fixture_hands(tmp_path_factory.mktemp("dex-urdf-fixture"))


@pytest.fixture(scope="module")
def compared(fixture_hands) -> dict:
    """{motion: {hand: {"ours" (dex's filter) | "ours_defaults" | "dex": {"error_mm", "jerk", "pinch"}}}}, the
    recording only where it is here."""
    ours = logging.getLogger("teledex_lerobot")
    level = ours.level
    ours.setLevel(logging.ERROR)  # the vendor hands' fallback warnings, once per hand: not what this measures
    try:
        return _compare(fixture_hands)
    finally:
        ours.setLevel(level)  # later tests read our log


def _compare(fixture_hands: Path) -> dict:
    stream = OperatorStream.load(STREAMS_DIR / "pinches.npz").hand_keypoints_m[::2].astype(float)  # 60 -> 30 Hz
    motions = {STREAM: (fixture_hands, stream @ reference_assets.DEX_TO_OURS)}
    if reference_assets.available():
        motions[RECORDING] = (reference_assets.DEX_URDF_HANDS, reference_assets.human_recording())
    results = {}
    for motion, (hands, keypoints_dex) in motions.items():
        keypoints = keypoints_dex @ reference_assets.DEX_TO_OURS.T
        dex_runs = BENCH.dex_retargeting(sys.executable, SimpleNamespace(DEX_URDF_HANDS=hands),
                                         {hand: (_config_path(hand), None, 1) for hand in HANDS}, keypoints_dex)
        results[motion] = {}
        for hand in HANDS:
            config = reference_assets.read_dex_config(_config_path(hand))
            urdf = hands / config["urdf_path"]
            model = KinematicModel.from_urdf(urdf)
            evaluator = BENCH.Evaluator(model, config, keypoints_dex)
            ours = BENCH.run_ours(urdf, keypoints, {"hand_scale": evaluator.scale, "low_pass_alpha":
                                                    _filter_alpha(config), "low_pass_order": 1}).joints
            ours_defaults = BENCH.run_ours(urdf, keypoints, {"hand_scale": evaluator.scale}).joints
            dex = BENCH.actuated(model, dex_runs[hand].names, dex_runs[hand].joints)
            reachable = BENCH.reachable_pairs(evaluator)
            results[motion][hand] = {
                name: {"error_mm": evaluator.error_mm(joints), "jerk": BENCH.jerk(joints),
                       "pinch": BENCH.pinches(evaluator, keypoints_dex, joints, reachable)}
                for name, joints in (("ours", ours), ("ours_defaults", ours_defaults), ("dex", dex))}
    return results


def _scored(compared: dict, motion: str, hand: str, ours: str = "ours") -> tuple[dict, dict]:
    if motion not in compared:
        pytest.skip(reference_assets.MISSING)
    return compared[motion][hand][ours], compared[motion][hand]["dex"]


def _cases(expected: dict) -> list:
    """(motion, hand) cases; `expected` maps those not met today to the strict-xfail reason."""
    return [pytest.param(motion, hand, id=f"{motion}-{hand}", marks=[pytest.mark.xfail(
        strict=True, reason=expected[motion, hand])] if (motion, hand) in expected else [])
        for motion in (STREAM, RECORDING) for hand in HANDS]


@pytest.mark.parametrize("config_path", reference_assets.dex_vector_configs(), ids=lambda p: p.stem)
def test_we_read_each_official_config_as_dex_retargeting_does(fixture_hands, config_path):
    """The evaluator's scale, links and human vectors, and the filter we match, are dex-retargeting's own reading."""
    from dex_retargeting.retargeting_config import RetargetingConfig

    config = reference_assets.read_dex_config(config_path)
    if not (fixture_hands / config["urdf_path"]).is_file():
        pytest.skip(f"{config['urdf_path']}: its model is GPL-3.0 and not carried as a fixture")
    RetargetingConfig.set_default_urdf_dir(str(fixture_hands))
    theirs = RetargetingConfig.load_from_file(config_path)
    keypoints = OperatorStream.load(STREAMS_DIR / "pinches.npz").hand_keypoints_m[:1] @ reference_assets.DEX_TO_OURS
    ours = BENCH.Evaluator(KinematicModel.from_urdf(fixture_hands / config["urdf_path"]), config, keypoints)
    human_origins, human_tasks = theirs.target_link_human_indices
    rows = [i for i, tip in enumerate(human_tasks) if tip in BENCH.FINGERTIPS]
    assert ours.scale == theirs.scaling_factor, (
        f"{config_path.name}: scale {ours.scale}, dex-retargeting's {theirs.scaling_factor}")
    assert (ours.origins, ours.tasks) == ([theirs.target_origin_link_names[i] for i in rows],
                                          [theirs.target_task_link_names[i] for i in rows]), config_path.name
    np.testing.assert_allclose(ours.targets[0], theirs.scaling_factor * (
        keypoints[0, [human_tasks[i] for i in rows]] - keypoints[0, [human_origins[i] for i in rows]]),
        err_msg=f"{config_path.name}: the human vectors we aim at")
    assert _filter_alpha(config) == theirs.low_pass_alpha, config_path.name


@pytest.mark.slow
@pytest.mark.parametrize("motion, hand", _cases({
    (STREAM, "allegro"): "0.0023 vs 0.0017", (STREAM, "ability"): "0.0022 vs 0.0017"}))
def test_jerk_at_equal_filtering_is_at_most_dex_retargetings(compared, motion, hand):
    ours, dex = _scored(compared, motion, hand)
    assert ours["jerk"] <= dex["jerk"], f"{hand}: jerk {ours['jerk']:.4f} > dex-retargeting's {dex['jerk']:.4f}"


@pytest.mark.slow
@pytest.mark.parametrize("motion, hand", _cases({
    (STREAM, "allegro"): "39.83 vs 34.73 mm", (STREAM, "ability"): "18.68 vs 14.24 mm",
    (RECORDING, "allegro"): "46.57 vs 44.36 mm", (RECORDING, "ability"): "26.10 vs 23.67 mm"}))
def test_tip_error_at_equal_filtering_is_at_most_dex_retargetings(compared, motion, hand):
    ours, dex = _scored(compared, motion, hand)
    assert ours["error_mm"] <= dex["error_mm"], f"{hand}: {ours['error_mm']:.2f} mm > {dex['error_mm']:.2f} mm"


@pytest.mark.slow
@pytest.mark.parametrize("motion, hand", _cases({
    (STREAM, "allegro"): "39.47 vs 34.73 mm", (STREAM, "ability"): "17.94 vs 14.24 mm"}))
def test_tip_error_at_each_systems_own_filtering_is_at_most_dex_retargetings(compared, motion, hand):
    """Our defaults (no output filter) against dex-retargeting's vector config as published (its filter)."""
    ours, dex = _scored(compared, motion, hand, "ours_defaults")
    assert ours["error_mm"] <= dex["error_mm"], f"{hand}: {ours['error_mm']:.2f} mm > {dex['error_mm']:.2f} mm"


@pytest.mark.slow
@pytest.mark.parametrize("motion", [
    pytest.param(STREAM, marks=pytest.mark.xfail(strict=True, reason="137 of 149 pinch frames")),
    pytest.param(RECORDING, marks=pytest.mark.xfail(strict=True, reason="12 of 20 pinch frames"))])
def test_pinches_hold_with_the_filter_on(compared, motion):
    """Ability: the human's thumb pinches (tips < 10 mm) -> robot pair < 15 mm in >= 95 % of the frames."""
    ours, _ = _scored(compared, motion, "ability")
    successes, attempts = ours["pinch"]
    assert attempts > 0 and successes >= 0.95 * attempts, f"{successes}/{attempts}"
