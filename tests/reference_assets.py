"""Published reference artefacts the tests check the project against, and the fixtures that carry their facts.

From a package registry (test extras in pyproject.toml, so everywhere): dex-retargeting 0.5.0, its official configs
(`dex_teleop_configs()`, identical to those of its repository at commit 3f56141) and its solver.

Not on any registry, so their facts are fixtures under tests/fixtures/, each with its provenance (repository,
paths, commit), written by tests/fixtures/regenerate.py from the artefact; the tests run on the fixtures
everywhere and on the artefacts too where a checkout is here:
- linker-bot/linkerhand-python-sdk, at `$LINKERHAND_SDK` (a checkout or its git directory): the vendor's LinkerHand
  byte ranges per joint (LinkerHand/utils/mapping.py) and named poses (LinkerHand/config/L10_positions.yaml, the
  presets of example/gui_control/config/constants.py) -> fixtures/linkerhand_sdk.json;
- in `$TELEDEX_REFERENCE_ASSETS` (default `~/.cache/teledex/reference`), plain checkouts of
  - `dex-urdf/`: dexsuite/dex-urdf (commit 93505db): its hand URDFs -> fixtures/dex_urdf_hands.json, each hand's
    kinematic tree (joints, origins, axes, limits, mimics; no meshes or inertias) and its leaf links' positions at
    two poses, computed on the real file, which the tree rebuilt from the fixture must reproduce;
  - `dex-retargeting/`: dexsuite/dex-retargeting (commit 3f56141), for its example MediaPipe recording
    `example/profiling/human_joint_right.pkl` (MIT), which no fixture replaces (it is a whole published file).
Clone the repositories by those names into those places (`git clone <host>/dexsuite/dex-urdf`, ...).
"""

import ast
import importlib.resources
import json
import os
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import yaml

FIXTURES = Path(__file__).parent / "fixtures"
ASSETS = Path(os.environ.get("TELEDEX_REFERENCE_ASSETS", Path.home() / ".cache" / "teledex" / "reference"))
DEX_URDF_HANDS = ASSETS / "dex-urdf" / "robots" / "hands"
DEX_RETARGETING = ASSETS / "dex-retargeting"
DEX_TELEOP_CONFIGS = DEX_RETARGETING / "src" / "dex_retargeting" / "configs" / "teleop"
HUMAN_RECORDING = DEX_RETARGETING / "example" / "profiling" / "human_joint_right.pkl"
MISSING = (f"reference assets not found under {ASSETS} (set TELEDEX_REFERENCE_ASSETS): clone dexsuite/dex-urdf and "
           "dexsuite/dex-retargeting there (see tests/reference_assets.py)")
MISSING_URDFS = (f"no dexsuite/dex-urdf checkout at {DEX_URDF_HANDS.parents[1]} (set TELEDEX_REFERENCE_ASSETS; see "
                 "tests/reference_assets.py)")

# dex-retargeting's operator frame (x out of the palm, y from the little finger to the thumb on a right hand and
# the reverse on a left hand, z from the wrist to the middle finger) to ours (x toward the little finger on a right
# hand and toward the thumb on a left hand, y out of the palm, z the same): ours = DEX_TO_OURS @ theirs, both sides.
DEX_TO_OURS = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])


def available() -> bool:
    return DEX_URDF_HANDS.is_dir() and DEX_TELEOP_CONFIGS.is_dir() and HUMAN_RECORDING.is_file()


def human_recording() -> np.ndarray:
    """dex-retargeting's example recording: (621, 21, 3) MediaPipe keypoints of a right hand at 30 Hz, metres,
    wrist-centred, in dex-retargeting's operator frame. Stored as a pickled list of arrays (the file is read as
    published; it comes from a checkout the user made, not from a network source)."""
    return np.array(list(np.load(HUMAN_RECORDING, allow_pickle=True)), dtype=float)


def load_fixture(name: str) -> dict:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def facts_only(fixture: dict) -> dict:
    """A fixture without its provenance: what must equal the facts read from the artefact."""
    return {key: value for key, value in fixture.items() if key != "provenance"}


def _git_commit(root: Path) -> str:
    """The commit of a checkout or of a git directory."""
    where = ["--git-dir", str(root)] if (root / "HEAD").is_file() else ["-C", str(root)]
    return subprocess.run(["git", *where, "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()


# ---- dex-retargeting (PyPI) ----------------------------------------------------------------------------------------

def dex_teleop_configs() -> Path:
    """The teleop configs shipped in dex-retargeting's wheel (a test extra)."""
    try:
        package = importlib.resources.files("dex_retargeting")
    except ModuleNotFoundError:
        raise ModuleNotFoundError("dex-retargeting, a test extra, is not installed: `make env` (or "
                                  "`.venv/bin/pip install -e '.[test]'`)") from None
    return Path(str(package / "configs" / "teleop"))


def dex_vector_configs() -> list[Path]:
    """Its vector configs of the hands (not the DexPilot ones, not the Panda gripper)."""
    return sorted(p for p in dex_teleop_configs().glob("*_hand_*.yml") if "dexpilot" not in p.name)


def read_dex_config(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))["retargeting"]


# ---- linker-bot/linkerhand-python-sdk ------------------------------------------------------------------------------

LINKERHAND_SDK_ENV = "LINKERHAND_SDK"
# Where this workspace's fetch tool puts the repository (a git directory), used when LINKERHAND_SDK is unset.
LINKERHAND_FETCHED = Path("/work/.mirror/linker-bot+linkerhand-python-sdk/repo")
LINKERHAND_FIXTURE = "linkerhand_sdk.json"
LINKERHAND_FILES = {"mapping": "LinkerHand/utils/mapping.py", "l10_positions": "LinkerHand/config/L10_positions.yaml",
                    "gui_presets": "example/gui_control/config/constants.py"}
LINKERHAND_MAPPED = ("o6", "l10", "l20")  # mapping.py's model prefixes of the hands we map
LINKERHAND_GUI_MODELS = ("L10", "L20")
MISSING_LINKERHAND = (f"no linker-bot/linkerhand-python-sdk checkout (set {LINKERHAND_SDK_ENV} to a checkout or its "
                      "git directory; see tests/reference_assets.py)")


def linkerhand_sdk() -> Path | None:
    """The SDK checkout (or git directory) when one is here."""
    root = Path(os.environ.get(LINKERHAND_SDK_ENV, LINKERHAND_FETCHED))
    return root if (root / LINKERHAND_FILES["mapping"]).is_file() or (root / "HEAD").is_file() else None


def _sdk_text(root: Path, path: str) -> str:
    if (root / path).is_file():
        return (root / path).read_text(encoding="utf-8")
    return subprocess.run(["git", "--git-dir", str(root), "show", f"HEAD:{path}"], capture_output=True, text=True,
                          check=True).stdout


def linkerhand_facts(root: Path) -> dict:
    """The vendor facts our LinkerHand mapping is checked against, read from the SDK's files without running them:
    mapping.py's ranges and directions of the hands we map, the GUI's named poses of the L10 and L20, and the
    L10 poses the SDK sends to each hand."""
    tree = ast.parse(_sdk_text(root, LINKERHAND_FILES["mapping"]))
    mapping = {node.targets[0].id: ast.literal_eval(node.value) for node in tree.body
               if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
               and isinstance(node.value, ast.List) and node.targets[0].id.split("_")[0] in LINKERHAND_MAPPED}
    presets = {}
    for node in ast.walk(ast.parse(_sdk_text(root, LINKERHAND_FILES["gui_presets"]))):
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if isinstance(key, ast.Constant) and key.value in LINKERHAND_GUI_MODELS and isinstance(value, ast.Call):
                    presets[key.value] = next(ast.literal_eval(keyword.value) for keyword in value.keywords
                                              if keyword.arg == "preset_actions")
    poses = yaml.safe_load(_sdk_text(root, LINKERHAND_FILES["l10_positions"]))
    l10_positions = {side: {pose["ACTION_NAME"]: pose["POSITION"] for pose in poses[f"{side.upper()}_HAND"]}
                     for side in ("left", "right")}
    return {"mapping": mapping, "gui_presets": presets, "l10_positions": l10_positions}


def linkerhand_fixture_from(root: Path) -> dict:
    provenance = {"repository": "linker-bot/linkerhand-python-sdk", "commit": _git_commit(root),
                  "files": LINKERHAND_FILES, "written_by": "tests/fixtures/regenerate.py"}
    return {"provenance": provenance} | linkerhand_facts(root)


# ---- dexsuite/dex-urdf ---------------------------------------------------------------------------------------------

DEX_URDF_FIXTURE = "dex_urdf_hands.json"


def dex_urdf_checkout() -> Path | None:
    return DEX_URDF_HANDS if DEX_URDF_HANDS.is_dir() else None


def _floats(element, key: str) -> list[float] | None:
    return None if element is None or element.get(key) is None else [float(v) for v in element.get(key).split()]


def urdf_kinematics(text: str) -> dict:
    """A URDF's kinematic tree as written (links, joints: type, parent, child, origin, axis, limits, mimic): all
    that our loader and dex-retargeting's read for kinematics; meshes, inertias and collisions left out."""
    robot = ET.fromstring(text)
    joints = []
    for element in robot.findall("joint"):
        joint = {"name": element.get("name"), "type": element.get("type"),
                 "parent": element.find("parent").get("link"), "child": element.find("child").get("link")}
        for key in ("xyz", "rpy"):
            if (value := _floats(element.find("origin"), key)) is not None:
                joint[key] = value
        if (axis := _floats(element.find("axis"), "xyz")) is not None:
            joint["axis"] = axis
        if (limit := element.find("limit")) is not None:
            joint["limit"] = {key: float(value) for key, value in limit.attrib.items()}
        if (mimic := element.find("mimic")) is not None:
            joint["mimic"] = {key: value if key == "joint" else float(value) for key, value in mimic.attrib.items()}
        joints.append(joint)
    return {"robot": robot.get("name"), "links": [link.get("name") for link in robot.findall("link")],
            "joints": joints}


def kinematics_urdf(kinematics: dict) -> str:
    """The URDF text of a kinematic tree from `urdf_kinematics`."""
    def vector(values):
        return " ".join(map(repr, values))

    parts = [f'<robot name="{kinematics["robot"]}">', *(f'<link name="{name}"/>' for name in kinematics["links"])]
    for joint in kinematics["joints"]:
        origin = " ".join(f'{key}="{vector(joint[key])}"' for key in ("xyz", "rpy") if key in joint)
        parts.append(f'<joint name="{joint["name"]}" type="{joint["type"]}"><parent link="{joint["parent"]}"/>'
                     f'<child link="{joint["child"]}"/><origin {origin}/>')
        if "axis" in joint:
            parts.append(f'<axis xyz="{vector(joint["axis"])}"/>')
        for tag in ("limit", "mimic"):
            if tag in joint:
                attributes = " ".join(f'{key}="{value if isinstance(value, str) else repr(value)}"'
                                      for key, value in joint[tag].items())
                parts.append(f"<{tag} {attributes}/>")
        parts.append("</joint>")
    return "\n".join(parts + ["</robot>"])


def leaf_positions(urdf: Path) -> dict:
    """The positions (root frame, metres) of a URDF's leaf links (its fingertips among them) at two poses: the
    reference pose (zero angles clipped into the limits) and the middle of every joint's range."""
    from teledex_lerobot.kinematics import KinematicModel

    model = KinematicModel.from_urdf(urdf)
    parents = {joint.parent for joint in model.description.joints}
    leaves = [link for link in model.frame_names if link not in parents]
    poses = {"reference": model.clip(np.zeros(len(model.joint_names))), "middle": (model.lower + model.upper) / 2}
    return {"joints": model.joint_names, "leaves": leaves,
            "poses": {name: {"q": q.tolist(), "positions": model.frame_positions(q, leaves).tolist()}
                      for name, q in poses.items()}}


# The Shadow hand's model is GPL-3.0: its geometry is not carried as a fixture; its tests run on a checkout only.
COPYLEFT_HANDS = ("shadow_hand/",)


def dex_urdf_files(hands: Path) -> list[str]:
    return sorted(str(path.relative_to(hands)) for path in hands.rglob("*.urdf"))


def in_fixture(name: str) -> bool:
    """Whether a dex-urdf hand file (path under robots/hands) has its facts in the fixture."""
    return not name.startswith(COPYLEFT_HANDS)


def dex_urdf_facts(hands: Path) -> dict:
    """Per hand URDF of the checkout (path under robots/hands): its kinematic tree and leaf positions, or the name
    of an earlier file with the same tree (dex-urdf's *_glb.urdf variants differ only in their meshes)."""
    facts, first = {}, {}
    for name in filter(in_fixture, dex_urdf_files(hands)):
        kinematics = urdf_kinematics((hands / name).read_text(encoding="utf-8"))
        key = json.dumps(kinematics, sort_keys=True)
        if key in first:
            facts[name] = {"same_as": first[key]}
        else:
            first[key] = name
            facts[name] = {"kinematics": kinematics, "leaf_positions": leaf_positions(hands / name)}
    return {"hands": facts}


def fixture_hand(fixture: dict, name: str) -> dict:
    """One hand of the dex-urdf fixture: its kinematics and leaf positions."""
    hand = fixture["hands"][name]
    return fixture["hands"][hand["same_as"]] if "same_as" in hand else hand


def dex_urdf_fixture_from(hands: Path) -> dict:
    provenance = {"repository": "dexsuite/dex-urdf", "commit": _git_commit(hands), "path": "robots/hands",
                  "written_by": "tests/fixtures/regenerate.py"}
    return {"provenance": provenance} | dex_urdf_facts(hands)


def write_fixture_hands(folder: Path) -> Path:
    """The dex-urdf fixture's hands as URDF files under `folder`, at their paths in dex-urdf's robots/hands (the
    layout dex-retargeting's configs name them by); returns `folder`."""
    fixture = load_fixture(DEX_URDF_FIXTURE)
    for name in fixture["hands"]:
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(kinematics_urdf(fixture_hand(fixture, name)["kinematics"]), encoding="utf-8")
    return folder


# ---- vendor hand URDFs beyond dex-urdf -----------------------------------------------------------------------------

# Where this workspace's fetch tool puts repositories (git directories), read when TELEDEX_VENDOR_MIRRORS is unset.
VENDOR_MIRRORS = Path(os.environ.get("TELEDEX_VENDOR_MIRRORS", "/work/.mirror"))
VENDOR_FIXTURE = "vendor_hands.json"
MISSING_VENDOR = (f"no vendor hand repositories under {VENDOR_MIRRORS} (set TELEDEX_VENDOR_MIRRORS to a folder of "
                  "<owner>+<name>/repo git directories)")
# Per vendor hand file (right and left where both are published): where it is, its licence, and the reference base
# frame, judged by a person from the URDF (joint positions, axes and limits at the zero pose), not computed by the
# inference: `frame` is a link whose axes the vendor drew along the palm, `z` the axis of that link running from the
# wrist toward the fingers, `y` the one out of the palm face (the side the fingertips flex toward). `tips` are the
# fingertip frames thumb first, then index to little finger, read from the vendor's link names and documentation.
# Hands carried only here, not as fixtures: iotdesignshop/dexhand_description (CC BY-NC-SA 4.0, share-alike),
# song-jisu/hopejr_hand_description (no licence given); benchmarks/hand_layouts.py reads them from a mirror.
VENDOR_HANDS = {
    "brainco_revo2_right": {"repository": "unitreerobotics/xr_teleoperate",
                            "path": "assets/brainco_hand/brainco_right.urdf",
                            "licence": "Apache-2.0", "side": "right", "frame": "base_link", "z": "-y", "y": "-x",
                            "reason": "root at the wrist flange; knuckles 8.5 cm along -y, spread along z; "
                                      "fingertips flex toward -x",
                            "tips": ["right_thumb_tip", "right_index_tip", "right_middle_tip", "right_ring_tip",
                                     "right_pinky_tip"]},
    "brainco_revo2_left": {"repository": "unitreerobotics/xr_teleoperate",
                           "path": "assets/brainco_hand/brainco_left.urdf",
                           "licence": "Apache-2.0", "side": "left", "frame": "base_link", "z": "-y", "y": "-x",
                           "reason": "mirror of the right hand about the root's y-z plane",
                           "tips": ["left_thumb_tip", "left_index_tip", "left_middle_tip", "left_ring_tip",
                                    "left_pinky_tip"]},
    "unitree_inspire_right": {"repository": "unitreerobotics/xr_teleoperate",
                              "path": "assets/inspire_hand/inspire_hand_right.urdf", "licence": "Apache-2.0",
                              "side": "right", "frame": "R_hand_base_link", "z": "-y", "y": "-x",
                              "reason": "root at the wrist; knuckles 13.7 cm along -y in a row along z; fingertips "
                                        "flex toward -x",
                              "tips": ["R_thumb_tip", "R_index_tip", "R_middle_tip", "R_ring_tip", "R_pinky_tip"]},
    "unitree_inspire_left": {"repository": "unitreerobotics/xr_teleoperate",
                             "path": "assets/inspire_hand/inspire_hand_left.urdf", "licence": "Apache-2.0",
                             "side": "left", "frame": "L_hand_base_link", "z": "-y", "y": "-x",
                             "reason": "mirror of the right hand about the root's x-y plane",
                             "tips": ["L_thumb_tip", "L_index_tip", "L_middle_tip", "L_ring_tip", "L_pinky_tip"]},
    "unitree_dex3_right": {"repository": "unitreerobotics/xr_teleoperate",
                           "path": "assets/unitree_hand/unitree_dex3_right.urdf", "licence": "Apache-2.0",
                           "side": "right", "frame": "base_link", "z": "-y", "y": "-x",
                           "reason": "root at the wrist; the two fingers' knuckles 7.8 cm along -y at z = -/+2.8 cm; "
                                     "their limits flex them toward -x, where the thumb rests",
                           "tips": ["thumb_tip", "index_tip", "middle_tip"]},
    "unitree_dex3_left": {"repository": "unitreerobotics/xr_teleoperate",
                          "path": "assets/unitree_hand/unitree_dex3_left.urdf", "licence": "Apache-2.0",
                          "side": "left", "frame": "base_link", "z": "-y", "y": "-x",
                          "reason": "as the right hand, mirrored about the root's x-y plane",
                          "tips": ["thumb_tip", "index_tip", "middle_tip"]},
    "tesollo_dg5f_right": {"repository": "tesollodelto/dg5f_ros2", "path": "dg5f_description/urdf/dg5f_right.urdf",
                           "licence": "BSD-3-Clause", "side": "right", "frame": "rl_dg_mount", "z": "+z", "y": "+x",
                           "reason": "root is the mount flange; knuckles 17 cm along +z in a row along y; fingertips "
                                     "flex toward +x",
                           "tips": ["rl_dg_1_tip", "rl_dg_2_tip", "rl_dg_3_tip", "rl_dg_4_tip", "rl_dg_5_tip"]},
    "tesollo_dg5f_left": {"repository": "tesollodelto/dg5f_ros2", "path": "dg5f_description/urdf/dg5f_left.urdf",
                          "licence": "BSD-3-Clause", "side": "left", "frame": "ll_dg_mount", "z": "+z", "y": "+x",
                          "reason": "mirror of the right hand about the root's x-z plane",
                          "tips": ["ll_dg_1_tip", "ll_dg_2_tip", "ll_dg_3_tip", "ll_dg_4_tip", "ll_dg_5_tip"]},
    "orcahand_v2_right": {"repository": "orcahand/orcahand_description", "path": "v2/models/urdf/orcahand_right.urdf",
                          "licence": "MIT", "side": "right", "frame": "R-Carpals_8d1f1041", "z": "+z", "y": "+y",
                          "reason": "root is the forearm, tilted; the carpals link (below the wrist joint) has the "
                                    "finger abduction axes along +y and the knuckle row along x",
                          "tips": ["T-DP_b7429e50#tip", "I-FingerTipAssembly_ec49c16c#tip",
                                   "M-FingerTipAssembly_34afb748#tip", "M-FingerTipAssembly_424a8e75#tip",
                                   "P-FingerTipAssembly_cd219176#tip"]},
    "ruiyan_rh2_right": {"repository": "renesas-rdk/ruiyan_rh2_hand_description",
                         "path": "urdf/reference/ruihand6_right_ref.urdf", "licence": "Apache-2.0 (package.xml)",
                         "side": "right", "frame": "base_link", "z": "+z", "y": "+x",
                         "reason": "root at the wrist; knuckles 11 cm along +z in a row along y; fingertips flex "
                                   "toward +x (numbered links fy1..fy5: thumb to little finger)",
                         "tips": ["fy14_Link#tip", "fy23_Link#tip", "fy33_Link#tip", "fy43_Link#tip", "fy53_Link#tip"]},
    "wuji_right": {"repository": "wuji-technology/wuji-hand-description", "path": "urdf/right.urdf", "licence": "MIT",
                   "side": "right", "frame": "right_palm_link", "z": "+z", "y": "+x",
                   "reason": "root at the wrist; knuckles 9-10 cm along +z in a row along y; fingertips flex toward "
                             "+x (finger1..5: thumb to little finger)",
                   "tips": [f"right_finger{i}_tip_link" for i in range(1, 6)]},
    "wuji_left": {"repository": "wuji-technology/wuji-hand-description", "path": "urdf/left.urdf", "licence": "MIT",
                  "side": "left", "frame": "left_palm_link", "z": "+z", "y": "+x",
                  "reason": "mirror of the right hand about the root's x-z plane",
                  "tips": [f"left_finger{i}_tip_link" for i in range(1, 6)]},
    "psyonic_ability_right": {"repository": "psyonicinc/ability-hand-api", "path": "URDF/ability_hand_right_large.urdf",
                              "licence": "MIT", "side": "right", "frame": "base", "z": "+z", "y": "+y",
                              "reason": "root at the wrist; knuckles 9-10 cm along +z in a row along x; fingertips "
                                        "flex toward +y",
                              "tips": ["fsr29", "fsr5", "fsr11", "fsr17", "fsr23"]},
    "simlab_allegro_right": {"repository": "simlabrobotics/allegro_hand_ros_v4",
                             "path": "src/allegro_hand_description/allegro_hand_description_right.urdf",
                             "licence": "BSD (SimLab)", "side": "right", "frame": "palm_link", "z": "+z", "y": "+x",
                             "reason": "root at the palm's centre, 1.7 cm below the knuckles (no wrist link); "
                                       "fingers along +z, flexing toward +x",
                             "tips": ["link_15.0_tip", "link_3.0_tip", "link_7.0_tip", "link_11.0_tip"]},
}
MIRROR_ONLY_HANDS = {
    "iotdesign_dexhand_right": {"repository": "iotdesignshop/dexhand_description", "path": "urdf/dexhand-right.urdf",
                                "licence": "CC-BY-NC-SA-4.0", "side": "right"},
    "hopejr_right": {"repository": "song-jisu/hopejr_hand_description", "path": "urdf/hopejr_hand.urdf",
                     "licence": "none given", "side": "right"},
    "oymotion_rohand_right": {"repository": "oymotion/rohand_urdf_ros2", "path": "urdf/rohand_right.urdf",
                              "licence": "MIT", "side": "right"},
}


def _mirror(repository: str) -> Path | None:
    folder = VENDOR_MIRRORS / repository.replace("/", "+") / "repo"
    for git_dir in (folder, folder / ".git"):
        if (git_dir / "HEAD").is_file():
            return git_dir
    return None


def vendor_urdf_text(repository: str, path: str) -> tuple[str, str] | None:
    """(URDF text, commit) of a file in a mirrored repository, or None when the mirror is not here."""
    git_dir = _mirror(repository)
    if git_dir is None:
        return None
    text = subprocess.run(["git", "--git-dir", str(git_dir), "show", f"HEAD:{path}"], capture_output=True, text=True,
                          check=True).stdout
    return text, _git_commit(git_dir)


def vendor_fixture_from_mirrors() -> dict | None:
    """The vendor hands' kinematic trees with their provenance, read from the mirrors (None when none is here)."""
    hands = {}
    for name, hand in VENDOR_HANDS.items():
        found = vendor_urdf_text(hand["repository"], hand["path"])
        if found is None:
            continue
        text, commit = found
        hands[name] = {"provenance": {"repository": hand["repository"], "path": hand["path"], "commit": commit,
                                      "licence": hand["licence"]},
                       "kinematics": urdf_kinematics(text)}
    if not hands:
        return None
    return {"provenance": {"written_by": "tests/fixtures/regenerate.py", "facts": "kinematic trees only (no meshes)"},
            "hands": hands}


def write_vendor_hands(folder: Path) -> dict[str, Path]:
    """The vendor fixture's hands as URDF files under `folder`: name -> path."""
    fixture = load_fixture(VENDOR_FIXTURE)
    paths = {}
    for name, hand in fixture["hands"].items():
        paths[name] = folder / f"{name}.urdf"
        paths[name].write_text(kinematics_urdf(hand["kinematics"]), encoding="utf-8")
    return paths
