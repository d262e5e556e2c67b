"""Retargeting configuration: the defaults of every method, overridden by a YAML file, a name or a dict.

A retargeting config is decoded like every other config of the project (`config_files`: draccus, the library
LeRobot's command-line configs use): a name looks in configs/retargeting/, a path ending in .yaml/.yml is read as
is, omitted keys keep their defaults, and an unknown key or a wrong type is an error naming the key's dotted path.

    input_convention: mediapipe21     # or openxr26, webxr25 (see conventions.py)
    input_frame: wrist                # or world: estimate the wrist frame from the points
    low_pass_alpha: 1.0               # output filter, per stage y += α (x − y); 1 = off
    low_pass_order: 1                 # stages in a row (1 = dex-retargeting's filter; see output_filter.py)
    basin_check_period: 5             # every N frames also solve from the open hand (0 = never; see retargeter)
    hand_scale: null                  # one robot/operator scale for every segment (targets = scale × operator
                                      # keypoints from the robot's wrist point); null = the calibration's scales
    keypoint_frames: {}               # {finger: {label: frame}} for hands whose frames cannot be inferred
    fingertip_offsets_m: {}           # {link: [x, y, z]}: a fingertip at this offset in the link's frame
    base_rotation: null               # 3x3: operator-frame coords = R @ palm-link coords (default: from the geometry)
    joint_map: ""                     # joint_mapping: a map file (default configs/joint_maps/<model>[_<side>].yaml)
    grasp_anchors: {near_mm, far_mm}  # how near a person's grasp the hand makes the measured grasp (grasp_anchors.py)
    teledex: {...}                    # TeleDexSettings fields
    dexpilot: {...}                   # DexPilotSettings fields
    solver: {...}                     # SolverSettings fields

configs/retargeting/default.yaml lists every field with its default.
"""

from dataclasses import dataclass, field

from ..config_files import load_config
from ..errors import ConfigError
from ..paths import CONFIGS_DIR
from .conventions import check_convention
from .dexpilot import DexPilotSettings
from .grasp_anchors import GraspAnchorSettings
from .solver import SolverSettings
from .teledex import TeleDexSettings

RETARGETING_CONFIGS_DIR = CONFIGS_DIR / "retargeting"


@dataclass(frozen=True)
class RetargetingConfig:
    input_convention: str = "mediapipe21"
    input_frame: str = "wrist"
    low_pass_alpha: float = 1.0
    low_pass_order: int = 1
    basin_check_period: int = 5
    hand_scale: float | None = None
    keypoint_frames: dict[str, dict[str, str]] = field(default_factory=dict)
    fingertip_offsets_m: dict[str, list[float]] = field(default_factory=dict)
    base_rotation: list[list[float]] | None = None
    joint_map: str = ""
    grasp_anchors: GraspAnchorSettings = field(default_factory=GraspAnchorSettings)
    teledex: TeleDexSettings = field(default_factory=TeleDexSettings)
    dexpilot: DexPilotSettings = field(default_factory=DexPilotSettings)
    solver: SolverSettings = field(default_factory=SolverSettings)

    def __post_init__(self):
        check_convention(self.input_convention, self.input_frame)
        if not 0.0 < self.low_pass_alpha <= 1.0:
            raise ConfigError(f"low_pass_alpha must be in (0, 1], got {self.low_pass_alpha}")
        if self.low_pass_order < 1:
            raise ConfigError(f"low_pass_order must be >= 1, got {self.low_pass_order}")
        if self.hand_scale is not None and not 0.1 <= self.hand_scale <= 10.0:
            raise ConfigError(f"hand_scale must be a robot/operator size ratio in [0.1, 10], got {self.hand_scale}")

    @classmethod
    def load(cls, source=None) -> "RetargetingConfig":
        """From None (defaults), a dict, a RetargetingConfig, a YAML path or a name in configs/retargeting/."""
        return load_config(cls, source, RETARGETING_CONFIGS_DIR, "retargeting config")
