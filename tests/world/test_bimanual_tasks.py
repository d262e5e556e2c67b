"""Two-rig tasks and the two-rig expert (issue 33): the handover and the bimanual lift need a world of a left and a
right rig; the handover's bottom half lies where the left arm cannot reach; the expert hands the half over and
assembles the cube; the lift expert sets the box on its target, which one hand alone cannot hold; a left hand makes the
grasps measured on right hands (its mirrored joints negated); lerobot-eval's env runs both rigs. Recording a handover
with teledex-record: tests/e2e/test_bimanual_recording.py."""

import numpy as np
import pytest

from lerobot_robot_teledex.envs.configs import TeledexEnvConfig
from teledex_lerobot.control.hand_grasps import mirrored_joints
from teledex_lerobot.errors import ConfigError
from teledex_lerobot.presets import load_preset
from teledex_lerobot.rig import Rig
from teledex_lerobot.world.bimanual_expert import HandoverExpert, LiftExpert
from teledex_lerobot.world.episode import control_tick, run_expert_episode
from teledex_lerobot.world.expert import ScriptedExpert, UnreachableGrasp
from teledex_lerobot.world.gym_env import TeledexWorldEnv
from teledex_lerobot.world.perturbation import HandoverSpread, PerturbationConfig, TargetPerturbation
from teledex_lerobot.world.tasks.bimanual_lift import BOX_HALF_M
from teledex_lerobot.world.world import World, WorldConfig, placed_rigs

BIMANUAL = "bimanual_piper_linkerhand_l10"


def _rigs() -> dict[str, Rig]:
    return {name: Rig.from_preset(load_preset(follower))
            for name, follower in load_preset(BIMANUAL).followers.items()}


def _world(task: str, observe_relations: bool = False) -> World:
    return World(placed_rigs(_rigs(), load_preset(BIMANUAL).placements),
                 WorldConfig(task=task, observe_relations=observe_relations))


@pytest.mark.parametrize("task", ["handover", "bimanual_lift"])
def test_two_rig_tasks_refuse_a_world_of_one_rig(task):
    rig = Rig.from_preset(load_preset("piper_linkerhand_o6_single"))
    with pytest.raises(ConfigError, match=r"needs 2 rigs named left and right; this world has one rig: use "
                                          r"--robot.type=teledex_followers"):
        World(rig, WorldConfig(task=task))


def test_the_handovers_bottom_half_lies_out_of_the_left_arms_reach_and_the_plan_reaches_it_with_the_right():
    world = _world("handover")
    expert = HandoverExpert(_rigs())
    left = expert.experts["left"]
    for seed in range(10):
        world.reset(seed)
        expert.reset(world)  # plans the left's pick and pass, the right's take and its place over the bottom half
        bottom = world.object_pose("cube_bottom")
        with pytest.raises(UnreachableGrasp):
            left._grasp_frame(bottom.position_m, bottom.yaw_rad)


def test_a_left_hand_makes_the_grasps_measured_on_right_hands():
    """The L10's thumb roll and spreads turn the other way on the left hand (its joint maps say so): the right
    hand's pinch, sent as it is, left the left thumb out of opposition and the cube on the table."""
    assert mirrored_joints("linkerhand_l10", "left") == {"thumb_cmc_roll", "index_mcp_roll", "ring_mcp_roll",
                                                         "pinky_mcp_roll"}
    assert mirrored_joints("linkerhand_l10", "right") == frozenset()
    rig = Rig.from_preset(load_preset("piper_linkerhand_l10_left"))
    world = World(rig, WorldConfig(task="cube_assembly"))
    expert = ScriptedExpert(rig, "cube_assembly")
    assert expert.closed[rig.parts["hand"].joints.index("thumb_cmc_roll")] > 0  # the right hand's is negative
    assert run_expert_episode(world, expert, seed=0)[0]


def test_the_handover_expert_hands_the_half_over_and_assembles_the_cube():
    world = _world("handover")
    expert = HandoverExpert(_rigs())
    holders = set()
    for seed in range(3):
        succeeded, _ = run_expert_episode(world, expert, seed, on_tick=lambda w, e: holders.add(
            frozenset(w.hands_touching("cube_top"))))
        assert succeeded, seed
    assert {frozenset({"left"}), frozenset({"right"}), frozenset({"left", "right"})} <= holders  # handed over


def test_a_take_off_the_halfs_centre_is_carried_in_the_hand_and_the_placing_that_measures_it_still_assembles():
    """The take spread (teleop.perturbation.take_spread_m): the right hand takes the half 2 mm off where it
    otherwise does, the half sits that much elsewhere in the hand, and the placing corrects for it."""
    world = _world("handover", observe_relations=True)
    in_right = [world.task.relation_names.index(f"cube_top_in_right_hand_{axis}") for axis in "xyz"]
    holds = []
    for handover in (None, HandoverSpread(take_offset_m=np.array([-0.0015, 0.0015]))):
        carried = []
        succeeded, _ = run_expert_episode(
            world, HandoverExpert(_rigs()), 2, handover=handover,
            on_tick=lambda w, e: carried.append(
                w.object_state()[-len(w.task.relation_names):][in_right]) if "carry" in e.experts["right"].phase
            else None)
        assert succeeded
        holds.append(np.median(carried, axis=0))
    assert np.linalg.norm(holds[1] - holds[0]) > 0.001
    for expert, world in ((LiftExpert(_rigs()), _world("bimanual_lift")),  # no take: a spread would do nothing
                          (ScriptedExpert(_rigs()["right"], "cube_assembly"), World(_rigs()["right"], WorldConfig()))):
        for spread in (HandoverSpread(take_offset_m=np.full(2, 0.001)),
                       HandoverSpread(carry_offset_m=np.full(2, 0.001)), HandoverSpread(pass_delay_s=0.2)):
            with pytest.raises(ConfigError, match="take_spread_m=0, carry_spread_m=0 and pass_delay_spread_s=0"):
                expert.reset(world, handover=spread)


def test_a_right_hand_coming_later_finds_the_left_still_holding_the_half():
    """The pass delay (teleop.perturbation.pass_delay_spread_s): the right hand comes for the half 0.6 s later and
    the left lets go that much later too, after the right has it; a recording timed alike in every episode taught a
    policy's left to let go on the clock."""
    world = _world("handover")
    touches = []
    for handover in (None, HandoverSpread(pass_delay_s=0.6)):
        held = []  # per tick: which hands touch the half
        succeeded, _ = run_expert_episode(world, HandoverExpert(_rigs()), 3, handover=handover,
                                          on_tick=lambda w, e: held.append(w.hands_touching("cube_top")))
        assert succeeded
        right_first = next(tick for tick, hands in enumerate(held) if "right" in hands)
        left_last = max(tick for tick, hands in enumerate(held) if "left" in hands)
        assert left_last - right_first >= 10  # both hold it for 0.4 s or more before the left's is gone
        touches.append((right_first, left_last))
    (right_first, left_last), (later_right, later_left) = touches
    assert later_right - right_first == pytest.approx(15, abs=2) and later_left - left_last == pytest.approx(15, abs=2)


def test_a_carry_ending_off_the_goal_is_corrected_by_the_lowering_which_is_perturbed_until_its_last_centimetre():
    """The carry spread (teleop.perturbation.carry_spread_m): the carry ends 8 mm off over the goal in x and y and
    the lowering brings the half onto it; the recovery perturbation stays on the right arm while the half is more
    than a centimetre over its resting place (the corrections a policy's placing needs) and fades below."""
    world = _world("handover", observe_relations=True)
    from_assembled = [world.task.relation_names.index(f"cube_top_from_assembled_{axis}") for axis in "xyz"]
    offset = np.array([0.008, -0.008])
    lowering = []  # (the right's phase, the half from its assembled place, whether the right rig is precise)

    def watch(w, expert):
        if expert.experts["right"].phase in ("carry", "place"):
            lowering.append((expert.experts["right"].phase,
                             w.object_state()[-len(w.task.relation_names):][from_assembled],
                             "right/arm" in expert.precise_parts))

    succeeded, _ = run_expert_episode(world, HandoverExpert(_rigs()), 2, handover=HandoverSpread(carry_offset_m=offset),
                                      on_tick=watch)
    assert succeeded
    carry_end = [relation for phase, relation, _ in lowering if phase == "carry"][-1]
    assert np.allclose(carry_end[:2], offset, atol=0.002) and 0.02 < carry_end[2] < 0.04
    placing = [(relation, precise) for phase, relation, precise in lowering if phase == "place"]
    loose = [relation[2] for relation, precise in placing if not precise]
    assert loose and min(loose) > 0.009  # perturbed from the carry height down to a centimetre
    assert placing[-1][1] and np.linalg.norm(placing[-1][0][:2]) < 0.002  # faded at the end, the half over its place


def test_the_right_hands_descent_onto_the_held_half_is_perturbed_until_its_last_centimetre():
    """A policy's right hand came onto the held half 8 mm low and aside and pushed it out of the left's pinch, where
    every demonstration's descent had been exact from 5 cm up: the recovery perturbation now stays on the right arm
    while the hand is more than a centimetre from its hold, and fades below."""
    world = _world("handover", observe_relations=True)
    in_right = [world.task.relation_names.index(f"cube_top_in_right_hand_{axis}") for axis in "xyz"]
    descent = []  # (the half in the right hand's frame, whether the right rig is precise)

    def watch(w, expert):
        if expert.experts["right"].phase == "descend":
            descent.append((w.object_state()[-len(w.task.relation_names):][in_right],
                            "right/arm" in expert.precise_parts))

    succeeded, _ = run_expert_episode(world, HandoverExpert(_rigs()), 2, on_tick=watch)
    assert succeeded
    held = descent[-1][0]  # the hand down on the half
    loose = [np.linalg.norm(relation - held) for relation, precise in descent if not precise]
    assert loose and min(loose) > 0.009 and max(loose) > 0.04  # perturbed from 5 cm over the hold down to 1 cm
    assert descent[-1][1]  # faded at the end


def test_the_handovers_relations_follow_the_half_from_hand_to_hand_to_the_goal():
    """What a state-based policy observes beside the poses: the half in each hand's frame (still in the hand that
    holds it), from its assembled place (zero once assembled), and which hands touch it."""
    world = _world("handover", observe_relations=True)
    names = world.task.relation_names
    column = {name: index for index, name in enumerate(names)}
    rows = []
    succeeded, _ = run_expert_episode(world, HandoverExpert(_rigs()), 1, on_tick=lambda w, e: rows.append(
        w.object_state()[-len(names):]))
    assert succeeded
    relations = np.array(rows)

    def held_by(rig: str) -> np.ndarray:
        other = "right" if rig == "left" else "left"
        return (relations[:, column[f"{rig}_hand_touches_cube_top"]] == 1) & (
            relations[:, column[f"{other}_hand_touches_cube_top"]] == 0)

    for rig in ("left", "right"):
        held = relations[held_by(rig)][:, [column[f"cube_top_in_{rig}_hand_{axis}"] for axis in "xyz"]]
        assert len(held) > 25  # a second at least in this hand alone
        assert np.linalg.norm(held[len(held) // 2]) < 0.15  # in the hand, not somewhere in the world
        moved = np.linalg.norm(held[-len(held) // 2:] - held[len(held) // 2], axis=1)
        assert moved.max() < 0.01, (rig, moved.max())  # carried with it
    assert np.all(relations[0, [column["left_hand_touches_cube_top"], column["right_hand_touches_cube_top"]]] == 0)
    from_assembled = relations[:, [column[f"cube_top_from_assembled_{axis}"] for axis in "xyz"]]
    assert np.linalg.norm(from_assembled[0]) > 0.3 and np.linalg.norm(from_assembled[-1]) < 0.005


def test_the_bimanual_lift_is_judged_on_the_box_resting_on_its_target():
    world = _world("bimanual_lift")
    world.reset(4)
    target = world.object_pose("target")
    assert not world.task.goal_reached(world) and not world.task.stages(world)["reached"]
    address = world.model.jnt_qposadr[world.model.body("box").jntadr[0]]
    world.data.qpos[address:address + 3] = target.position_m + [0.0, 0.0, BOX_HALF_M[2] + 0.05]
    world.data.qpos[address + 3:address + 7] = target.quat_wxyz
    world.data.qvel[:] = 0.0
    world.step(1)
    assert world.task.stages(world)["lifted"] and not world.task.goal_geometry(world)  # in the air
    world.step(world.steps_for(1.0))
    assert world.task.goal_reached(world)  # set down on the target, no hand on it
    world.data.qpos[address] += 0.03
    world.step(1)
    assert not world.task.goal_geometry(world)  # 3 cm off the target is not on it


def test_lerobot_evals_env_runs_both_rigs_in_one_world_as_teledex_followers_records_them():
    """--env.type=teledex --env.preset=<two rigs>: the dataset's features (both rigs' joints in recording order, the
    object poses, the cameras by recorded name) and an episode a policy acting as the expert completes."""
    config = TeledexEnvConfig(task="handover", preset=BIMANUAL, obs_type="pixels_agent_pos",
                              cameras=["left_top", "left_wrist", "right_wrist"], width=32, height=24)
    assert config.features["action"].shape == (32,) and config.features["environment_state"].shape == (14,)
    with_relations = TeledexEnvConfig(task="handover", preset=BIMANUAL, observe_relations=True)
    assert with_relations.features["environment_state"].shape == (14 + 11,)  # and the handover's relations
    assert [key for key in config.features if key.startswith("pixels/")] == [
        "pixels/left_top", "pixels/left_wrist", "pixels/right_wrist"]
    with pytest.raises(ConfigError, match=r"not cameras of preset .*'left_top', 'left_wrist', 'right_wrist'"):
        TeledexEnvConfig(task="handover", preset=BIMANUAL, cameras=["right_top"])
    env = TeledexWorldEnv("handover", BIMANUAL, obs_type="state")
    try:
        world = env.world
        assert list(world.parts) == ["left/arm", "left/hand", "right/arm", "right/hand"]
        observation, _ = env.reset(seed=1)
        assert observation["agent_pos"].shape == (32,)
        expert = HandoverExpert({name: placed.rig for name, placed in world.rigs.items()})
        expert.reset(world)
        for _ in range(int(world.task.episode_s * 25)):
            targets = expert.act(world)
            observation, _, succeeded, _, info = env.step(np.concatenate([targets[key] for key in world.parts]))
            if succeeded:
                break
        assert info["is_success"]
    finally:
        env.close()


def test_the_lift_expert_sets_the_box_on_its_target_and_one_hand_alone_cannot_hold_it():
    world = _world("bimanual_lift")
    expert = LiftExpert(_rigs())
    both = []
    for seed in range(2):
        succeeded, _ = run_expert_episode(world, expert, seed, on_tick=lambda w, e: both.append(
            w.hands_touching("box") == {"left", "right"} and w.object_pose("box").position_m[2] > BOX_HALF_M[2] + 0.05))
        assert succeeded, seed
    assert any(both)  # carried between the two hands
    # the same lift, and the right hand lets go as the carry starts: the box slips out of the left hand
    world.reset(0)
    expert.reset(world)
    right = expert.experts["right"]
    while right.phase != "carry":
        control_tick(world, expert.act(world), 25)
    held_z = world.object_pose("box").position_m[2]
    let_go = right.hand_pose(world)
    let_go[:3, 3] -= 0.08 * let_go[:3, :3] @ expert._palm_in_hand["right"][0][:3, 1]  # away from the box
    for _ in range(25):
        targets = expert.act(world)
        targets["right/arm"] = right.arm_target(let_go)
        control_tick(world, targets, 25)
    assert held_z > BOX_HALF_M[2] + 0.05 and world.object_pose("box").position_m[2] < BOX_HALF_M[2] + 0.01


def test_recovery_perturbations_stay_on_a_rig_while_the_other_is_in_a_precise_phase():
    """The left hand letting go of the half (and staying open, a precise phase to the end) fades only its own rig's
    perturbation: the right arm's carry to the bottom half is perturbed, with its arm's std, not its hand's. Before,
    any rig in a precise phase faded both, so no recorded handover showed the right's carry off its path."""
    world = _world("handover")
    world.reset(0)
    expert = HandoverExpert(_rigs())
    expert.reset(world)
    perturbation = TargetPerturbation(PerturbationConfig(arm_std_rad=0.02, hand_std_rad=0.001))
    assert perturbation.reset(0)
    lower = {key: part.lower for key, part in world.parts.items()}
    upper = {key: part.upper for key, part in world.parts.items()}
    offsets = []
    for _ in range(int(14 * 25)):
        targets = expert.act(world)
        if expert.experts["right"].phase == "carry":
            assert expert.precise_parts == {"left/arm", "left/hand"}
        executed = perturbation.apply(targets, 1 / 25, expert.precise_parts, lower, upper)
        if expert.experts["right"].phase == "carry":
            offsets.append({key: np.abs(executed[key] - targets[key]).max() for key in targets})
        control_tick(world, targets, 25)
    assert len(offsets) > 30
    assert max(o["right/arm"] for o in offsets) > 0.01  # the arm's 0.02 rad std
    assert max(o["right/hand"] for o in offsets) < 0.005  # the hand's 0.001
    assert max(o["left/arm"] for o in offsets[10:]) < 1e-3  # the left, letting go and open, faded
