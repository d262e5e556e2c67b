"""The TimeSync check, applied to one frame: is every source fresh, and were they captured together?

Every source (each arm, hand, camera and the input device) reports when it captured the data in this frame, on the
one monotonic clock (teledex_lerobot.clock). A frame is valid when
- freshness: every source captured within `max_age_ms` of the check, and
- consistency: the spread of the capture times (max_diff) is at most `tolerance_ms`.
The packet keeps every raw timestamp so the check can be redone offline with other thresholds.

The rule (how the thresholds judge the timestamps) has a version, SYNC_RULE_VERSION, which every recording stores
beside its thresholds (storage/sync_rule.py): a conversion re-judges each stored frame by the version its recording
was judged by. A change of the rule is a new version in SYNC_RULES, the old one kept, so older recordings still
convert.
"""

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ..errors import ConfigError

# How both formats store "this source has no capture time" (never measured, or its part was in fault).
NO_STAMP = -1


@dataclass(frozen=True)
class SyncPolicy:
    max_age_ms: float = 1000.0  # freshness: a source captured longer ago than this makes the frame invalid
    tolerance_ms: float = 100.0  # consistency: the largest spread of the sources' capture times in a valid frame

    def __post_init__(self):
        if self.max_age_ms <= 0 or self.tolerance_ms <= 0:
            raise ConfigError(f"max_age_ms and tolerance_ms must be > 0 (got {self.max_age_ms}, {self.tolerance_ms})")


@dataclass(frozen=True)
class SyncPacket:
    """The per-frame validation packet."""

    valid: bool
    fresh: bool
    consistent: bool
    max_diff_ns: int  # latest minus earliest capture time over the sources that reported one
    stale_sources: tuple[str, ...]  # older than max_age_ms, or with no timestamp at all
    timestamps_ns: dict[str, int | None]
    checked_ns: int

    @property
    def max_diff_ms(self) -> float:
        return self.max_diff_ns / 1e6

    @staticmethod
    def stamps_from(sources: Sequence[str], row: Sequence[int]) -> dict[str, int | None]:
        """A stored row back to timestamps (the inverse of stamps())."""
        return {source: None if stamp == NO_STAMP else int(stamp) for source, stamp in zip(sources, row, strict=True)}

    def stamps(self, sources: Sequence[str]) -> list[int]:
        """Each source's capture time in that order, NO_STAMP where it has none: the stored row."""
        stamps = (self.timestamps_ns.get(source) for source in sources)
        return [NO_STAMP if stamp is None else stamp for stamp in stamps]


def _rule_1(timestamps_ns: Mapping[str, int | None], checked_ns: int, policy: SyncPolicy) -> SyncPacket:
    """Fresh: every source has a capture time at most max_age_ms before the check; consistent: the spread of the
    capture times reported is at most tolerance_ms."""
    max_age_ns = policy.max_age_ms * 1e6
    stale = tuple(sorted(name for name, stamp in timestamps_ns.items()
                         if stamp is None or checked_ns - stamp > max_age_ns))
    reported = [stamp for stamp in timestamps_ns.values() if stamp is not None]
    max_diff_ns = max(reported) - min(reported) if reported else 0
    consistent = max_diff_ns <= policy.tolerance_ms * 1e6
    fresh = not stale
    return SyncPacket(fresh and consistent, fresh, consistent, int(max_diff_ns), stale, dict(timestamps_ns), checked_ns)


SyncRule = Callable[[Mapping[str, int | None], int, SyncPolicy], SyncPacket]
SYNC_RULES: dict[int, SyncRule] = {1: _rule_1}  # version -> rule; every version a recording may have been judged by
SYNC_RULE_VERSION = 1  # today's rule: what recordings are judged by, and stamped with


def validate_timestamps(timestamps_ns: Mapping[str, int | None], checked_ns: int, policy: SyncPolicy,
                        rule_version: int = SYNC_RULE_VERSION) -> SyncPacket:
    """The frame judged by the rule of that version (a version SYNC_RULES holds: readers check it first)."""
    if not timestamps_ns:
        raise ValueError("validate_timestamps needs at least one source")
    return SYNC_RULES[rule_version](timestamps_ns, checked_ns, policy)
