"""Retargeting configuration: the defaults of every method, overridden by a YAML file or a dict.

Schema (every key optional; unknown keys are an error that lists the valid ones):

    input_convention: mediapipe21     # or openxr26, webxr25 (see conventions.py)
    input_frame: wrist                # or world: estimate the wrist frame from the points
    low_pass_alpha: 1.0               # output filter y += α (x − y); 1 = off
    basin_check_period: 5             # every N frames also solve from the open hand (0 = never; see retargeter)
    hand_scale: null                  # one robot/operator scale for every segment (targets = scale × operator
                                      # keypoints from the robot's wrist point); null = the calibration's scales
    keypoint_frames: {}               # {finger: {label: frame}} for hands whose frames cannot be inferred
    fingertip_offsets_m: {}           # {link: [x, y, z]}: a fingertip at this offset in the link's frame
    base_rotation: null               # 3x3: operator-frame coords = R @ palm-link coords (default: from the geometry)
    joint_map: ""                     # joint_mapping: a map file (default configs/joint_maps/<model>[_<side>].yaml)
    teledex: {...}                    # TeleDexSettings fields
    dexpilot: {...}                   # DexPilotSettings fields
    solver: {...}                     # SolverSettings fields

configs/retargeting/default.yaml lists every field with its default.
"""

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from .conventions import check_convention
from .dexpilot import DexPilotSettings
from .solver import SolverSettings
from .teledex import TeleDexSettings


@dataclass(frozen=True)
class RetargetingConfig:
    input_convention: str = "mediapipe21"
    input_frame: str = "wrist"
    low_pass_alpha: float = 1.0
    basin_check_period: int = 5
    hand_scale: float | None = None
    keypoint_frames: dict = field(default_factory=dict)
    fingertip_offsets_m: dict = field(default_factory=dict)
    base_rotation: list | None = None
    joint_map: str = ""
    teledex: TeleDexSettings = TeleDexSettings()
    dexpilot: DexPilotSettings = DexPilotSettings()
    solver: SolverSettings = SolverSettings()

    def __post_init__(self):
        check_convention(self.input_convention, self.input_frame)
        if not 0.0 < self.low_pass_alpha <= 1.0:
            raise ValueError(f"low_pass_alpha must be in (0, 1], got {self.low_pass_alpha}")
        if self.hand_scale is not None and not 0.1 <= self.hand_scale <= 10.0:
            raise ValueError(f"hand_scale must be a robot/operator size ratio in [0.1, 10], got {self.hand_scale}")

    @classmethod
    def load(cls, source=None) -> "RetargetingConfig":
        """From None (defaults), a dict, a RetargetingConfig, or a YAML file path."""
        if source is None:
            return cls()
        if isinstance(source, RetargetingConfig):
            return source
        if isinstance(source, (str, Path)):
            data = yaml.safe_load(Path(source).read_text()) or {}
            where = str(source)
        else:
            data, where = dict(source), "retargeting config"
        return _build(cls, data, where)


_NESTED = {"teledex": TeleDexSettings, "dexpilot": DexPilotSettings, "solver": SolverSettings}


def _build(cls, data: dict, where: str):
    if not isinstance(data, dict):
        raise ValueError(f"{where}: expected a mapping, got {type(data).__name__}")
    valid = [f.name for f in dataclasses.fields(cls)]
    unknown = sorted(set(data) - set(valid))
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {unknown}; valid keys: {valid}")
    values = {}
    for key, value in data.items():
        nested = _NESTED.get(key) if cls is RetargetingConfig else None
        if nested is not None:
            value = _build(nested, value or {}, f"{where}.{key}")
        elif key == "keypoint_weights":  # a partial dict overrides the defaults key by key
            value = TeleDexSettings().keypoint_weights | dict(value)
        values[key] = value
    return cls(**values)
