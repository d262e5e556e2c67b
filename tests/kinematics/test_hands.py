"""One descriptor per hand (configs/hands/<name>.yaml): every hand table is derived from it, and a wrong descriptor is
one line naming its file and the key."""

import shutil
from pathlib import Path

import pytest
import yaml

from teledex_lerobot.control.hand_grasps import GRASP_SHAPES
from teledex_lerobot.errors import ConfigError, ModelError
from teledex_lerobot.kinematics.catalogue import BUILTIN_MODELS, resolve_urdf
from teledex_lerobot.kinematics.hands import HANDS, load_hand
from teledex_lerobot.operator.object_grasps import human_grasps
from teledex_lerobot.paths import HANDS_DIR
from teledex_lerobot.retargeting.joint_mapping import joint_map_path
from teledex_lerobot.world.grasps import GRASPS, grasp_for
from teledex_lerobot.world.tasks import ONE_RIG_TASKS

ACME = Path(__file__).parents[1] / "dummy_vendor" / "hand"


def test_every_hand_table_lists_the_described_hands():
    assert {"linkerhand_o6", "linkerhand_l10", "linkerhand_l20"} <= set(HANDS)
    assert {name for name, info in BUILTIN_MODELS.items() if info.kind == "hand"} == set(HANDS)
    assert set(GRASP_SHAPES) == set(GRASPS) == set(HANDS)
    for hand in HANDS.values():
        assert set(GRASPS[hand.name]) == set(ONE_RIG_TASKS)
        for side in ("right", "left"):
            assert resolve_urdf(hand.name, side) == hand.urdf_path(side) == HANDS_DIR.parent / "urdf" / \
                f"{hand.name}_{side}.urdf"
            assert joint_map_path(hand.name, side).parent == HANDS_DIR.parent / "joint_maps"
    assert joint_map_path("linkerhand_l10", "left").name == "linkerhand_l10_left.yaml"


def test_the_people_a_grasp_answers_are_those_the_operator_model_makes():
    from typing import get_args, get_type_hints

    from teledex_lerobot.kinematics.hands import GraspShape

    assert set(get_args(get_type_hints(GraspShape)["human"])) == set(human_grasps())


def _descriptor(tmp_path: Path, **changes) -> Path:
    """The Acme hand's descriptor in tmp_path, with top-level keys changed (None: removed)."""
    shutil.copytree(ACME, tmp_path, dirs_exist_ok=True)
    path = tmp_path / "acme_hand.yaml"
    data = yaml.safe_load(path.read_text())
    for key, value in changes.items():
        if value is None:
            data.pop(key)
        else:
            data[key] = value
    path.write_text(yaml.safe_dump(data))
    return path


def test_a_descriptor_is_read_with_its_paths_relative_to_it(tmp_path):
    hand = load_hand(_descriptor(tmp_path))
    assert hand.name == "acme_hand" and hand.vendor == "dummy_vendor"
    assert hand.urdf_path("left") == tmp_path / "acme_hand" / "acme_hand_left.urdf"
    assert hand.joint_map_path("right") == tmp_path / "acme_hand" / "joint_map.yaml"
    assert hand.grasps["two_finger_pinch"].closed == {"_joint": 0.9}
    assert hand.world_grasps["cube_assembly"].hand_axes == ((0.0, -1.0, 0.0), (0.0, 0.0, -1.0), (1.0, 0.0, 0.0))


@pytest.mark.parametrize(("changes", "message"), [
    ({"grasp": {}}, r"The fields `grasp` are not valid"),
    ({"description": None}, r"Missing required field\(s\) `description`"),
    ({"grasps": {"two_finger_pinch": {"human": "pintch", "preshape": {}, "closed": {}}}},
     r"`grasps\.two_finger_pinch\.human`: Cannot convert 'pintch'.*pinch, wrap"),
    ({"grasps": {"two_finger_pinch": {"human": "pinch", "preshape": {"finger_left_joint": "bent"}, "closed": {}}}},
     r"`grasps\.two_finger_pinch\.preshape\.finger_left_joint`: Couldn't parse 'bent' into a float"),
    ({"urdf": {"middle": "acme_hand/acme_hand_right.urdf"}}, r"`urdf\.middle`: a side is 'right' or 'left'"),
    ({"urdf": {"right": "acme_hand/missing_right.urdf"}}, r"`urdf\.right`: no file .*missing_right\.urdf"),
    ({"urdf": {"right": "acme_hand/acme_hand_left.urdf"}}, r"`urdf\.right`: name the file acme_hand_right\.urdf"),
    ({"urdf": {}}, r"`urdf` names no file"),
    ({"joint_map": {"left": "nowhere.yaml"}}, r"`joint_map\.left`: no file"),
    ({"world_grasps": {"cube_assembly": {"grasp": "wrap", "hand_axes": [[1, 0, 0], [0, 1, 0], [0, 0, 1]],
                                         "object_in_hand_m": [0, 0, 0], "approach_m": [0, 0, 0], "symmetry": 0}}},
     r"`world_grasps\.cube_assembly\.grasp`: 'wrap' is not one of its grasps \(two_finger_pinch\)"),
    ({"world_grasps": {"cube_assembly": {"grasp": "two_finger_pinch", "hand_axes": [[1, 0, 0], [0, 1, 0]],
                                         "object_in_hand_m": [0, 0, 0], "approach_m": [0, 0, 0], "symmetry": 0}}},
     r"`world_grasps\.cube_assembly\.hand_axes`: Expected 3 items, got 2"),
])
def test_a_wrong_descriptor_is_one_line_naming_its_file_and_key(tmp_path, changes, message):
    path = _descriptor(tmp_path, **changes)
    with pytest.raises(ConfigError, match=message) as caught:
        load_hand(path)
    assert str(path) in str(caught.value) and "\n" not in str(caught.value)


def test_a_side_the_hand_has_no_urdf_for(tmp_path):
    hand = load_hand(_descriptor(tmp_path, urdf={"right": "acme_hand/acme_hand_right.urdf"}))
    with pytest.raises(ModelError, match=r"Hand 'acme_hand' has no left URDF .*acme_hand\.yaml.*`urdf`.*right hand"):
        hand.urdf_path("left")
    assert hand.joint_map_path("left") == tmp_path / "acme_hand" / "joint_map.yaml"


def test_a_task_a_hand_has_no_grasp_for():
    with pytest.raises(ConfigError, match=r"Hand 'acme_hand' has no measured grasp for task 'cube_assembly' "
                                          r"\(measured: linkerhand_l10: .*\).*configs/hands/<hand>\.yaml"):
        grasp_for("acme_hand", "cube_assembly")
