"""The operator's own grasps: teledex-calibrate-hand records a person's pinch and wrap (operator/calibration_session.py)
as templates, and the grasp anchors match the person's hand against them, not against the hand model's.

The person is `LONG_FINGERED_PERSON` (operator/persons.py): another hand and other habits, as far from the hand
model's grasp families as real recorded hands are. The model's anchors never fire for them, and the world's
keypoint route fails every layout; their own templates fire on their grasps and on none of their other hand shapes,
and the route succeeds (benchmarks/grasp_templates.py measures both on 50 layouts)."""


import numpy as np
import pytest

from lerobot_teleoperator_teledex import TeledexReplay, TeledexReplayConfig
from teledex_lerobot.cli.calibrate_hand import main as calibrate_hand
from teledex_lerobot.control.config import ControlConfig
from teledex_lerobot.errors import DataError
from teledex_lerobot.geometry.rotations import matrix_to_quat
from teledex_lerobot.inputs.datagram_file import DatagramWriter
from teledex_lerobot.inputs.keypoint_stream import encode_keypoints
from teledex_lerobot.operator.calibration_session import GRASP_STEPS, perform
from teledex_lerobot.operator.hand_model import angles_from_keypoints, keypoints_from_angles
from teledex_lerobot.operator.keypoints import FINGER_CHAINS, THUMB_TIP
from teledex_lerobot.operator.object_grasps import GRASP_FINGERS
from teledex_lerobot.operator.persons import AVERAGE_ADULT, LONG_FINGERED_PERSON, recorded_person
from teledex_lerobot.operator.stream import OperatorStream
from teledex_lerobot.paths import STREAMS_DIR
from teledex_lerobot.presets import load_preset
from teledex_lerobot.retargeting import (
    GraspAnchorSettings,
    GraspTemplate,
    HandCalibration,
    build_retargeter,
    calibrate_session,
)
from teledex_lerobot.retargeting.grasp_anchors import fired_shares
from teledex_lerobot.retargeting.keypoint_kinematics import KeypointKinematics
from teledex_lerobot.rig import Rig
from teledex_lerobot.world.episode import EpisodeOutcome, control_tick
from teledex_lerobot.world.expert import ScriptedExpert
from teledex_lerobot.world.operator_expert import OperatorExpert
from teledex_lerobot.world.world import World, WorldConfig

HAND = "linkerhand_o6"
FAR_MM = GraspAnchorSettings().far_mm


def calibrated(person, seed: int = 5) -> HandCalibration:
    retargeter = build_retargeter(HAND, "teledex", "right")
    keypoints, steps = perform(person, np.random.default_rng(seed))
    kinematics = KeypointKinematics(retargeter.model, retargeter.layout.keypoint_frames, retargeter.layout)
    return calibrate_session(retargeter.layout, kinematics, retargeter.reference_pose, keypoints, steps,
                             operator=person.name, hand=HAND, side="right")


def fired(templates: dict[str, GraspTemplate], frames) -> dict[str, float]:
    """The share of frames on which the anchors fire as each grasp."""
    return fired_shares(templates, frames, FAR_MM)[1]


@pytest.mark.parametrize(("person", "others_beyond_mm"), [(LONG_FINGERED_PERSON, FAR_MM), (AVERAGE_ADULT, 10.0)],
                         ids=["long_fingered", "average_adult"])
def test_own_templates_fire_on_the_persons_grasps_and_on_none_of_their_other_hand_shapes(person, others_beyond_mm):
    """Calibrated on one session, judged on another (new jitter, a new drift of every joint). The average adult's
    thumb-to-ring pinch passes 10.7 mm from their pinch (a quarter of the measured grasp's weight, for a moment);
    every other shape of theirs, and every one of the long-fingered person's, stays beyond the anchors' reach."""
    own = calibrated(person).templates()
    keypoints, steps = perform(person, np.random.default_rng(6))
    for step, span in steps.items():
        frames = keypoints[span]
        if step == "finger_pinches":  # thumb to the index or middle tip is the pinch's fingers closing: it may fire
            frames = np.concatenate(np.array_split(frames, 4)[2:])  # to the ring and little tips: other shapes
        if step in GRASP_STEPS:  # all but the moments of shaping the hand into the grasp and out of it
            shares = fired(own, frames)
            assert shares[step] >= 0.85 and sum(shares.values()) == shares[step], (step, shares)
        else:
            nearest_mm = min(template.nearest(frame)[0] for template in own.values() for frame in frames)
            assert nearest_mm > others_beyond_mm, (step, nearest_mm)


def test_the_hand_models_grasps_do_not_fire_for_another_persons_hand():
    model = {kind: GraspTemplate.of_model(grasp, "right") for kind, grasp in AVERAGE_ADULT.grasps().items()}
    keypoints, steps = perform(LONG_FINGERED_PERSON, np.random.default_rng(6))
    for kind in GRASP_STEPS:
        assert fired(model, keypoints[steps[kind]])[kind] < 0.1
        assert min(model[kind].nearest(frame)[0] for frame in keypoints[steps[kind]]) > 8.0


def test_a_grasp_step_without_the_grasps_motion_is_refused_naming_the_step():
    keypoints, steps = perform(LONG_FINGERED_PERSON, np.random.default_rng(0))
    still = np.repeat(keypoints[steps["pinch"]][100:101], 200, axis=0)
    with pytest.raises(DataError, match="the pinch step: the hand barely moved.*record the step again"):
        GraspTemplate.from_session(still, GRASP_FINGERS["pinch"], what="the pinch step")
    with pytest.raises(DataError, match="the wrap step: 8 tracked frames"):
        GraspTemplate.from_session(keypoints[steps["wrap"]][:10], GRASP_FINGERS["wrap"], what="the wrap step")


def test_templates_survive_the_file_and_a_damaged_one_names_its_grasp(tmp_path):
    calibration = calibrated(LONG_FINGERED_PERSON)
    calibration.save(tmp_path / "long.yaml")
    loaded = HandCalibration.load(tmp_path / "long.yaml").templates()
    for kind, template in calibration.templates().items():
        assert np.abs(loaded[kind].keypoints - template.keypoints).max() <= 5e-5  # written to 0.1 mm
        assert loaded[kind].fingers == GRASP_FINGERS[kind]
    calibration.grasp_templates["wrap"]["keypoints"] = [[0.0, 0.0]]
    with pytest.raises(DataError, match="its wrap grasp template cannot be read.*re-run teledex-calibrate-hand"):
        calibration.templates()


def write_session(path, person, seed: int, marked: bool = True) -> None:
    """A person's calibration session as a keypoint device sends it, its steps marked as a live session marks them."""
    keypoints, steps = perform(person, np.random.default_rng(seed))
    wrist = np.r_[0.3, 0.0, 0.2, matrix_to_quat(np.eye(3))]
    writer = DatagramWriter(path, "keypoints", "a calibration session")
    for step, span in steps.items():
        if marked:
            writer.mark(step)
        for index in range(span.start, span.stop):
            received_ns = int(index * 1e9 / 30)
            writer.write(encode_keypoints("right", keypoints[index], wrist, received_ns), received_ns)
    writer.close()


@pytest.fixture
def calibrations(tmp_path, monkeypatch):
    folder = tmp_path / "calibrations"
    monkeypatch.setenv("TELEDEX_CALIBRATIONS_DIR", str(folder))
    return folder


def test_calibrate_hand_records_the_operators_grasps_from_a_marked_session(calibrations, tmp_path, capsys):
    session = tmp_path / "long.datagrams.jsonl"
    write_session(session, LONG_FINGERED_PERSON, 5)
    calibrate_hand(["--hand", HAND, "--operator", "lena", "--recording", str(session)])
    output = capsys.readouterr().out
    calibration = HandCalibration.load(calibrations / "lena" / f"{HAND}_right.yaml")
    assert sorted(calibration.grasp_templates) == ["pinch", "wrap"]
    rows = {line.split()[0]: line for line in output.splitlines() if line.startswith("    ")}
    assert "none" in rows["open_close"] and "none" in rows["finger_pinches"] and "pinch 9" in rows["pinch"]
    # the hand-tracking config makes the measured grasps when the operator's own pinch is seen
    teleop = TeledexReplay(TeledexReplayConfig(replay_file=str(session), preset="piper_linkerhand_o6_single",
                                               control="xr_hand_tracking", hand_calibration="lena"))
    anchors = teleop.followers[""].strategy.hand_retargeter.anchors
    assert list(anchors.templates) == ["level_pinch", "side_wrap"]
    keypoints, steps = perform(LONG_FINGERED_PERSON, np.random.default_rng(6))
    assert anchors.match(keypoints[steps["pinch"]][120]).name == "level_pinch"


def test_without_marks_the_grasp_frames_are_given_and_without_grasps_the_anchors_stay_off(calibrations, tmp_path,
                                                                                           capsys):
    keypoints, steps = perform(LONG_FINGERED_PERSON, np.random.default_rng(5))
    np.save(tmp_path / "long.npy", keypoints)
    spans = ",".join(f"{kind}={steps[kind].start}:{steps[kind].stop}" for kind in GRASP_STEPS)
    calibrate_hand(["--hand", HAND, "--operator", "mia", "--recording", str(tmp_path / "long.npy"),
                    "--grasp-frames", spans])
    assert sorted(HandCalibration.load(calibrations / "mia" / f"{HAND}_right.yaml").grasp_templates) == [
        "pinch", "wrap"]
    calibrate_hand(["--hand", HAND, "--operator", "noa", "--recording", str(tmp_path / "long.npy")])
    assert "no grasp recorded" in capsys.readouterr().out
    teleop = TeledexReplay(TeledexReplayConfig(replay_file="open_close", preset="piper_linkerhand_o6_single",
                                               control="xr_hand_tracking", hand_calibration="noa"))
    assert teleop.followers[""].strategy.hand_retargeter.anchors is None
    with pytest.raises(SystemExit) as exit_info:
        calibrate_hand(["--hand", HAND, "--operator", "oli", "--recording", str(tmp_path / "long.npy"),
                        "--grasp-frames", "fist=0:10"])
    assert exit_info.value.code == 2 and "the grasps recorded are pinch, wrap" in capsys.readouterr().err


@pytest.mark.parametrize("task", ["cube_assembly", "bottle_peg_in_hole"])
def test_the_keypoint_route_works_for_another_person_with_their_own_grasps(task, tmp_path):
    """The world's person is the long-fingered one: with the hand model's anchors (as before calibration) the grasp
    never takes the robot's hand (it grazes the edge of the model's pinch for a moment) and the task fails;
    calibrated with their own grasps, it succeeds."""
    calibrated(LONG_FINGERED_PERSON).save(tmp_path / "long.yaml")
    rig = Rig.from_preset(load_preset("piper_linkerhand_o6_single"))
    world = World(rig, WorldConfig(task=task))
    grasp = "level_pinch" if task == "cube_assembly" else "side_wrap"
    for strategy, succeeds in (({}, False), ({"hand_calibration": str(tmp_path / "long.yaml"),
                                               "grasp_templates": "calibration"}, True)):
        control = ControlConfig.load("world_expert_keypoints", strategy=strategy)
        person = OperatorExpert(rig, ScriptedExpert(rig, task), control, person=LONG_FINGERED_PERSON)
        world.reset(1000)
        person.reset(world)
        outcome, strongest = EpisodeOutcome(world), 0.0  # the grasp's largest share of the robot's target
        for _ in range(int(world.task.episode_s * 25)):
            control_tick(world, person.act(world), 25)
            match = person.controller.strategy.hand_retargeter.grasp_match
            if match is not None and match.name == grasp:
                strongest = max(strongest, match.weight)
            if outcome.update():
                break
        assert (outcome.stage == "success") == succeeds, (strategy, outcome.as_dict())
        assert strongest == 1.0 if succeeds else strongest < 0.5, (strategy, strongest)


def test_a_recorded_hands_grasps_are_the_finger_shapes_of_its_frames():
    """persons.recorded_person (benchmarks/grasp_templates.py --person recorded drives the world with a real recorded
    hand this way): each grasp runs from the open frame's finger shapes to the closed frame's, as canonical angles
    measured from the keypoints, on the average adult's hand; a grasp the world does not know is refused by name."""
    stream = OperatorStream.load(STREAMS_DIR / "pinches.npz").hand_keypoints_m.astype(float)
    person = recorded_person("stream", stream, "right", {"pinch": (0, 115)})  # frame 115: thumb on the index tip
    pinch = person.grasps()["pinch"]
    np.testing.assert_allclose(pinch.open, angles_from_keypoints(stream[0], "right"))
    np.testing.assert_allclose(pinch.closed, angles_from_keypoints(stream[115], "right"))
    assert pinch.fingers == GRASP_FINGERS["pinch"]
    closed = keypoints_from_angles(pinch.at(1.0), "right")
    assert np.linalg.norm(closed[THUMB_TIP] - closed[FINGER_CHAINS["index"][-1]]) < 0.015
    with pytest.raises(ValueError, match=r"unknown grasps \['fist'\]"):
        recorded_person("stream", stream, "right", {"fist": (0, 1)})
