"""People: a hand (its proportions) and habits (how that hand shapes each grasp), for judging what was built on the
hand model's average adult with someone it was not built from.

Real recorded hands sit 16-37 mm (RMS, the hand scaled to one size) from the average adult's pinch family, where the
average adult's own varied pinches sit 3-8 mm: the shape of a grasp is personal. `LONG_FINGERED_PERSON` is such a
person: longer fingers on a narrower palm, a shorter thumb, a fingertip pinch (index and middle rounded, the thumb's
tip bent onto them, the other fingers tucked) and a wrap with straighter fingers and the thumb laid along the
object; their pinch is 15-22 mm and their wrap 14-27 mm from the average adult's families, as far as real hands are.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

from .hand_model import AVERAGE_ADULT_HAND, HandGeometry, angles_from_keypoints
from .object_grasps import GRASP_FINGERS, GraspHabits, HumanGrasp, human_grasps
from .poses import hand_pose


@dataclass(frozen=True, eq=False)
class Person:
    name: str
    geometry: HandGeometry = AVERAGE_ADULT_HAND
    habits: GraspHabits = field(default_factory=GraspHabits)
    recorded_grasps: Mapping[str, HumanGrasp] | None = None  # measured off a recording (`recorded_person`)

    def grasps(self) -> dict[str, HumanGrasp]:
        """Their pinch and wrap, open to closed (solved once per person, or as recorded)."""
        if self.recorded_grasps is not None:
            return dict(self.recorded_grasps)
        return human_grasps(self.geometry, 1.0, self.habits)


def recorded_person(name: str, keypoints: np.ndarray, side: str, spans: Mapping[str, tuple[int, int]]) -> Person:
    """A person whose grasps are a recorded hand's: for each grasp kind ("pinch", "wrap"), the finger shapes of the
    frames (open, closed) of `keypoints` (N, 21, 3) as canonical angles (`angles_from_keypoints`), on the average
    adult's hand. So a recording's real finger motion drives whatever a hand model's person drives."""
    unknown = sorted(set(spans) - set(GRASP_FINGERS))
    if unknown:
        raise ValueError(f"recorded_person: unknown grasps {unknown}; the grasps are {sorted(GRASP_FINGERS)}")
    grasps = {}
    for kind, (open_frame, closed_frame) in spans.items():
        open_pose, closed_pose = angles_from_keypoints(keypoints[[open_frame, closed_frame]], side)
        grasps[kind] = HumanGrasp(kind, open_pose, closed_pose, GRASP_FINGERS[kind])
    return Person(name, recorded_grasps=MappingProxyType(grasps))


AVERAGE_ADULT = Person("average_adult")
LONG_FINGERED_PERSON = Person(
    "long_fingered",
    HandGeometry(
        finger_mcp_positions_m=AVERAGE_ADULT_HAND.finger_mcp_positions_m * np.array([1.15, 1.0, 0.95]),
        thumb_cmc_position_m=AVERAGE_ADULT_HAND.thumb_cmc_position_m * np.array([1.1, 1.0, 1.1]),
        bone_lengths_m=AVERAGE_ADULT_HAND.bone_lengths_m * np.array([[0.9], [1.12], [1.12], [1.12], [1.12]]),
    ),
    GraspHabits(
        pinch_posture=tuple(hand_pose(thumb=(0.7, 0.9, 0.1, 0.5), index=(0.25, 0.1, 0.8, 0.6),
                                      middle=(0.3, 0.0, 0.85, 0.6), ring=(0.9, 0.0, 1.2, 0.6),
                                      pinky=(1.0, 0.0, 1.2, 0.6))),
        wrap_posture=tuple(hand_pose(thumb=(0.7, 1.1, 0.3, 0.4), index=(0.8, 0.0, 0.7, 0.3),
                                     middle=(0.8, 0.0, 0.8, 0.35), ring=(0.8, 0.0, 0.8, 0.35),
                                     pinky=(0.7, 0.1, 0.6, 0.3))),
    ),
)
PERSONS = {person.name: person for person in (AVERAGE_ADULT, LONG_FINGERED_PERSON)}
