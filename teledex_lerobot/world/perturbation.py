"""Recovery data: seeded perturbations of the expert's joint targets, DART-style (Laskey et al. 2017).

The robot executes the expert's target plus a smooth random offset; the recording keeps the expert's own target as
the action, so a policy sees states off the expert's path labelled with the correction back onto it. The offset is
an Ornstein-Uhlenbeck process per joint (std and correlation time set per part). It fades out while the expert is in
a phase where millimetres decide (closing on the object, placing, letting go), a rig's parts in that rig's phase:
there a push off the path fails the episode instead of teaching a correction, and failed episodes are dropped
anyway. What is taught there instead is recovery from a miss: with place_miss_m the expert's first placement of the
bottle aims that far off the opening (a misjudged hold), the bottle meets the rim, and the expert backs off,
re-centres and inserts again (world/expert.py).
With take_spread_m every episode's take (the handover's right hand taking the half from the left) lands a seeded
millimetre or two off the half's centre: the holds vary as a policy's do, and the placing, which measures the hold,
shows the correction (otherwise every recorded hold is the same to a fraction of a millimetre, and a policy whose
take lands elsewhere sets the half down where the usual hold would have put it). With carry_spread_m the carry
ends a seeded few millimetres off over the goal and the lowering corrects it: a policy's carry ends off too, and
with every recorded carry ending exactly over the goal it lowered the half straight down from wherever it was. With
pass_delay_spread_s the right hand comes for the half a seeded fraction of a second later and the left holds on till
the right has it: with every recorded handover timed alike, a policy's left let go on the clock, and a right hand a
few ticks late let the half drop. The three make an episode's HandoverSpread.
"""

from collections.abc import Collection
from dataclasses import dataclass, field

import numpy as np

from ..errors import ConfigError

# How fast the offset fades in a precise phase: its half-life.
FADE_HALF_LIFE_S = 0.1
# The stream the perturbation draws from, beside the layout's (seed alone) and the randomisation's (1).
STREAM = 2
TAKE_STREAM = 3  # the take spread's
CARRY_STREAM = 4  # the carry spread's
PASS_STREAM = 5  # the pass delay's


@dataclass
class PerturbationConfig:
    """--teleop.perturbation.*: noise on the executed targets of a share of the episodes (0 std: none)."""

    arm_std_rad: float = 0.0  # steady-state std of each arm joint's offset
    hand_std_rad: float = 0.0  # steady-state std of each hand joint's offset
    correlation_time_s: float = 0.4  # how long an offset persists (the OU process's time constant)
    # Share of episodes perturbed (drawn per episode from its layout seed); the others are the expert's own.
    episode_share: float = 1.0
    # In a perturbed episode, the expert's first insertion of the bottle aims this far off the opening's centre, in a
    # seeded direction (m; the opening leaves 3 mm around the bottle): the recording shows the jam and the recovery.
    place_miss_m: float = 0.0
    # In every episode (not a share: it is how the expert takes, not a push to recover from), the take from the other
    # hand aims this far at most off the object's centre along each horizontal axis of its grasp frame, seeded (m).
    take_spread_m: float = 0.0
    # Likewise in every episode, the handover's carry ends this far at most off over the goal along each horizontal
    # world axis, seeded (m): the lowering onto the goal shows the correction.
    carry_spread_m: float = 0.0
    # Likewise, the right hand comes for the half up to this much later, seeded (s); the left holds on till it has it.
    pass_delay_spread_s: float = 0.0

    def validate(self) -> None:
        amounts = {name: getattr(self, name) for name in (
            "arm_std_rad", "hand_std_rad", "place_miss_m", "take_spread_m", "carry_spread_m", "pass_delay_spread_s")}
        negative = [f"teleop.perturbation.{name} (got {value})" for name, value in amounts.items() if value < 0]
        if negative:
            raise ConfigError(f"{', '.join(negative)}: must be >= 0")
        if self.correlation_time_s <= 0:
            raise ConfigError(f"teleop.perturbation.correlation_time_s must be > 0 (got {self.correlation_time_s})")
        if not 0 <= self.episode_share <= 1:
            raise ConfigError(f"teleop.perturbation.episode_share must be in [0, 1] (got {self.episode_share})")

    @property
    def enabled(self) -> bool:
        return (self.arm_std_rad > 0 or self.hand_std_rad > 0 or self.place_miss_m > 0) and self.episode_share > 0


@dataclass(frozen=True)
class HandoverSpread:
    """How one episode's handover varies (PerturbationConfig's take, carry and pass spreads; none: the expert's own)."""

    take_offset_m: np.ndarray = field(default_factory=lambda: np.zeros(2))  # the take's aim, its grasp frame's x, y
    carry_offset_m: np.ndarray = field(default_factory=lambda: np.zeros(2))  # the carry's end over the goal, world
    pass_delay_s: float = 0.0  # how much later the right hand comes for the half

    def __bool__(self) -> bool:
        return bool(self.take_offset_m.any() or self.carry_offset_m.any() or self.pass_delay_s)


class TargetPerturbation:
    """The offsets of one episode at a time: reset(seed) at its start, then apply() once per control tick."""

    def __init__(self, config: PerturbationConfig):
        config.validate()
        self.config = config
        self.active = False
        self._rng = np.random.default_rng(0)
        self._offsets: dict[str, np.ndarray] = {}
        self.place_miss_m: np.ndarray = np.zeros(3)  # this episode's (world, m)
        self.handover = HandoverSpread()  # this episode's

    def reset(self, seed: int) -> bool:
        """Start an episode; whether it is perturbed."""
        self._rng = np.random.default_rng([seed, STREAM])
        self.active = self.config.enabled and bool(self._rng.random() < self.config.episode_share)
        self._offsets = {}
        self.place_miss_m = np.zeros(3)
        if self.active and self.config.place_miss_m:
            angle = self._rng.uniform(0, 2 * np.pi)
            self.place_miss_m = self.config.place_miss_m * np.array([np.cos(angle), np.sin(angle), 0.0])
        # streams of their own: a spread leaves the perturbed share, the noise and the other spreads as they were
        take, carry = self.config.take_spread_m, self.config.carry_spread_m
        self.handover = HandoverSpread(
            take_offset_m=np.random.default_rng([seed, TAKE_STREAM]).uniform(-take, take, 2),
            carry_offset_m=np.random.default_rng([seed, CARRY_STREAM]).uniform(-carry, carry, 2),
            pass_delay_s=float(np.random.default_rng([seed, PASS_STREAM]).uniform(0, self.config.pass_delay_spread_s)))
        return self.active

    def apply(self, targets: dict[str, np.ndarray], dt_s: float, precise: Collection[str], lower: dict,
              upper: dict) -> dict[str, np.ndarray]:
        """The targets to execute this tick, dt_s after the last (within the joint limits), by part key ("arm",
        "left/hand": world.part_key). `precise`: the parts whose rig is in a phase where the offset must fade (a
        rig's own: the handover's left hand letting go leaves the right's carry perturbed)."""
        if not self.active:
            return targets
        decay = float(np.exp(-dt_s / self.config.correlation_time_s))
        fade = 0.5 ** (dt_s / FADE_HALF_LIFE_S)
        executed = {}
        for key, target in targets.items():
            role = key.rsplit("/", 1)[-1]
            std = self.config.arm_std_rad if role == "arm" else self.config.hand_std_rad
            offset = self._offsets.get(key, np.zeros(len(target)))
            noise = self._rng.standard_normal(len(target))  # drawn every tick: the stream stays in step
            if key in precise:
                offset = fade * offset
            else:
                offset = decay * offset + np.sqrt(1 - decay**2) * std * noise
            self._offsets[key] = offset
            executed[key] = np.clip(target + offset, lower[key], upper[key])
        return executed
