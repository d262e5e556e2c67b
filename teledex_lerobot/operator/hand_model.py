"""Synthetic human hand: canonical joint angles <-> MediaPipe-21 keypoints in the operator wrist frame.

Wrist frame (robot hand URDF bases use the same axes, so a flat open hand with zero angles looks the same on both
sides): origin at the wrist keypoint; +z from the wrist toward the middle-finger MCP; +y out of the palm face (the
side the fingers flex toward); +x = y × z, i.e. toward the pinky on a right hand and toward the thumb on a left hand.
Metres. A left hand is the mirror image (x -> -x) of a right hand, and every angle means the same on both sides.

Canonical angles (radians, order `keypoints.CANONICAL_ANGLE_NAMES`). Picture a right hand lying palm-up on a table,
fingers pointing away from you: +y is up, +z is away from you, the thumb lies on your left.

Zero pose: the flat hand. Fingers straight, parallel to +z, in the palm plane (y = 0). The thumb straight, in the
palm plane, pointing `THUMB_REST_ANGLE_RAD` away from +z toward the thumb side.

Fingers (index, middle, ring, pinky). Each finger is a planar chain whose plane contains the palm normal +y:
- `mcp_abd` turns that plane about +y, i.e. the finger's heading on the table. Positive spreads away from the middle
  finger: the index toward the thumb, the ring and pinky toward the little-finger side. For the middle finger,
  positive is toward the thumb (radial deviation).
- `mcp_flex`, `pip_flex`, `dip_flex` bend the chain within its plane. Positive curls toward the palm (+y, up off the
  table); negative is hyperextension.

Thumb. The metacarpal (CMC -> MCP keypoints) is aimed like a pan-tilt head:
- `cmc_flex` pans it about +y from the rest direction. Positive slides the thumb over the table toward the fingers
  and across the palm toward the pinky (flexion, toward opposition). Negative swings it away from the index (radial
  abduction, the "L" of an outstretched thumb).
- `cmc_abd` tilts it up off the table toward the ceiling (+y): palmar abduction, as when opening the hand around a
  can. Negative tilts it slightly below the palm plane.
- `mcp_flex`, `ip_flex` bend the thumb in its own flexion plane. That plane is turned `THUMB_PRONATION_RAD` about
  the metacarpal, so thumb flexion curls the tip both toward the palm and toward the fingers, as a human thumb does.

`angles_from_keypoints` inverts `keypoints_from_angles` exactly on this model. On any other hand it is a geometric
estimate: it re-derives the wrist frame from the wrist and MCP keypoints, projects each bone onto the model's joint
planes, and clips to `HUMAN_ANGLE_LIMITS_RAD`.
"""

from dataclasses import dataclass

import numpy as np

from teledex_lerobot.geometry.sides import check_side
from teledex_lerobot.operator.keypoints import (
    CANONICAL_ANGLE_NAMES,
    INDEX_MCP,
    MIDDLE_MCP,
    NUM_CANONICAL_ANGLES,
    PINKY_MCP,
    WRIST,
    validate_keypoints,
)

# Angle conventions of the thumb (part of the meaning of the canonical angles, not of a person's anatomy).
THUMB_REST_ANGLE_RAD = 0.6
THUMB_PRONATION_RAD = 0.8

# Sign from each finger's heading (toward +x on a right hand) to its canonical abduction.
_HEADING_TO_ABDUCTION = np.array([-1.0, -1.0, 1.0, 1.0])  # index, middle, ring, pinky

_LIMITS_BY_NAME = {
    "thumb_cmc_flex": (-0.60, 1.10),
    "thumb_cmc_abd": (-0.20, 1.30),
    "thumb_mcp_flex": (-0.35, 1.10),
    "thumb_ip_flex": (-0.35, 1.40),
    "index_mcp_abd": (-0.20, 0.45),
    "middle_mcp_abd": (-0.25, 0.25),
    "ring_mcp_abd": (-0.20, 0.35),
    "pinky_mcp_abd": (-0.20, 0.55),
} | {
    f"{finger}_{joint}": limits
    for finger in ("index", "middle", "ring", "pinky")
    for joint, limits in (("mcp_flex", (-0.45, 1.57)), ("pip_flex", (-0.10, 1.92)), ("dip_flex", (-0.20, 1.40)))
}
# Active range of motion of an adult hand, (20, 2) [lower, upper] radians in canonical order.
HUMAN_ANGLE_LIMITS_RAD = np.array([_LIMITS_BY_NAME[name] for name in CANONICAL_ANGLE_NAMES])
HUMAN_ANGLE_LIMITS_RAD.flags.writeable = False


@dataclass(frozen=True, eq=False)
class HandGeometry:
    """Rest geometry of a right hand in the wrist frame (metres); the left hand is its mirror image.

    The middle MCP must lie on +z and the index and pinky MCPs at the same height y, so that the keypoints the model
    produces are exactly in the wrist frame that `wrist_frame_rotation` derives from them.
    """

    finger_mcp_positions_m: np.ndarray  # (4, 3): index, middle, ring, pinky MCP
    thumb_cmc_position_m: np.ndarray  # (3,)
    bone_lengths_m: np.ndarray  # (5, 3): thumb CMC-MCP, MCP-IP, IP-tip; fingers MCP-PIP, PIP-DIP, DIP-tip

    def __post_init__(self):
        shapes = {"finger_mcp_positions_m": (4, 3), "thumb_cmc_position_m": (3,), "bone_lengths_m": (5, 3)}
        for name, shape in shapes.items():
            value = np.array(getattr(self, name), dtype=float)
            if value.shape != shape:
                raise ValueError(f"HandGeometry.{name} must have shape {shape}, got {value.shape}")
            value.flags.writeable = False
            object.__setattr__(self, name, value)
        if (self.bone_lengths_m <= 0).any():
            raise ValueError("HandGeometry.bone_lengths_m must all be positive")
        index, middle, _, pinky = self.finger_mcp_positions_m
        if middle[2] <= 0 or abs(middle[0]) > 1e-12 or abs(middle[1]) > 1e-12:
            raise ValueError("HandGeometry: the middle MCP must lie on +z (it defines the wrist frame's z axis)")
        if abs(index[1] - pinky[1]) > 1e-12 or index[0] >= 0 or pinky[0] <= 0:
            raise ValueError("HandGeometry: index and pinky MCPs need equal y, index at x < 0, pinky at x > 0")


# An average adult hand (hand length 18.3 cm, MCP breadth 6 cm between the index and pinky joint centres).
AVERAGE_ADULT_HAND = HandGeometry(
    finger_mcp_positions_m=np.array(
        [[-0.024, 0.0, 0.087], [0.0, 0.0, 0.090], [0.019, 0.0, 0.084], [0.036, 0.0, 0.075]]),
    thumb_cmc_position_m=np.array([-0.020, 0.006, 0.030]),
    bone_lengths_m=np.array([
        [0.042, 0.031, 0.027],
        [0.040, 0.023, 0.020],
        [0.045, 0.027, 0.021],
        [0.042, 0.026, 0.021],
        [0.033, 0.019, 0.019],
    ]),
)

_MIRROR_X = np.array([-1.0, 1.0, 1.0])
_PALM_NORMAL = np.array([0.0, 1.0, 0.0])


def clip_to_human_limits(angles) -> np.ndarray:
    """Clip canonical angles (..., 20) to `HUMAN_ANGLE_LIMITS_RAD`."""
    return np.clip(angles, HUMAN_ANGLE_LIMITS_RAD[:, 0], HUMAN_ANGLE_LIMITS_RAD[:, 1])


def keypoints_from_angles(angles, side: str, scale: float = 1.0, geometry: HandGeometry = AVERAGE_ADULT_HAND):
    """MediaPipe-21 keypoints (..., 21, 3) in the wrist frame (metres) for canonical angles (..., 20).

    Angles are used as given (not clipped). `scale` multiplies every length of `geometry`.
    """
    check_side(side)
    angles = np.asarray(angles, dtype=float)
    if angles.ndim < 1 or angles.shape[-1] != NUM_CANONICAL_ANGLES:
        raise ValueError(f"canonical angles must have shape (..., {NUM_CANONICAL_ANGLES}); got {angles.shape}")
    per_finger = angles.reshape(angles.shape[:-1] + (5, 4))
    thumb, fingers = per_finger[..., 0, :], per_finger[..., 1:, :]

    # Thumb: metacarpal aimed by (pan, tilt); MCP and IP bend in the pronated thumb flexion plane.
    x1, y1, z1 = _thumb_metacarpal_axes(thumb[..., 0] - THUMB_REST_ANGLE_RAD, thumb[..., 1])
    bend_direction = np.cos(THUMB_PRONATION_RAD) * y1 + np.sin(THUMB_PRONATION_RAD) * x1
    bend = np.stack([np.zeros_like(thumb[..., 2]), thumb[..., 2], thumb[..., 2] + thumb[..., 3]], axis=-1)
    thumb_dirs = np.cos(bend)[..., None] * z1[..., None, :] + np.sin(bend)[..., None] * bend_direction[..., None, :]
    thumb_points = geometry.thumb_cmc_position_m + np.cumsum(geometry.bone_lengths_m[0, :, None] * thumb_dirs, axis=-2)

    # Fingers: heading in the palm plane, then cumulative flexion toward +y within the finger plane.
    heading = _HEADING_TO_ABDUCTION * fingers[..., 1]
    heading_dir = np.stack([np.sin(heading), np.zeros_like(heading), np.cos(heading)], axis=-1)
    elevation = np.cumsum(fingers[..., [0, 2, 3]], axis=-1)
    finger_dirs = np.cos(elevation)[..., None] * heading_dir[..., None, :] + np.sin(elevation)[..., None] * _PALM_NORMAL
    mcp = geometry.finger_mcp_positions_m[:, None, :]
    finger_points = mcp + np.cumsum(geometry.bone_lengths_m[1:, :, None] * finger_dirs, axis=-2)
    finger_chains = np.concatenate([np.broadcast_to(mcp, finger_points[..., :1, :].shape), finger_points], axis=-2)

    batch = angles.shape[:-1]
    keypoints = np.concatenate(
        [
            np.zeros(batch + (1, 3)),
            np.broadcast_to(geometry.thumb_cmc_position_m, batch + (1, 3)),
            thumb_points,
            finger_chains.reshape(batch + (16, 3)),
        ],
        axis=-2,
    )
    keypoints *= scale
    return keypoints * _MIRROR_X if side == "left" else keypoints


def wrist_frame_rotation(keypoints, side: str) -> np.ndarray:
    """Rotation (..., 3, 3) whose columns are the wrist frame's x, y, z axes, estimated from keypoints in any frame.

    z points from the wrist to the middle MCP; x is the index-MCP -> pinky-MCP direction made perpendicular to z
    (reversed on a left hand); y = z × x. Degenerate input (coincident points) falls back to arbitrary but valid axes.
    """
    check_side(side)
    keypoints = np.asarray(keypoints, dtype=float)
    z = _unit(keypoints[..., MIDDLE_MCP, :] - keypoints[..., WRIST, :], fallback=np.array([0.0, 0.0, 1.0]))
    toward_pinky = keypoints[..., PINKY_MCP, :] - keypoints[..., INDEX_MCP, :]
    across = toward_pinky if side == "right" else -toward_pinky
    across = across - np.sum(across * z, axis=-1, keepdims=True) * z
    x = _unit(across, fallback=_perpendicular(z))
    y = np.cross(z, x)
    return np.stack([x, y, z], axis=-1)


def keypoints_in_wrist_frame(keypoints, side: str) -> np.ndarray:
    """Express keypoints (..., 21, 3) given in any frame in the wrist frame derived by `wrist_frame_rotation`."""
    keypoints = np.asarray(keypoints, dtype=float)
    rotation = wrist_frame_rotation(keypoints, side)
    return (keypoints - keypoints[..., WRIST : WRIST + 1, :]) @ rotation


def angles_from_keypoints(keypoints, side: str) -> np.ndarray:
    """Canonical angles (..., 20) from MediaPipe-21 keypoints (..., 21, 3), clipped to human limits.

    Raises ValueError on a wrong shape or NaN/inf input (see `validate_keypoints`).
    """
    validate_keypoints(keypoints)
    local = keypoints_in_wrist_frame(keypoints, side)
    if side == "left":
        local = local * _MIRROR_X  # solve every hand as a right hand
    angles = np.concatenate([_thumb_angles(local[..., 1:5, :]), _finger_angles(local[..., 5:, :])], axis=-1)
    return clip_to_human_limits(angles)


def _thumb_angles(chain: np.ndarray) -> np.ndarray:
    """(..., 4) thumb angles from the right-hand CMC, MCP, IP, TIP points (..., 4, 3) in the wrist frame."""
    bones = _unit(np.diff(chain, axis=-2), fallback=np.zeros(3))
    metacarpal = bones[..., 0, :]
    pan = np.arctan2(metacarpal[..., 0], metacarpal[..., 2])
    tilt = np.arctan2(metacarpal[..., 1], np.hypot(metacarpal[..., 0], metacarpal[..., 2]))
    x1, y1, z1 = _thumb_metacarpal_axes(pan, tilt)
    bend_direction = np.cos(THUMB_PRONATION_RAD) * y1 + np.sin(THUMB_PRONATION_RAD) * x1
    # Bend of each phalanx from the metacarpal axis, within the thumb flexion plane.
    bend = np.arctan2(
        np.sum(bones[..., 1:, :] * bend_direction[..., None, :], axis=-1),
        np.sum(bones[..., 1:, :] * z1[..., None, :], axis=-1),
    )
    return np.stack(
        [_wrap(pan + THUMB_REST_ANGLE_RAD), tilt, bend[..., 0], _wrap(bend[..., 1] - bend[..., 0])], axis=-1
    )


def _finger_angles(chains: np.ndarray) -> np.ndarray:
    """(..., 16) angles of the four fingers from their right-hand keypoints (..., 16, 3) in the wrist frame."""
    chains = chains.reshape(chains.shape[:-2] + (4, 4, 3))
    bones = _unit(np.diff(chains, axis=-2), fallback=np.zeros(3))  # (..., 4 fingers, 3 bones, 3)
    bx, by, bz = bones[..., 0], bones[..., 1], bones[..., 2]
    # Heading: principal direction of the bones' palm-plane projections. Every bone of the model projects onto the
    # heading (forward or, when curled past 90°, backward), so this stays exact and well conditioned even when the
    # proximal phalanx alone points almost straight out of the palm.
    heading = 0.5 * np.arctan2(2 * np.sum(bx * bz, axis=-1), np.sum(bz * bz - bx * bx, axis=-1))
    along = bx * np.sin(heading)[..., None] + bz * np.cos(heading)[..., None]
    elevation = np.arctan2(by, along)  # of each bone above the palm plane, within the finger plane
    angles = np.stack(
        [
            elevation[..., 0],
            _HEADING_TO_ABDUCTION * heading,
            _wrap(elevation[..., 1] - elevation[..., 0]),
            _wrap(elevation[..., 2] - elevation[..., 1]),
        ],
        axis=-1,
    )
    return angles.reshape(angles.shape[:-2] + (16,))


def _thumb_metacarpal_axes(pan, tilt):
    """Axes of R_y(pan) @ R_x(-tilt): z1 along the metacarpal, x1 kept in the palm plane, y1 = z1 × x1."""
    sin_pan, cos_pan, sin_tilt, cos_tilt = np.sin(pan), np.cos(pan), np.sin(tilt), np.cos(tilt)
    x1 = np.stack([cos_pan, np.zeros_like(pan), -sin_pan], axis=-1)
    y1 = np.stack([-sin_tilt * sin_pan, cos_tilt, -sin_tilt * cos_pan], axis=-1)
    z1 = np.stack([cos_tilt * sin_pan, sin_tilt, cos_tilt * cos_pan], axis=-1)
    return x1, y1, z1


def _unit(vectors: np.ndarray, fallback: np.ndarray) -> np.ndarray:
    """Normalise along the last axis; vectors shorter than 1e-9 become `fallback` (keeps degenerate input NaN-free)."""
    norm = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return np.where(norm > 1e-9, vectors / np.maximum(norm, 1e-9), fallback)


def _perpendicular(unit_vectors: np.ndarray) -> np.ndarray:
    """Some unit vector perpendicular to each unit vector: x for the default z, used when no better one exists."""
    helper = np.where(np.abs(unit_vectors[..., 1:2]) < 0.9, [0.0, 1.0, 0.0], [0.0, 0.0, 1.0])
    return _unit(np.cross(helper, unit_vectors), fallback=np.array([1.0, 0.0, 0.0]))


def _wrap(angle):
    """Wrap to (-pi, pi]."""
    return np.pi - np.mod(np.pi - angle, 2 * np.pi)
