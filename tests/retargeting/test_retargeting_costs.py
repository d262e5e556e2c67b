"""Every cost term: analytic gradient = finite differences of its value, through the real hand kinematics."""

import numpy as np
import pytest

from teledex_lerobot.kinematics import KinematicModel, urdf_path
from teledex_lerobot.retargeting.costs import (
    JointDeviationCost,
    KeypointPositionCost,
    KeypointVectorCost,
    KinematicState,
)
from teledex_lerobot.retargeting.hand_layout import build_layout
from teledex_lerobot.retargeting.keypoint_kinematics import KeypointKinematics


@pytest.fixture(scope="module", params=["linkerhand_l20_right", "linkerhand_o6_left"])
def kinematics(request):
    model = KinematicModel.from_urdf(urdf_path(request.param))
    layout = build_layout(model, request.param.rsplit("_", 1)[1])
    return model, KeypointKinematics(model, layout.keypoint_frames, layout)


def _state(kinematics, q):
    return KinematicState(q, *kinematics.positions_and_jacobians(q))


def _terms(rng, count, n):
    position = KeypointPositionCost(np.arange(count), rng.uniform(0.1, 2.0, count))
    position.set_targets(rng.normal(0, 0.05, (count, 3)))
    vectors = KeypointVectorCost(rng.integers(0, count, 5), rng.integers(0, count, 5))
    vectors.set_targets(rng.normal(0, 0.03, (5, 3)), rng.uniform(0.5, 200.0, 5))
    deviation = JointDeviationCost(2.5e-3, rng.normal(0, 0.3, n))
    return {"position": position, "vector": vectors, "deviation": deviation}


@pytest.mark.parametrize("name", ["position", "vector", "deviation"])
def test_gradient_matches_finite_differences(kinematics, name):
    model, keypoints = kinematics
    rng = np.random.default_rng(7)
    term = _terms(rng, len(keypoints.frames), len(model.joint_names))[name]
    step = 1e-6
    for _ in range(3):
        q = rng.uniform(model.lower + 0.05, model.upper - 0.05)
        analytic = term.gradient(_state(keypoints, q))
        numeric = np.array([(term.value(_state(keypoints, q + step * e)) - term.value(_state(keypoints, q - step * e)))
                            / (2 * step) for e in np.eye(len(q))])
        assert np.allclose(analytic, numeric, rtol=1e-5, atol=1e-9 * max(1.0, np.abs(numeric).max()))


def test_keypoint_kinematics_matches_the_kinematic_model(kinematics):
    model, keypoints = kinematics
    rng = np.random.default_rng(3)
    for _ in range(3):
        q = rng.uniform(model.lower, model.upper)
        positions, jacobians = keypoints.positions_and_jacobians(q)
        assert np.allclose(positions, model.frame_positions(q, keypoints.frames), atol=1e-12)
        expected = np.array([model.frame_jacobian(q, frame)[:3] for frame in keypoints.frames])
        assert np.allclose(jacobians, expected, atol=1e-12)
        assert np.allclose(keypoints.positions(q), positions)


def test_solver_stacks_exactly_the_terms(kinematics):
    """The solver's fused residual and Jacobian are the terms' own, stacked (so it minimises what they define)."""
    from teledex_lerobot.retargeting.solver import BoxLeastSquaresSolver

    model, keypoints = kinematics
    rng = np.random.default_rng(11)
    terms = list(_terms(rng, len(keypoints.frames), len(model.joint_names)).values())
    solver = BoxLeastSquaresSolver(keypoints, terms, model.lower, model.upper)
    weights = np.concatenate([term.row_weights for term in terms])
    weighted_targets = weights * np.concatenate([term.row_targets for term in terms])
    q = rng.uniform(model.lower, model.upper)
    solver._evaluate(q)
    residual, jacobian = solver._residual(weights, weighted_targets, weights[:, None])
    state = _state(keypoints, q)
    assert np.allclose(residual, np.concatenate([term.residual(state) for term in terms]), atol=1e-12)
    assert np.allclose(jacobian, np.concatenate([term.residual_jacobian(state) for term in terms]), atol=1e-12)


def test_solver_stays_in_limits_and_warm_start_matches_a_fresh_solve(kinematics):
    """Targets out of reach drive joints onto their limits; reusing the last linearisation changes nothing."""
    from teledex_lerobot.retargeting.solver import BoxLeastSquaresSolver, SolverSettings

    model, keypoints = kinematics
    rng = np.random.default_rng(5)
    count = len(keypoints.frames)
    position = KeypointPositionCost(np.arange(count), np.ones(count))
    deviation = JointDeviationCost(1e-4, np.zeros(len(model.joint_names)))
    settings = SolverSettings(max_iterations=50, step_tolerance_rad=1e-7)
    warm = BoxLeastSquaresSolver(keypoints, [position, deviation], model.lower, model.upper, settings)
    fresh = BoxLeastSquaresSolver(keypoints, [position, deviation], model.lower, model.upper, settings)
    q = np.clip(np.zeros(len(model.joint_names)), model.lower, model.upper)
    warm_starts = 0
    for _ in range(5):
        goal = rng.uniform(model.lower - 0.3, model.upper + 0.3)  # partly outside the limits
        position.set_targets(keypoints.positions(np.clip(goal, model.lower, model.upper))
                             + rng.normal(0, 0.002, (count, 3)))
        deviation.set_reference(q)
        warm_starts += warm._carried_over is not None
        q_warm, _ = warm.solve(q)
        fresh._carried_over = None
        q_fresh, _ = fresh.solve(q)
        assert np.all(q_warm >= model.lower) and np.all(q_warm <= model.upper)
        assert np.allclose(q_warm, q_fresh, atol=1e-5)
        q = q_warm
    assert warm_starts >= 3  # the carried-over linearisation was used
