"""Control configuration: every parameter of the teleoperation chain. Defaults are those of the DR02 Pico
teleoperation guide the chain follows (dead zones, gains, clamps, filters, limits, stale timeout, keys).

A control config is a YAML file (configs/control/<name>.yaml, or any path) whose keys mirror these dataclasses;
omitted keys keep their defaults; unknown keys and wrong types are errors naming the key. Units are in the names
(m, rad, s, ms, Hz).
"""

from dataclasses import dataclass, field, replace

from ..config_files import load_config
from ..errors import ConfigError
from ..geometry.sides import check_side
from ..paths import CONFIGS_DIR
from ..retargeting import METHODS
from .hand_grasps import FIST, KNOWN_GRASPS
from .state_machine import KEYS

CONTROL_CONFIGS_DIR = CONFIGS_DIR / "control"
STRATEGIES = ("direct", "hybrid")
GRASP_TEMPLATE_SOURCES = ("calibration", "model")


@dataclass
class RelativeArmConfig:
    """Cartesian relative control of the arm's mount frame from an operator pose."""

    translation_dead_zone_m: float = 0.015
    rotation_dead_zone_rad: float = 0.035
    translation_scale: float = 1.44  # controller expansion 1.2 x position gain 1.2
    max_translation_m: float = 0.5  # of the target from the anchored mount pose
    max_rotation_rad: float = 1.45
    # Rotation from the operator frame (x forward, y left, z up) to the arm's base frame.
    operator_to_base: list[list[float]] = field(default_factory=lambda: [[1, 0, 0], [0, 1, 0], [0, 0, 1]])
    ik_max_iterations: int = 100
    ik_orientation_weight_m_per_rad: float = 0.1
    # Near a singular configuration (a straight wrist: two wrist axes aligned) reaching some orientations needs a
    # large joint motion for a tiny one of the hand. Below this smallest singular value of the (orientation-weighted)
    # Jacobian, motion along the ill-conditioned directions is damped, growing to ik_singular_damping at the
    # singularity: the arm accepts a small orientation error there instead of spinning its wrist joints.
    ik_singular_value_threshold: float = 0.02
    ik_singular_damping: float = 0.1
    # Each tick's IK solution moves no joint faster than this fraction of its URDF velocity limit (the whole step is
    # scaled, so the hand keeps its direction), so the solver never runs ahead of what the arm can do.
    ik_max_speed_fraction: float = 1.0

    def validate(self) -> None:
        for name in ("translation_dead_zone_m", "rotation_dead_zone_rad", "ik_singular_value_threshold",
                     "ik_singular_damping"):
            if getattr(self, name) < 0:
                raise ConfigError(f"relative_arm.{name} must be >= 0")
        for name in ("translation_scale", "max_translation_m", "max_rotation_rad", "ik_max_iterations",
                     "ik_max_speed_fraction"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"relative_arm.{name} must be > 0")


@dataclass
class PoseBoundsConfig:
    """What an operator pose (controller, wrist, head) may be before anything follows it. A pose outside these
    bounds is dropped from the frame and counted (the arm holds, then re-anchors when a plausible pose returns):
    never followed, so one absurd sample cannot swing the arm to its clamp."""

    # Farther than this from the tracking origin (the headset's floor origin, the camera): not a hand.
    max_distance_m: float = 5.0
    # Between consecutive samples a pose moves at most max_speed_m_s x the time between their captures, plus
    # jump_tolerance_m (tracking noise, a frame's timing jitter); farther is a jump, not a motion.
    max_speed_m_s: float = 10.0
    jump_tolerance_m: float = 0.05
    # A pose that jumped (the tracking origin was reset, another sender) is accepted again once it has stayed
    # consistent with itself this long; the arm then re-anchors there, with no motion.
    jump_settle_s: float = 0.25

    def validate(self) -> None:
        for name in ("max_distance_m", "max_speed_m_s"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"pose_bounds.{name} must be > 0 (got {getattr(self, name)})")
        for name in ("jump_tolerance_m", "jump_settle_s"):
            if getattr(self, name) < 0:
                raise ConfigError(f"pose_bounds.{name} must be >= 0 (got {getattr(self, name)})")


@dataclass
class OutputChainConfig:
    """Shaping of every joint target before it leaves for the robot, in this order: a weighted average of the last
    targets, a critically damped smoother, soft joint limits, a velocity limit against the last command sent."""

    average_weights: list[float] = field(default_factory=lambda: [0.1, 0.2, 0.3, 0.4])  # oldest .. newest
    smoother_omega_rad_s: float = 30.0  # critically damped second order
    soft_limit_margin_rad: float = 0.02  # the model's limits shrunk by this much on each side
    # Every joint of every command moves at most this fast (the guide's 0.006 rad per frame at ~500 Hz), measured on
    # the time between ticks, so the limit does not depend on the loop rate.
    max_velocity_rad_s: float = 3.0
    max_tick_s: float = 0.1  # a longer gap between ticks (a stall) counts as this long only

    def validate(self) -> None:
        if len(self.average_weights) == 0 or min(self.average_weights) < 0 or sum(self.average_weights) <= 0:
            raise ConfigError("output.average_weights must be non-negative with a positive sum")
        for name in ("smoother_omega_rad_s", "max_velocity_rad_s", "max_tick_s"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"output.{name} must be > 0")
        if self.soft_limit_margin_rad < 0:
            raise ConfigError("output.soft_limit_margin_rad must be >= 0")


# The strategy's inputs named for the operator's hand ("right_controller", "left_trigger", ...)
SIDED_INPUTS = ("hand_analog_input", "grasp_select_input", "arm_pose_source", "anchor_input")


@dataclass
class StrategyConfig:
    """The control strategy scheduler's choice: which input drives which part, and how."""

    # "direct": joint space (glove angles -> hand joint map, leader arm joints -> arm joints);
    # "hybrid": hand by retargeting / mapping, arm by Cartesian relative control of an operator pose with IK.
    strategy: str = "hybrid"
    side: str = "right"  # the operator hand (glove / hand tracking) that drives this rig
    # How the hand is driven (retargeting.METHODS): a joint map of canonical angles (glove, or angles from keypoints),
    # keypoint retargeting (teledex, dexpilot), or a controller's analog input closing the hand along a chosen grasp.
    hand_method: str = "joint_mapping"
    hand_analog_input: str = "right_grip"  # hand_method "analog": 0 = the grasp's preshape, 1 = closed
    # hand_method "analog": the grasps the analog input closes the hand along (control/hand_grasps.py), the first
    # chosen at start; `grasp_select_input` (a button, e.g. right_axis_click: the thumbstick's press) steps on.
    # teledex / dexpilot: the measured grasps the hand makes when the operator's hand makes the matching person's
    # grasp (a pinch, a wrap; retargeting/grasp_anchors.py); "fist" alone: none.
    hand_grasps: list[str] = field(default_factory=lambda: [FIST])
    # teledex / dexpilot: whose grasp the anchors match: "calibration", the operator's own (teledex-calibrate-hand
    # records their pinch and wrap; without them the hand is left to the retargeting), or "model", the hand model's
    # average adult (the world's scripted persons; a real person's grasps are shaped otherwise and never match it).
    grasp_templates: str = "calibration"
    grasp_select_input: str = ""
    joint_map: str = ""  # hand joint map file; "" = configs/joint_maps/<hand model>[_<side>].yaml
    retargeting_config: str = ""
    hand_calibration: str = ""
    arm_pose_source: str = "right_controller"  # a pose of the input frame, e.g. right_controller, right_wrist
    # The analog input whose press (>= anchor_threshold) engages the arm; "" = always engaged (e.g. keypoints).
    anchor_input: str = "right_trigger"
    anchor_threshold: float = 0.5
    # direct arm: follower joint -> leader joint name; {} = the follower's joint names, else the leader's in order.
    leader_joint_map: dict[str, str] = field(default_factory=dict)

    def for_side(self, side: str) -> "StrategyConfig":
        """The same strategy worked by the operator's `side` hand: every input named for a hand (right_controller,
        right_trigger, ...) that hand's."""
        other = "left" if side == "right" else "right"
        inputs = {name: side + value.removeprefix(other) if value.startswith(f"{other}_") else value
                  for name, value in ((n, getattr(self, n)) for n in SIDED_INPUTS)}
        return replace(self, side=side, **inputs)

    def validate(self) -> None:
        if self.strategy not in STRATEGIES:
            raise ConfigError(f"strategy must be one of {STRATEGIES}, got {self.strategy!r}")
        if self.hand_method not in METHODS:
            raise ConfigError(f"hand_method must be one of {METHODS}, got {self.hand_method!r}")
        check_side(self.side, "strategy.side")
        unknown = [name for name in self.hand_grasps if name not in KNOWN_GRASPS]
        if unknown or not self.hand_grasps:
            raise ConfigError(f"strategy.hand_grasps: unknown grasp(s) {unknown}; choose from {list(KNOWN_GRASPS)}")
        if not 0 < self.anchor_threshold <= 1:
            raise ConfigError("anchor_threshold must be in (0, 1]")
        if self.grasp_templates not in GRASP_TEMPLATE_SOURCES:
            raise ConfigError(f"strategy.grasp_templates must be one of {GRASP_TEMPLATE_SOURCES}, got "
                              f"{self.grasp_templates!r}")


# The keyboard keys that press the state machine's keys (in teledex-record, lerobot-teleoperate and any loop that
# forwards keys to the teleoperator): e = Emergency, z = zero pose, t = teleoperation, p = park (the rest pose).
KEYBOARD_BINDINGS = {"e": "R1", "z": "L1", "t": "L2", "p": "R2"}


@dataclass
class ControlConfig:
    strategy: StrategyConfig = field(default_factory=StrategyConfig)
    relative_arm: RelativeArmConfig = field(default_factory=RelativeArmConfig)
    output: OutputChainConfig = field(default_factory=OutputChainConfig)
    pose_bounds: PoseBoundsConfig = field(default_factory=PoseBoundsConfig)
    # With no fresh input for this long the robot holds the last command. When the stream returns after a gap no longer
    # than resume_follow_ms (a Wi-Fi blip, a loaded PC's late frames), relative control goes on from the same anchors:
    # the arm goes where the operator's hand went meanwhile, within the output chain's speed limits, so no motion is
    # lost; after a longer gap it re-anchors where it is (no jump), and follows on without a dead zone to cross again.
    # Neither needs a re-press.
    stale_timeout_ms: float = 200.0
    resume_follow_ms: float = 1000.0
    # Input buttons -> the state machine's keys (L1 zero pose, L2 teleoperation, R1 emergency, R2 down, or ENGAGE:
    # L1, or L2 where L1 is not allowed). XR buttons are named in inputs.xr_state; hand tracking adds the gesture
    # buttons left_pinch / right_pinch (thumb and index tips together).
    key_bindings: dict[str, str] = field(default_factory=lambda: {"X": "L1", "Y": "L2", "B": "R1", "A": "R2"})
    keyboard_bindings: dict[str, str] = field(default_factory=lambda: dict(KEYBOARD_BINDINGS))
    # Press L1 on connect and L2 once the zero pose is reached: for inputs without buttons (gloves, keypoints).
    auto_start: bool = False
    zero_pose_tolerance_rad: float = 0.02
    # Gesture buttons from hand keypoints: a pinch closes below the first distance and opens above the second.
    pinch_close_m: float = 0.015
    pinch_open_m: float = 0.03
    diagnostics_period_s: float = 1.0

    def for_side(self, side: str) -> "ControlConfig":
        """This config worked by the operator's `side` hand (StrategyConfig.for_side); buttons and keys stay."""
        return replace(self, strategy=self.strategy.for_side(side))

    def validate(self) -> "ControlConfig":
        self.strategy.validate()
        self.relative_arm.validate()
        self.output.validate()
        self.pose_bounds.validate()
        if self.stale_timeout_ms <= 0 or self.diagnostics_period_s <= 0 or self.zero_pose_tolerance_rad <= 0:
            raise ConfigError("stale_timeout_ms, diagnostics_period_s and zero_pose_tolerance_rad must be > 0")
        if self.resume_follow_ms < 0:
            raise ConfigError("resume_follow_ms must be >= 0 (0: every gap re-anchors)")
        if not 0 < self.pinch_close_m < self.pinch_open_m:
            raise ConfigError("pinch_close_m must be > 0 and below pinch_open_m")
        for name, bindings in (("key_bindings", self.key_bindings), ("keyboard_bindings", self.keyboard_bindings)):
            unknown = sorted(set(bindings.values()) - set(KEYS))
            if unknown:
                raise ConfigError(f"{name} map to unknown key(s) {unknown}; keys are {list(KEYS)}")
        return self

    @classmethod
    def load(cls, source=None, **overrides) -> "ControlConfig":
        """From None (defaults), a dict, a ControlConfig, a YAML path or a name in configs/control/; then the
        `overrides` (nested dicts merge into the sections)."""
        return load_config(cls, source, CONTROL_CONFIGS_DIR, "control config", **overrides).validate()
