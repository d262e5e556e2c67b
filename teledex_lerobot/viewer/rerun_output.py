"""The live view's Rerun recording: where it goes (the viewer, the open .rrd file) and its layout.

One recording stream of its own, never Rerun's global one, which LeRobot's --display_data uses. Its sinks change
when an .rrd file opens or closes; data logged once for good (series names, the layout) is logged again into each
new file, so every .rrd opens with the same layout and labels. Used from the view's own thread only.
"""

import logging
from pathlib import Path

import rerun as rr
import rerun.blueprint as rrb
from rerun.sinks import LogSinkLike

logger = logging.getLogger(__name__)

APPLICATION_ID = "teledex_live_view"
# A viewer that went away (its window closed) must not hold up an episode's file switch or the robot's disconnect.
FLUSH_TIMEOUT_S = 2.0


class RerunOutput:
    def __init__(self, recording_id: str, live_url: str | None):
        self.stream = rr.RecordingStream(APPLICATION_ID, recording_id=recording_id)
        self.live_url = live_url
        self.file_path: Path | None = None
        self.blueprint: rrb.Blueprint | None = None
        self._static: dict[str, rr.AsComponents] = {}
        self._apply_sinks()

    @property
    def enabled(self) -> bool:
        """Whether anything receives what is logged (otherwise the view skips the work)."""
        return self.live_url is not None or self.file_path is not None

    def set_file(self, path: Path | None) -> None:
        """Send to this .rrd file from now on (None: no file); the previous file is flushed and closed."""
        if path == self.file_path:
            return
        self._flush()
        self.file_path = path
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
        self._apply_sinks()

    def _apply_sinks(self) -> None:
        sinks: list[LogSinkLike] = []
        if self.live_url is not None:
            sinks.append(rr.GrpcSink(self.live_url))
        if self.file_path is not None:
            sinks.append(rr.FileSink(str(self.file_path)))
        self.stream.set_sinks(*sinks, default_blueprint=self.blueprint)
        for entity, archetype in self._static.items():
            self.stream.log(entity, archetype, static=True)

    def log_static(self, entity: str, archetype: rr.AsComponents) -> None:
        self._static[entity] = archetype
        self.stream.log(entity, archetype, static=True)

    def set_blueprint(self, blueprint: rrb.Blueprint) -> None:
        self.blueprint = blueprint
        self.stream.send_blueprint(blueprint)

    def set_time(self, seconds: float, episode_seconds: float | None) -> None:
        self.stream.set_time("time", duration=seconds)
        if episode_seconds is None:
            self.stream.disable_timeline("episode_time")
        else:
            self.stream.set_time("episode_time", duration=episode_seconds)

    def log(self, entity: str, archetype) -> None:
        self.stream.log(entity, archetype)

    def _flush(self) -> None:
        try:
            self.stream.flush(timeout_sec=FLUSH_TIMEOUT_S)
        except RuntimeError as error:  # the viewer is gone: the files still get everything
            logger.warning("live view: %s", error)

    def close(self) -> None:
        self._flush()
        self.stream.disconnect()
