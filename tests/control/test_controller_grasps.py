"""A controller's grip closes the hand along the grasp the operator chose (control/hand_grasps.py, the retargeter's
analog method in retargeting/analog.py): the thumbstick's press steps from open .. fist to the measured level pinch
and side wrap, whose shapes are the ones the world's grasps hold with."""

import numpy as np
import pytest

from teledex_lerobot.control.config import ControlConfig, StrategyConfig
from teledex_lerobot.control.hand_grasps import grasp_paths
from teledex_lerobot.control.strategy import RigStrategy
from teledex_lerobot.inputs.frame import OperatorFrame
from teledex_lerobot.operator.poses import FIST
from teledex_lerobot.presets import load_preset
from teledex_lerobot.retargeting.analog import GraspChoice
from teledex_lerobot.rig import Rig
from teledex_lerobot.world.grasps import grasp_for


def hand_target(strategy: RigStrategy, grip: float, click: bool = False) -> np.ndarray:
    frame = OperatorFrame(received_ns=0, analog={"right_grip": grip}, buttons={"right_axis_click": click})
    return strategy._hand_target(frame)


def test_the_thumbstick_steps_through_the_grasps_and_the_grip_closes_along_the_chosen_one():
    rig = Rig.from_preset(load_preset("piper_linkerhand_o6_single"))
    strategy = RigStrategy(rig, ControlConfig.load("xr_hybrid").strategy)
    hand = rig.parts["hand"]
    yaw = hand.joints.index(next(j for j in hand.joints if j.endswith("thumb_cmc_yaw")))
    assert strategy.grasps.names == ["fist", "level_pinch", "side_wrap"]
    open_hand, fist = hand_target(strategy, 0.0), hand_target(strategy, 1.0)
    assert np.all(fist >= open_hand - 1e-9) and np.ptp(fist - open_hand) > 0.5

    hand_target(strategy, 0.0, click=True)
    assert strategy.grasps.name == "level_pinch"
    hand_target(strategy, 0.0, click=True)  # held, not pressed again: stays
    assert strategy.grasps.name == "level_pinch"
    pinch = grasp_for("linkerhand_o6", "cube_assembly")
    waiting, closed = hand_target(strategy, 0.0), hand_target(strategy, 1.0)
    assert waiting[yaw] == pytest.approx(pinch.preshape["thumb_cmc_yaw"])  # the thumb waits opposed
    mcp = [i for i, j in enumerate(hand.joints) if j.endswith("mcp_pitch")]
    assert np.allclose(waiting[mcp], pinch.preshape["mcp_pitch"])
    assert np.allclose(closed[mcp], pinch.closed["mcp_pitch"])
    assert np.allclose(hand_target(strategy, 0.5), (waiting + closed) / 2)

    hand_target(strategy, 0.0, click=False)
    hand_target(strategy, 0.0, click=True)
    assert strategy.grasps.name == "side_wrap"
    hand_target(strategy, 0.0, click=False)
    hand_target(strategy, 0.0, click=True)
    assert strategy.grasps.name == "fist"


def test_a_hand_without_measured_grasps_keeps_the_fist_and_a_misspelt_grasp_is_named():
    paths = grasp_paths(["level_pinch", "side_wrap"], "my_urdf_hand", ["a", "b", "c"], -np.ones(3), np.ones(3))
    assert paths == {"fist": None}
    choice = GraspChoice(paths, lambda angles: np.full(3, angles.mean()))  # a stand-in joint map
    assert choice.names == ["fist"] and np.allclose(choice.close(1.0), FIST.mean())
    rig = Rig.from_preset(load_preset("piper_linkerhand_o6_single"))
    with pytest.raises(ValueError, match=r"hand_grasps: unknown grasp\(s\) \['pinchy'\]"):
        RigStrategy(rig, StrategyConfig(hand_method="analog", hand_grasps=["pinchy"]))


def test_letting_go_of_a_pinch_holds_the_thumb_post_where_it_is_measured_until_the_grip_closes_again():
    """The thumb, deflected by the held object, would spring back and push it off (38 mm in the world)."""
    rig = Rig.from_preset(load_preset("piper_linkerhand_o6_single"))
    config = StrategyConfig(hand_method="analog", hand_grasps=["level_pinch"])
    choice = RigStrategy(rig, config).grasps
    joints = rig.parts["hand"].joints
    post = [joints.index("thumb_cmc_pitch"), joints.index("thumb_cmc_yaw")]
    closed = choice.close(1.0)
    measured = closed.copy()
    measured[post] -= [0.1, 0.02]  # pushed back by the object
    reads = []

    def measure():
        reads.append(1)
        return measured

    assert np.allclose(choice.close(1.0, measure), closed) and not reads  # holding: nothing measured
    opening = choice.close(0.8, measure)
    assert len(reads) == 1 and np.allclose(opening[post], measured[post])
    fully_open = choice.close(0.0, measure)
    assert np.allclose(fully_open[post], measured[post]) and len(reads) == 1
    assert np.allclose(np.delete(fully_open, post), np.delete(choice.grasps["level_pinch"](0.0), post))
    assert np.allclose(choice.close(0.02, measure)[post], measured[post])  # grip noise does not end it
    assert np.allclose(choice.close(0.2, measure)[post], closed[post])  # gripping again: the post is back in place
