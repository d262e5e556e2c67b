"""Frame-level time synchronisation: per-source capture timestamps, freshness and consistency checks."""

from .metrics import TimingPolicy, frame_timing, sync_metrics, timing_metrics
from .timesync import SYNC_RULE_VERSION, SYNC_RULES, SyncPacket, SyncPolicy, validate_timestamps

__all__ = ["SYNC_RULES", "SYNC_RULE_VERSION", "SyncPacket", "SyncPolicy", "TimingPolicy", "frame_timing",
           "sync_metrics", "timing_metrics", "validate_timestamps"]
