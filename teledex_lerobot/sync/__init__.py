"""Frame-level time synchronisation: per-source capture timestamps, freshness and consistency checks."""

from .timesync import SyncPacket, SyncPolicy, validate_timestamps

__all__ = ["SyncPacket", "SyncPolicy", "validate_timestamps"]
