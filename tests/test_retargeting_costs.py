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
    return model, KeypointKinematics(model, layout.keypoint_frames, layout.base_rotation)


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
