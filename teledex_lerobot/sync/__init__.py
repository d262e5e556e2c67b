"""Frame-level time synchronisation: per-source capture timestamps, freshness and consistency checks."""

from .metrics import TimingPolicy, frame_timing, sync_metrics, timing_metrics
from .timesync import SyncPacket, SyncPolicy, validate_timestamps

__all__ = ["SyncPacket", "SyncPolicy", "TimingPolicy", "frame_timing", "sync_metrics", "timing_metrics",
           "validate_timestamps"]
