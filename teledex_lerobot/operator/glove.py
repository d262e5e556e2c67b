"""UdexReal (UDCAP) data glove: HandDriver joint-angle layout <-> canonical human hand angles.

HandDriver sends 24 angles per hand, named `l0..l23` / `r0..r23`, in degrees (HandDriver >= 2.1.2):

    slots 0-2    thumb distal (IP) pitch, mid (MCP) pitch, root (CM) pitch
    slots 4-7    index DIP pitch, PIP pitch, MP pitch, MP yaw
    slots 8-11   middle, 12-15 ring, 16-19 little: same order as the index
    slot 20      thumb CM yaw
    slots 3, 11 (middle yaw) and 21-23 carry nothing we use

Sign conventions of the glove: pitch negative = flexion toward the palm; yaw positive = ring/little spreading (toward
the little-finger side), negative = index spreading (toward the thumb). The layout and signs are the same for both
hands (the LinkerHand teleop code maps `l*` and `r*` with the same signs), so `side` only gets validated.

Mapping to canonical angles (radians; see hand_model for their meaning):
- every flexion = -pitch (so glove flexion, negative, becomes positive canonical flexion);
- index_mcp_abd = -index yaw; ring_mcp_abd = +ring yaw; pinky_mcp_abd = +little yaw (canonical abduction is
  positive away from the middle finger);
- thumb_cmc_flex = -thumb root pitch: the root flexing "toward the palm" is read as the thumb swinging across the
  palm (vendor range +10..-70 deg);
- thumb_cmc_abd = -thumb CM yaw: by analogy with the fingers, negative yaw moves the thumb away from the index (vendor
  range +20..-35 deg). The vendor publishes no diagram of the thumb axes; check these two thumb signs on hardware.
- Not measured by the glove, set to 0: middle_mcp_abd. Slot 11 (middle yaw) is ignored, and `canonical_to_glove`
  writes 0 to it and to the unused slots.
`glove_to_canonical` clips to `HUMAN_ANGLE_LIMITS_RAD`, like every other input converted to canonical angles.
"""

import numpy as np

from teledex_lerobot.geometry.sides import check_side
from teledex_lerobot.operator.hand_model import clip_to_human_limits
from teledex_lerobot.operator.keypoints import CANONICAL_ANGLE_NAMES, NUM_CANONICAL_ANGLES

NUM_GLOVE_ANGLES = 24
GLOVE_SLOT_NAMES = (
    "thumb_distal_pitch", "thumb_mid_pitch", "thumb_root_pitch", "unused_3",
    "index_dip_pitch", "index_pip_pitch", "index_mp_pitch", "index_mp_yaw",
    "middle_dip_pitch", "middle_pip_pitch", "middle_mp_pitch", "middle_mp_yaw",
    "ring_dip_pitch", "ring_pip_pitch", "ring_mp_pitch", "ring_mp_yaw",
    "little_dip_pitch", "little_pip_pitch", "little_mp_pitch", "little_mp_yaw",
    "thumb_cm_yaw", "unused_21", "unused_22", "unused_23",
)  # fmt: skip


def _glove_to_canonical_table() -> list[tuple[int, str, float]]:
    """(glove slot, canonical angle name, sign) for every measured angle: canonical_rad = sign * radians(glove_deg)."""
    table = [
        (0, "thumb_ip_flex", -1.0),
        (1, "thumb_mcp_flex", -1.0),
        (2, "thumb_cmc_flex", -1.0),
        (20, "thumb_cmc_abd", -1.0),
    ]
    fingers = (("index", 4, -1.0), ("middle", 8, None), ("ring", 12, 1.0), ("pinky", 16, 1.0))
    for finger, first_slot, yaw_sign in fingers:
        table += [
            (first_slot, f"{finger}_dip_flex", -1.0),
            (first_slot + 1, f"{finger}_pip_flex", -1.0),
            (first_slot + 2, f"{finger}_mcp_flex", -1.0),
        ]
        if yaw_sign is not None:  # the glove has no middle-finger yaw
            table.append((first_slot + 3, f"{finger}_mcp_abd", yaw_sign))
    return table


_GLOVE_TO_CANONICAL = _glove_to_canonical_table()
_GLOVE_SLOTS = np.array([slot for slot, _, _ in _GLOVE_TO_CANONICAL])
_CANONICAL_INDICES = np.array([CANONICAL_ANGLE_NAMES.index(name) for _, name, _ in _GLOVE_TO_CANONICAL])
_SIGNS = np.array([sign for _, _, sign in _GLOVE_TO_CANONICAL])

# Glove slots that carry an angle we use, and the canonical angles the glove cannot measure (set to 0).
MEASURED_GLOVE_SLOTS = tuple(sorted(_GLOVE_SLOTS.tolist()))
UNMEASURED_CANONICAL_ANGLES = tuple(
    name for i, name in enumerate(CANONICAL_ANGLE_NAMES) if i not in set(_CANONICAL_INDICES.tolist())
)


def glove_parameter_names(side: str) -> tuple[str, ...]:
    """HandDriver parameter names of one hand in slot order: ("r0", ..., "r23") or ("l0", ..., "l23")."""
    return tuple(f"{check_side(side)[0]}{slot}" for slot in range(NUM_GLOVE_ANGLES))


def glove_to_canonical(angles_deg, side: str) -> np.ndarray:
    """Canonical angles (..., 20) in radians from HandDriver angles (..., 24) in degrees, clipped to human limits."""
    check_side(side)
    angles_deg = np.asarray(angles_deg, dtype=float)
    if angles_deg.ndim < 1 or angles_deg.shape[-1] != NUM_GLOVE_ANGLES:
        raise ValueError(f"glove angles must have shape (..., {NUM_GLOVE_ANGLES}) in degrees; got {angles_deg.shape}")
    bad = ~np.isfinite(angles_deg)
    if bad.any():
        slot = int(np.argwhere(bad)[0][-1])
        raise ValueError(f"glove angles contain NaN/inf; first in slot {slot} ({GLOVE_SLOT_NAMES[slot]})")
    canonical = np.zeros(angles_deg.shape[:-1] + (NUM_CANONICAL_ANGLES,))
    canonical[..., _CANONICAL_INDICES] = _SIGNS * np.radians(angles_deg[..., _GLOVE_SLOTS])
    return clip_to_human_limits(canonical)


def canonical_to_glove(angles_rad, side: str) -> np.ndarray:
    """HandDriver angles (..., 24) in degrees for canonical angles (..., 20); unmeasured/unused slots are 0."""
    check_side(side)
    angles_rad = np.asarray(angles_rad, dtype=float)
    if angles_rad.ndim < 1 or angles_rad.shape[-1] != NUM_CANONICAL_ANGLES:
        raise ValueError(f"canonical angles must have shape (..., {NUM_CANONICAL_ANGLES}); got {angles_rad.shape}")
    glove = np.zeros(angles_rad.shape[:-1] + (NUM_GLOVE_ANGLES,))
    glove[..., _GLOVE_SLOTS] = np.degrees(_SIGNS * angles_rad[..., _CANONICAL_INDICES])
    return glove
