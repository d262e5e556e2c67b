"""Bad configuration gets an error that names the problem and the fix."""

import pytest

from lerobot_robot_teledex import TeledexArm, TeledexArmConfig, TeledexConfig, TeledexHand, TeledexHandConfig
from lerobot_teleoperator_teledex import TeledexReplay, TeledexReplayConfig
from teledex_lerobot.errors import ConfigError
from teledex_lerobot.kinematics import UrdfError


def test_unknown_preset_lists_available():
    with pytest.raises(ValueError, match="Unknown preset 'nope'.*piper_linkerhand_o6_single"):
        TeledexConfig(preset="nope")


def test_unknown_backend():
    with pytest.raises(ValueError, match="backend must be one of"):
        TeledexArmConfig(backend="hardware")


def test_missing_urdf(tmp_path):
    with pytest.raises(UrdfError, match="URDF file not found"):
        TeledexArm(TeledexArmConfig(model=str(tmp_path / "missing.urdf"), backend="fake"))


def test_malformed_urdf(tmp_path):
    path = tmp_path / "broken.urdf"
    path.write_text("<robot name='x'><link name='a'></robot>")
    with pytest.raises(UrdfError, match="broken.urdf"):
        TeledexArm(TeledexArmConfig(model=str(path), backend="fake"))


def test_unknown_model_name():
    with pytest.raises(ValueError, match="Unknown model 'ur5'.*piper"):
        TeledexArm(TeledexArmConfig(model="ur5", backend="fake"))


def test_hand_given_as_arm():
    with pytest.raises(ConfigError, match="linkerhand_o6 is a hand, and --robot.type=teledex_arm drives an arm"):
        TeledexArm(TeledexArmConfig(model="linkerhand_o6", backend="fake"))


def test_joint_not_in_model():
    with pytest.raises(UrdfError, match="bogus_joint"):
        TeledexHand(TeledexHandConfig(joints=["index_mcp_pitch", "bogus_joint"], backend="fake"))


def test_home_joint_not_in_model():
    with pytest.raises(UrdfError, match="elbow"):
        TeledexArm(TeledexArmConfig(home={"elbow": 1.0}, backend="fake"))


def test_unknown_replay_file():
    with pytest.raises(ValueError, match="Unknown recorded input file 'no_such_stream'.*demo_grasp"):
        TeledexReplay(TeledexReplayConfig(replay_file="no_such_stream"))


def test_operator_stream_given_for_replay_names_the_converter(tmp_path):
    with pytest.raises(ValueError, match="stream-to-datagrams"):
        TeledexReplay(TeledexReplayConfig(replay_file="configs/streams/open_close.npz"))


def glove_control_with_joint_map(tmp_path, map_text: str) -> str:
    (tmp_path / "map.yaml").write_text(map_text)
    control = tmp_path / "control.yaml"
    control.write_text(f"strategy: {{strategy: direct, hand_method: joint_mapping, joint_map: {tmp_path}/map.yaml}}\n")
    return str(control)


def test_joint_map_with_unknown_joint(tmp_path):
    unknown_joint = "not_a_joint: {from: {index_mcp_flex: 1.0}, human_range_rad: [0, 1]}\n"
    control = glove_control_with_joint_map(tmp_path, unknown_joint)
    with pytest.raises(ValueError, match="not_a_joint"):
        TeledexReplay(TeledexReplayConfig(replay_file="glove_open_close", hand_model="linkerhand_o6", control=control))


def test_joint_map_with_unknown_human_angle(tmp_path):
    from teledex_lerobot.paths import JOINT_MAPS_DIR

    text = (JOINT_MAPS_DIR / "linkerhand_o6.yaml").read_text().replace("index_mcp_flex", "index_knuckle", 1)
    control = glove_control_with_joint_map(tmp_path, text)
    with pytest.raises(ValueError, match="unknown human angle 'index_knuckle'"):
        TeledexReplay(TeledexReplayConfig(replay_file="glove_open_close", hand_model="linkerhand_o6", control=control))


def test_a_preset_of_several_rigs_names_the_robot_type_that_takes_it():
    with pytest.raises(ValueError, match="several rigs.*--robot.type=teledex_followers"):
        TeledexConfig(preset="bimanual_piper_linkerhand_l10")


def test_bad_preset_key(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("arm: {model: piper, sidee: left}\n")
    with pytest.raises(ValueError, match="arm.*sidee.*not valid"):
        TeledexConfig(preset=str(path))
