"""The geometry the live view draws, from joint vectors: pure numpy over our kinematic models, no Rerun.

- The robot in the world frame: link segments of every part, the hand on the arm's mount (Rig.drawing_segments),
  each rig shifted sideways by its display offset so several followers do not overlap.
- Hands in the operator wrist frame (operator.hand_model: +z toward the middle finger, +y out of the palm): the
  operator's 21 keypoints as bones, and the robot hand's links and fingertips rotated into the same frame by the
  hand layout's base rotation, the frame retargeting compares them in.
"""

import logging

import numpy as np

from ..kinematics import UrdfError
from ..operator.keypoints import FINGER_CHAINS, INDEX_MCP, PINKY_MCP, WRIST
from ..presets import HandMount, PartSpec
from ..retargeting.hand_layout import build_layout
from ..rig import Rig, RigPart

logger = logging.getLogger(__name__)

# Sideways spacing of several rigs in the drawing (display only: presets give no relative placement of followers).
RIG_SPACING_M = 0.8


class RigDrawing:
    """One rig drawn from joint vectors. It builds its own kinematic models: the robot's are not thread-safe and
    belong to its control thread."""

    def __init__(self, name: str, arm: PartSpec | None, hand: PartSpec | None, hand_mount: HandMount,
                 offset_m: np.ndarray):
        self.name = name
        self.rig = Rig.from_parts(arm, hand, hand_mount)
        self.offset_m = np.asarray(offset_m, dtype=float)
        self.hand = self.rig.parts.get("hand")
        self.base_rotation = np.eye(3)
        self.fingertip_frames: tuple[str, ...] = ()
        self.finger_names: tuple[str, ...] = ()
        if self.hand is not None:
            try:
                layout = build_layout(self.hand.model, self.hand.spec.side)
                self.base_rotation = layout.base_rotation
                self.fingertip_frames, self.finger_names = layout.fingertip_frames, layout.finger_names
            except UrdfError as error:  # a hand whose fingers cannot be told apart is still drawn, without tips
                logger.info("live view: no fingertips drawn for %s (%s)", self.hand.spec.model, error)

    @classmethod
    def of(cls, name: str, rig: Rig, offset_m) -> "RigDrawing":
        specs = {role: part.spec for role, part in rig.parts.items()}
        return cls(name, specs.get("arm"), specs.get("hand"), rig.hand_mount_spec, offset_m)

    @property
    def hand_side(self) -> str | None:
        return None if self.hand is None else self.hand.spec.side

    def joints_by_role(self, values: dict[str, float]) -> dict[str, np.ndarray] | None:
        """Driven joint vector per role from "<role>_<joint>.pos" values; None if any key is missing."""
        try:
            return {role: np.array([values[key] for key in part.keys], dtype=float)
                    for role, part in self.rig.parts.items()}
        except KeyError:
            return None

    def world_segments(self, q_by_role: dict[str, np.ndarray]) -> np.ndarray:
        """(m, 2, 3) link segments of every part in the world frame (metres), shifted by the display offset."""
        segments = [segments for _, segments in self.rig.drawing_segments(q_by_role)]
        return np.concatenate(segments) + self.offset_m

    def _hand_part(self) -> RigPart:
        assert self.hand is not None, "only a rig with a hand draws one"  # the painter asks only such rigs
        return self.hand

    def hand_segments(self, q_hand: np.ndarray) -> np.ndarray:
        """(m, 2, 3) the robot hand's link segments in the operator wrist frame."""
        hand = self._hand_part()
        segments = hand.model.link_segments(hand.full_configuration(q_hand))
        return segments @ self.base_rotation.T

    def fingertips(self, q_hand: np.ndarray) -> np.ndarray:
        """(F, 3) the robot hand's fingertips (order finger_names) in the operator wrist frame; (0, 3) if unknown."""
        if not self.fingertip_frames:
            return np.zeros((0, 3))
        hand = self._hand_part()
        return hand.model.frame_positions(hand.full_configuration(q_hand), self.fingertip_frames) @ self.base_rotation.T


def rig_offset(index: int) -> np.ndarray:
    """Display offset of the index-th rig: 0, then alternately left and right of it."""
    side = 1 if index % 2 else -1
    return np.array([0.0, side * RIG_SPACING_M * ((index + 1) // 2), 0.0])


def operator_bones(keypoints: np.ndarray) -> list[np.ndarray]:
    """Line strips of a MediaPipe-21 hand in its wrist frame: wrist -> each finger's tip, and the palm's MCP arc."""
    points = np.asarray(keypoints, dtype=float) - keypoints[WRIST]
    strips = [points[[WRIST, *chain]] for chain in FINGER_CHAINS.values()]
    strips.append(points[list(range(INDEX_MCP, PINKY_MCP + 1, 4))])
    return strips


def operator_fingertips(keypoints: np.ndarray, finger_names: tuple[str, ...]) -> np.ndarray:
    """(F, 3) the operator's fingertips of `finger_names` (wrist at the origin), to set beside the robot's."""
    points = np.asarray(keypoints, dtype=float)
    return np.array([points[FINGER_CHAINS[name][-1]] - points[WRIST] for name in finger_names]).reshape(-1, 3)
