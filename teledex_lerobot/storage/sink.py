"""The interface every episode sink implements, and the paired commit of two sinks.

An episode goes through: begin() -> add() per frame -> stage() -> commit(), or abort() at any point before commit.
stage() writes everything the episode needs, invisibly to readers (a staging folder, an unsaved buffer); commit()
makes it visible. The pair commits in an order that a crash at any instant can only leave as pairs (see commit_pair).
"""

import uuid
from abc import ABC, abstractmethod
from dataclasses import dataclass

from .frame import RecordedFrame


@dataclass(frozen=True)
class EpisodeHeader:
    episode_uuid: str  # the same in both formats: what pairs them
    index: int  # position in the dataset (LeRobot episode_index, native episode_<index>)
    task: str

    @classmethod
    def new(cls, index: int, task: str) -> "EpisodeHeader":
        return cls(str(uuid.uuid4()), index, task)


class EpisodeSink(ABC):
    @abstractmethod
    def begin(self, header: EpisodeHeader) -> None: ...

    @abstractmethod
    def add(self, frame: RecordedFrame) -> None: ...

    @abstractmethod
    def stage(self, metadata: dict) -> None:
        """Write the episode completely but invisibly; raises (and leaves nothing visible) on failure."""

    @abstractmethod
    def commit(self) -> None:
        """Make the staged episode visible."""

    @abstractmethod
    def abort(self) -> None:
        """Drop the episode in progress or staged (not committed)."""

    @abstractmethod
    def release(self) -> None:
        """Forget the episode whose commit failed, leaving on disk whatever it staged or committed: whether the
        commit took effect is teledex-repair's to find out."""


def commit_pair(decisive: EpisodeSink, follower: EpisodeSink | None, metadata: dict) -> None:
    """Both sinks stage first; the decisive sink's commit is the point of no return, after which the follower's
    staged episode (already complete on disk) is committed. A crash before the decisive commit leaves only staged
    episodes, which teledex-repair sets aside; a crash after it leaves the follower's complete staging, which
    teledex-repair commits (it finds the decisive sink holds the same episode uuid). A decisive commit that raises
    may have taken effect all the same (a full disk once LeRobot's episode was written): both stagings stay on disk
    for teledex-repair, which pairs them by uuid."""
    sinks = [s for s in (decisive, follower) if s is not None]
    try:
        for sink in sinks:
            sink.stage(metadata)
    except BaseException:
        for sink in sinks:
            sink.abort()
        raise
    try:
        decisive.commit()
    except BaseException:
        for sink in sinks:
            sink.release()
        raise
    if follower is not None:
        follower.commit()
