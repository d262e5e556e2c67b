"""Seeded per-episode variation of the world beyond the layout: object mass, contact friction, colours, lighting.

Drawn from the episode's layout seed on a stream of its own (the layout does not change when randomisation is turned
on), applied on reset from the model's nominal values (so nothing accumulates), and described for the episode's
metadata. Off by default: a policy is evaluated in the world it was trained in unless asked otherwise.
"""

from dataclasses import dataclass, field

import mujoco
import numpy as np

from ..errors import ConfigError

# The stream the randomisation draws from, beside the layout's (seed alone).
STREAM = 1


@dataclass
class RandomizationConfig:
    """--robot.world.randomize.*: what varies from episode to episode besides where the objects lie."""

    # The task's layout ranges scaled about their middle (1: as the task defines them; 0: every episode the middle).
    layout_spread: float = 1.0
    # Each moving object's mass (and inertia) times a factor drawn from [low, high].
    mass_scale: list[float] = field(default_factory=lambda: [1.0, 1.0])
    # The sliding friction of the fingers and the objects times one factor drawn from [low, high].
    friction_scale: list[float] = field(default_factory=lambda: [1.0, 1.0])
    colors: bool = False  # the objects' and the table's colours (for image policies)
    lighting: bool = False  # the light's direction and brightness (for image policies)

    def validate(self) -> None:
        for name in ("mass_scale", "friction_scale"):
            low_high = getattr(self, name)
            if len(low_high) != 2 or not 0 < low_high[0] <= low_high[1]:
                raise ConfigError(f"world.randomize.{name} must be [low, high] with 0 < low <= high, e.g. [0.8, 1.2] "
                                  f"(got {low_high})")
        if self.layout_spread < 0:
            raise ConfigError(f"world.randomize.layout_spread must be >= 0 (got {self.layout_spread})")

    @property
    def varies_model(self) -> bool:
        return (self.mass_scale != [1.0, 1.0] or self.friction_scale != [1.0, 1.0] or self.colors
                or self.lighting)


class Randomizer:
    """Applies a RandomizationConfig to one model: `apply(seed)` before each episode, returns what it drew."""

    def __init__(self, model: mujoco.MjModel, config: RandomizationConfig, free_objects: list[str],
                 grip_geoms: list[int], table_material: str, colored_objects: list[str]):
        self.model, self.config = model, config
        self.free_bodies = [model.body(name).id for name in free_objects]
        self.grip_geoms = np.array(grip_geoms, dtype=int)
        self.colored = {name: [g for g in range(model.ngeom) if model.geom_bodyid[g] == model.body(name).id]
                        for name in colored_objects}
        self.table_material = model.material(table_material).id
        self.nominal = {"mass": model.body_mass.copy(), "inertia": model.body_inertia.copy(),
                        "friction": model.geom_friction.copy(), "rgba": model.geom_rgba.copy(),
                        "mat_rgba": model.mat_rgba.copy(), "light_dir": model.light_dir.copy(),
                        "light_diffuse": model.light_diffuse.copy()}

    def apply(self, seed: int) -> dict:
        """Set this episode's values (the defaults restore the nominal model); the values drawn, by name."""
        model, config, nominal = self.model, self.config, self.nominal
        rng = np.random.default_rng([seed, STREAM])
        model.body_mass[:], model.body_inertia[:] = nominal["mass"], nominal["inertia"]
        model.geom_friction[:], model.geom_rgba[:] = nominal["friction"], nominal["rgba"]
        model.mat_rgba[:], model.light_dir[:] = nominal["mat_rgba"], nominal["light_dir"]
        model.light_diffuse[:] = nominal["light_diffuse"]
        drawn: dict = {}
        masses = {}
        mass_low, mass_high = config.mass_scale
        for body in self.free_bodies:
            factor = rng.uniform(mass_low, mass_high)
            model.body_mass[body] *= factor
            model.body_inertia[body] *= factor
            masses[model.body(body).name] = round(float(model.body_mass[body]), 6)
        drawn["mass_kg"] = masses
        friction_low, friction_high = config.friction_scale
        friction = rng.uniform(friction_low, friction_high)
        model.geom_friction[self.grip_geoms, 0] *= friction
        drawn["friction"] = round(float(model.geom_friction[self.grip_geoms[0], 0]), 6)
        if config.colors:
            colors = {}
            for name, geoms in self.colored.items():
                rgb = rng.uniform(0.15, 0.95, 3)
                model.geom_rgba[geoms, :3] = rgb
                colors[name] = np.round(rgb, 4).tolist()
            table = rng.uniform(0.2, 0.6, 3)
            model.mat_rgba[self.table_material, :3] = table
            colors["table"] = np.round(table, 4).tolist()
            drawn["colors_rgb"] = colors
        if config.lighting and model.nlight:
            tilt, heading = rng.uniform(0.0, 0.6), rng.uniform(-np.pi, np.pi)
            direction = np.array([np.sin(tilt) * np.cos(heading), np.sin(tilt) * np.sin(heading), -np.cos(tilt)])
            brightness = rng.uniform(0.35, 0.9)
            model.light_dir[0], model.light_diffuse[0] = direction, brightness
            drawn["light"] = {"direction": np.round(direction, 4).tolist(), "diffuse": round(float(brightness), 4)}
        return drawn
