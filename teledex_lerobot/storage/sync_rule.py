"""The sync rule a recording was judged by, as both formats store it: its thresholds (sync.SyncPolicy) and the rule's
version (sync.SYNC_RULES) in one object: session.json's "sync_policy", metadata.json's "sync.policy" and the LeRobot
sidecar's "sync_policy". A conversion re-judges every stored frame by the rule its recording was judged by, so a
recording made before the rule changed still converts, and one judged by a rule newer than this teledex-lerobot knows
is refused. Recordings from before the version was stored were judged by version 1."""

from dataclasses import asdict, dataclass
from pathlib import Path

from ..sync import SYNC_RULE_VERSION, SYNC_RULES, SyncPacket, SyncPolicy, validate_timestamps
from .errors import DatasetError

RULE_VERSION = "rule_version"  # the key beside the thresholds
UNSTAMPED_VERSION = 1  # the rule of recordings that do not say


def stored_policy(policy: SyncPolicy) -> dict:
    """What a recording judged by today's rule with these thresholds stores."""
    return {**asdict(policy), RULE_VERSION: SYNC_RULE_VERSION}


@dataclass(frozen=True)
class RecordedRule:
    """The rule a recording's frames were judged by."""

    policy: SyncPolicy
    version: int

    def judge(self, timestamps_ns: dict[str, int | None], checked_ns: int) -> SyncPacket:
        return validate_timestamps(timestamps_ns, checked_ns, self.policy, self.version)


def recorded_rule(stored: dict, where: Path) -> RecordedRule:
    """The rule a stored policy (type-checked on read: fields.sync_policy) names; DatasetError for a version this
    teledex-lerobot does not know. where: the file that stores it."""
    version = stored.get(RULE_VERSION, UNSTAMPED_VERSION)
    if version not in SYNC_RULES:
        raise DatasetError(f"{where}: its frames were judged by sync rule version {version}, newer than this "
                           f"teledex-lerobot knows (up to {max(SYNC_RULES)}); install a newer teledex-lerobot to "
                           "convert it")
    return RecordedRule(SyncPolicy(**{k: v for k, v in stored.items() if k != RULE_VERSION}), version)
