"""The bottle expert gets out of a jam: a first insertion aimed off the opening sets the bottle on the base's rim,
and the expert backs off, re-centres on a fresh measurement of its hold and inserts; a recording's perturbed episodes
carry such a miss, seeded; observed on request, the object state says where the bottle's bottom is from the
opening."""

import numpy as np
import pytest

from teledex_lerobot.errors import ConfigError
from teledex_lerobot.presets import load_preset
from teledex_lerobot.rig import Rig
from teledex_lerobot.world.episode import run_expert_episode
from teledex_lerobot.world.expert import ScriptedExpert
from teledex_lerobot.world.perturbation import PerturbationConfig, TargetPerturbation
from teledex_lerobot.world.tasks.bottle import BASE_HEIGHT_M, BASE_OUTER_HALF_M, BASE_WALL_M, bottle_bottom
from teledex_lerobot.world.world import World, WorldConfig, object_state_names

TASK = "bottle_peg_in_hole"
CLEARANCE_M = BASE_OUTER_HALF_M - BASE_WALL_M - 0.03  # around the 6 cm bottle


@pytest.fixture(scope="module")
def world_and_expert():
    rig = Rig.from_preset(load_preset("piper_linkerhand_o6_single"))
    return World(rig, WorldConfig(task=TASK)), ScriptedExpert(rig, TASK)


def _episode(world, expert, seed, miss_m):
    """Run an episode with the first insertion aimed miss_m off; (success, phases seen, the bottle's bottom from the
    opening's centre at the rim on every tick of the first insertion)."""
    phases, first_insert = [], []

    def watch(w, e):
        if not phases or phases[-1] != e.phase:
            phases.append(e.phase)
        if phases.count("insert") == 1 and e.phase == "insert":
            first_insert.append(bottle_bottom(w) - (w.body_position("base") + [0, 0, BASE_HEIGHT_M]))

    original_reset = expert.reset
    expert.reset = lambda w, **kwargs: original_reset(w, miss_m, **kwargs)
    try:
        succeeded, _ = run_expert_episode(world, expert, seed, on_tick=watch)
    finally:
        del expert.reset
    return succeeded, phases, np.array(first_insert)


@pytest.mark.parametrize("seed, direction_rad", [(3, 0.0), (8, 2.2)])
def test_expert_recovers_from_a_bottle_set_on_the_rim(world_and_expert, seed, direction_rad):
    world, expert = world_and_expert
    miss = 0.007 * np.array([np.cos(direction_rad), np.sin(direction_rad), 0.0])
    succeeded, phases, first = _episode(world, expert, seed, miss)
    lowest = first[np.argmin(first[:, 2])]
    assert np.linalg.norm(lowest[:2]) > CLEARANCE_M  # the bottle came down off the opening ...
    assert lowest[2] > -0.002  # ... and stayed on the rim
    assert phases[phases.index("insert"):] [:4] == ["insert", "back_off", "realign", "insert"]
    assert expert.retries == 1
    assert succeeded and not world.hand_touches("bottle")


def test_expert_aimed_right_never_backs_off(world_and_expert):
    world, expert = world_and_expert
    for seed in (4, 5):
        succeeded, phases, first = _episode(world, expert, seed, np.zeros(3))
        assert succeeded and expert.retries == 0 and "back_off" not in phases
        assert np.linalg.norm(first[np.argmin(first[:, 2])][:2]) < CLEARANCE_M


def test_a_miss_is_refused_for_a_task_whose_expert_does_not_recover():
    rig = Rig.from_preset(load_preset("piper_linkerhand_o6_single"))
    world = World(rig, WorldConfig(task="cube_assembly"))
    with pytest.raises(ConfigError, match="place_miss_m=0"):
        ScriptedExpert(rig, "cube_assembly").reset(world, np.array([0.005, 0.0, 0.0]))


def test_place_miss_is_seeded_sized_and_only_in_perturbed_episodes():
    config = PerturbationConfig(place_miss_m=0.006, episode_share=0.5)
    misses = {}
    for seed in range(40):
        perturbation = TargetPerturbation(config)
        active = perturbation.reset(seed)
        misses[seed] = perturbation.place_miss_m
        assert np.linalg.norm(perturbation.place_miss_m) == pytest.approx(0.006 if active else 0.0)
        assert perturbation.place_miss_m[2] == 0.0
    assert 10 < sum(np.any(m != 0) for m in misses.values()) < 30
    again = TargetPerturbation(config)
    again.reset(7)
    np.testing.assert_array_equal(again.place_miss_m, misses[7])
    with pytest.raises(ConfigError, match="place_miss_m"):
        PerturbationConfig(place_miss_m=-0.001).validate()


def test_observed_relations_end_the_object_state_with_the_bottle_bottom_from_the_opening(world_and_expert):
    world, expert = world_and_expert
    assert len(world.object_state()) == len(object_state_names(TASK)) == 14  # poses only, by default
    world = World(expert.rig, WorldConfig(task=TASK, observe_relations=True))
    world.reset(2)
    names = object_state_names(TASK, relations=True)
    state = dict(zip(names, world.object_state(), strict=True))
    bottom = bottle_bottom(world)
    base = world.body_position("base")
    assert names[-3:] == ["bottle_bottom_from_opening_x", "bottle_bottom_from_opening_y",
                          "bottle_bottom_from_opening_z"]
    assert state["bottle_bottom_from_opening_x"] == pytest.approx(bottom[0] - base[0])
    assert state["bottle_bottom_from_opening_y"] == pytest.approx(bottom[1] - base[1])
    assert state["bottle_bottom_from_opening_z"] == pytest.approx(-BASE_HEIGHT_M, abs=0.002)  # standing on the table
