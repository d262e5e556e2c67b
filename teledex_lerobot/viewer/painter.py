"""What the live view draws from each item the control loop handed over. Runs on the view's own thread.

Entities (Rerun paths), on the timeline "time" (seconds since the view started) and, within an episode,
"episode_time":
- world/<rig>/measured, world/<rig>/commanded: the robot's links at its measured pose and at the commanded one;
- hands/<rig>/operator/{bones,tips} and hands/<rig>/robot/{links,tips}: the operator's hand keypoints and the robot
  hand at the commanded pose, both in the operator wrist frame, side by side;
- joints/<rig>/<role>/{measured,commanded}: every joint as a time series;
- cameras/<rig>/<camera>: each camera (JPEG);
- sync/{valid,max_diff_ms,lag_ms}: each frame's sync check, and how far each source lags the newest;
- status: the state machine's state, input age, the episode timer, sync and faults, as one text panel;
- events: state transitions, faults raised and cleared, sync lost and regained, episodes begun and ended.

Drawing is rate-limited (config.max_hz, image_max_hz): an item that comes sooner than its rate allows is skipped,
so the view costs the same whatever the control rate.
"""

from pathlib import Path

import cv2
import numpy as np
import rerun as rr
import rerun.blueprint as rrb

from ..sync import SyncPacket
from .config import LiveViewConfig
from .rerun_output import RerunOutput
from .scene import RigDrawing, operator_bones, operator_fingertips, rig_offset

MEASURED_RGB = (110, 160, 230)
COMMANDED_RGB = (255, 140, 0)
OPERATOR_RGB = (70, 200, 120)
LINK_RADIUS_M = 0.006
STATUS_HZ = 10.0
# Hands are seen three-quarter from the palm and thumb side of a right hand, fingers up (the wrist frame: +z toward
# the fingers, +y out of the palm, -x toward a right thumb); the robots from the front right and above, far enough
# to see them whole at home.
HAND_EYE = rrb.EyeControls3D(position=[-0.13, 0.15, 0.03], look_target=[0.0, 0.0, 0.09], eye_up=[0.0, 0.0, 1.0])
ROBOT_EYE_DIRECTION = np.array([1.0, -1.2, 0.8]) / np.linalg.norm([1.0, -1.2, 0.8])
# An item is drawn if at least this fraction of its period has passed since the last one drawn: a loop running at
# exactly max_hz, with jitter, is not thinned to half its rate.
RATE_TOLERANCE = 0.75


class RateLimit:
    def __init__(self, max_hz: float):
        self.min_interval_ns = RATE_TOLERANCE * 1e9 / max_hz
        self.last_ns: dict[object, int] = {}

    def due(self, key, t_ns: int) -> bool:
        last = self.last_ns.get(key)
        if last is not None and t_ns - last < self.min_interval_ns:
            return False
        self.last_ns[key] = t_ns
        return True


def sync_lags_ms(packet: SyncPacket) -> dict[str, float]:
    """How far each source's capture lags the newest one (ms); NaN for a source that gave no timestamp."""
    stamps = packet.timestamps_ns
    newest = max((stamp for stamp in stamps.values() if stamp is not None), default=None)
    return {source: float("nan") if stamp is None or newest is None else (newest - stamp) / 1e6
            for source, stamp in stamps.items()}


def sync_summary(packet: SyncPacket) -> str:
    lags = {source: lag for source, lag in sync_lags_ms(packet).items() if lag == lag}  # NaN != NaN
    verdict = "valid" if packet.valid else "INVALID"
    text = f"{verdict} · spread {packet.max_diff_ms:.1f} ms"
    if lags and max(lags.values()) > 0:
        source = max(lags, key=lags.__getitem__)
        text += f" · lagging: {source} by {lags[source]:.1f} ms"
    if packet.stale_sources:
        text += f" · stale: {', '.join(packet.stale_sources)}"
    return text


def status_text(*, state: str | None, input_age_ms: float | None, stale: bool, episode: str | None,
                sync: str | None, faults: dict[str, str], dropped: int) -> str:
    """The status panel, in Markdown: one line each for the state, the episode, sync and faults."""
    if state is None:
        head = "**No teleoperator reporting**"
    else:
        age = "no input yet" if input_age_ms is None else f"input {input_age_ms:.0f} ms old"
        head = f"**{state}** · {age}" + (" · **STALE: holding**" if stale else "")
    lines = [head, f"**Episode** {episode}" if episode else "Not recording",
             f"**Sync** {sync}" if sync else "Sync: not checked by this command",
             *([f"**FAULT {part}**: {message}" for part, message in sorted(faults.items())] or ["Faults: none"])]
    if dropped:
        lines.append(f"view: {dropped} updates dropped (the view's queue was full)")
    return "\n".join(f"- {line}" for line in lines)


def robot_eye(rigs) -> rrb.EyeControls3D:
    homes = [(rig, {role: part.home for role, part in rig.rig.parts.items()}) for rig in rigs]
    points = np.concatenate([rig.world_segments(home).reshape(-1, 3) for rig, home in homes])
    centre = (points.min(axis=0) + points.max(axis=0)) / 2
    distance = 1.6 * max(float(np.ptp(points, axis=0).max()), 0.15)
    return rrb.EyeControls3D(position=centre + distance * ROBOT_EYE_DIRECTION, look_target=centre,
                             eye_up=[0.0, 0.0, 1.0])


def layout(rigs: dict[str, RigDrawing], cameras: list[tuple[str, str]]) -> rrb.Blueprint:
    hands = [rrb.Spatial3DView(name=f"{name}: {title}", origin=f"/hands/{name}/{who}", eye_controls=HAND_EYE)
             for name, rig in rigs.items() if rig.hand is not None
             for who, title in (("operator", "operator hand"), ("robot", "robot hand, commanded"))]
    robot = rrb.Spatial3DView(name="Robot: measured (blue), commanded (orange)", origin="/world",
                              eye_controls=robot_eye(rigs.values()))
    left = rrb.Vertical(robot, rrb.Horizontal(*hands), row_shares=[3, 2]) if hands else robot
    images = [rrb.Spatial2DView(name=camera if len(rigs) == 1 else f"{rig} {camera}",
                                origin=f"/cameras/{rig}/{camera}") for rig, camera in cameras]
    plots = [rrb.TimeSeriesView(name="Sync: lag behind the newest source (ms)", origin="/sync/lag_ms"),
             rrb.TimeSeriesView(name="Sync: spread (ms)", origin="/sync/max_diff_ms"),
             rrb.TimeSeriesView(name="Sync: valid (1) or not (0)", origin="/sync/valid"),
             *[rrb.TimeSeriesView(name=f"Joints: {name} {role}", origin=f"/joints/{name}/{role}")
               for name, rig in rigs.items() for role in rig.rig.parts],
             rrb.TextLogView(name="Events", origin="/events")]
    right = rrb.Vertical(rrb.TextDocumentView(name="Status", origin="/status"),
                         *([rrb.Horizontal(*images)] if images else []), rrb.Tabs(*plots),
                         row_shares=[2, 3, 3] if images else [1, 2])
    return rrb.Blueprint(rrb.Horizontal(left, right, column_shares=[3, 2]), collapse_panels=True)


class Painter:
    """Turns items into Rerun logs. `handle` is called with each item in order; it keeps what the status panel and
    the events need (state, faults, sync, episode) and draws what is due."""

    def __init__(self, config: LiveViewConfig, output: RerunOutput, started_ns: int, session_name: str):
        self.config = config
        self.output = output
        self.started_ns = started_ns
        self.rigs: dict[str, RigDrawing] = {}
        self.cameras: list[tuple[str, str]] = []  # (rig, camera)
        self.scene_rate = RateLimit(config.max_hz)
        self.image_rate = RateLimit(config.image_max_hz)
        self.status_rate = RateLimit(STATUS_HZ)
        self.state: str | None = None
        self.stale = False
        self.input_age_ms: float | None = None
        self.faults: dict[str, str] = {}
        self.sync: str | None = None
        self.sync_valid: bool | None = None
        self.sync_sources: tuple[str, ...] = ()
        self.episode: tuple[int, float, int] | None = None  # index, planned duration (s), started (ns)
        self.dropped = 0  # set by the view before each batch
        self.rrd_dir = Path(config.rrd_dir) if config.rrd_dir else None
        if self.rrd_dir is not None:  # until the recorder marks an episode, the session is the file
            self.output.set_file(self.rrd_dir / f"session_{session_name}.rrd")
        self.output.log_static("world", rr.ViewCoordinates.RIGHT_HAND_Z_UP)

    # ---- items -------------------------------------------------------------------------------------------------

    def handle(self, kind: str, t_ns: int, payload: tuple, draw: bool = True) -> None:
        """One item. With draw False (a newer one of its kind is waiting) only the events and status are noted."""
        episode_s = None if self.episode is None else (t_ns - self.episode[2]) / 1e9
        self.output.set_time((t_ns - self.started_ns) / 1e9, episode_s)
        getattr(self, f"_{kind}")(t_ns, draw and self.output.enabled, *payload)
        if self.output.enabled and self.status_rate.due("status", t_ns):
            self._log_status(t_ns)

    def _rig(self, t_ns: int, draw: bool, name: str, arm, hand, hand_mount, cameras: list[str]) -> None:
        if name not in self.rigs:
            rig = self.rigs[name] = RigDrawing(name, arm, hand, hand_mount, rig_offset(len(self.rigs)))
            for role, part in rig.rig.parts.items():
                for kind in ("measured", "commanded"):
                    self.output.log_static(f"joints/{name}/{role}/{kind}", rr.SeriesLines(
                        names=[f"{joint} {kind}" for joint in part.joints]))
        self.cameras += [(name, camera) for camera in cameras if (name, camera) not in self.cameras]
        self.output.set_blueprint(layout(self.rigs, self.cameras))

    def _state(self, t_ns: int, draw: bool, name: str, measured: dict[str, float], images: dict,
               faults: dict[str, str]) -> None:
        self._note_faults(name, faults)
        rig = self.rigs.get(name)
        if not draw or rig is None:
            return
        if self.scene_rate.due(("measured", name), t_ns):
            q = rig.joints_by_role(measured)
            if q is not None:
                self._log_robot(rig, "measured", q, MEASURED_RGB)
        for camera, image in images.items():
            if self.image_rate.due((name, camera), t_ns):
                self._log_image(f"cameras/{name}/{camera}", image)

    def _command(self, t_ns: int, draw: bool, name: str, action: dict[str, float]) -> None:
        rig = self.rigs.get(name)
        if not draw or rig is None or not self.scene_rate.due(("commanded", name), t_ns):
            return
        q = rig.joints_by_role(action)
        if q is None:
            return
        self._log_robot(rig, "commanded", q, COMMANDED_RGB)
        if rig.hand is not None:
            self.output.log(f"hands/{name}/robot/links", rr.LineStrips3D(
                rig.hand_segments(q["hand"]), colors=COMMANDED_RGB, radii=LINK_RADIUS_M / 3))
            self.output.log(f"hands/{name}/robot/tips", rr.Points3D(
                rig.fingertips(q["hand"]), colors=COMMANDED_RGB, radii=LINK_RADIUS_M, labels=rig.finger_names))

    def _operator(self, t_ns: int, draw: bool, frame, state: str, stale: bool) -> None:
        if state != self.state:
            if self.state is not None:
                self._event(f"state: {self.state} -> {state}", "INFO")
            self.state = state
        if stale and not self.stale:
            self._event("input stale: holding the last command", "WARN")
        self.stale = stale
        self.input_age_ms = None if frame is None else (t_ns - frame.received_ns) / 1e6
        if frame is None or not draw or not self.scene_rate.due("operator", t_ns):
            return
        for name, rig in self.rigs.items():
            keypoints = frame.hand_keypoints_m.get(rig.hand_side) if rig.hand is not None else None
            if keypoints is None:
                continue
            self.output.log(f"hands/{name}/operator/bones", rr.LineStrips3D(
                operator_bones(keypoints), colors=OPERATOR_RGB, radii=LINK_RADIUS_M / 3))
            self.output.log(f"hands/{name}/operator/tips", rr.Points3D(
                operator_fingertips(keypoints, rig.finger_names), colors=OPERATOR_RGB, radii=LINK_RADIUS_M,
                labels=rig.finger_names))

    def _sync(self, t_ns: int, draw: bool, packet: SyncPacket) -> None:
        self.sync = sync_summary(packet)
        if self.sync_valid is not None and packet.valid != self.sync_valid:
            self._event(f"sync {'regained' if packet.valid else 'lost'}: {self.sync}",
                        "INFO" if packet.valid else "WARN")
        self.sync_valid = packet.valid
        if not draw:
            return
        lags = sync_lags_ms(packet)
        if tuple(lags) != self.sync_sources:
            self.sync_sources = tuple(lags)
            self.output.log_static("sync/lag_ms", rr.SeriesLines(names=list(lags)))
        self.output.log("sync/lag_ms", rr.Scalars(list(lags.values())))
        self.output.log("sync/max_diff_ms", rr.Scalars([packet.max_diff_ms]))
        self.output.log("sync/valid", rr.Scalars([float(packet.valid)]))

    def _episode_start(self, t_ns: int, draw: bool, index: int, duration_s: float) -> None:
        self.episode = (index, duration_s, t_ns)
        if self.rrd_dir is not None:
            self.output.set_file(self.rrd_dir / f"episode_{index:06d}.rrd")
        self.output.set_time((t_ns - self.started_ns) / 1e9, 0.0)
        self._event(f"episode {index} begins", "INFO")

    def _episode_end(self, t_ns: int, draw: bool, outcome: str) -> None:
        if self.episode is None:
            return
        index, _, started_ns = self.episode
        self._event(f"episode {index} ends after {(t_ns - started_ns) / 1e9:.1f} s: {outcome}", "INFO")
        self._log_status(t_ns)
        self.episode = None
        if self.rrd_dir is not None:
            self.output.set_file(None)  # nothing is saved between episodes
        self.output.set_time((t_ns - self.started_ns) / 1e9, None)

    # ---- drawing -----------------------------------------------------------------------------------------------

    def _log_robot(self, rig: RigDrawing, kind: str, q: dict[str, np.ndarray], color) -> None:
        self.output.log(f"world/{rig.name}/{kind}", rr.LineStrips3D(
            rig.world_segments(q), colors=color, radii=LINK_RADIUS_M if kind == "measured" else LINK_RADIUS_M / 2))
        for role, values in q.items():
            self.output.log(f"joints/{rig.name}/{role}/{kind}", rr.Scalars(values))

    def _log_image(self, entity: str, image) -> None:
        image = np.asarray(image)
        if image.dtype == np.uint8 and image.ndim == 3 and image.shape[2] == 3:
            ok, jpeg = cv2.imencode(".jpg", cv2.cvtColor(image, cv2.COLOR_RGB2BGR),
                                    [cv2.IMWRITE_JPEG_QUALITY, self.config.jpeg_quality])
            if ok:
                self.output.log(entity, rr.EncodedImage(contents=jpeg.tobytes(), media_type="image/jpeg"))
                return
        self.output.log(entity, rr.Image(image))

    def _note_faults(self, name: str, faults: dict[str, str]) -> None:
        prefix = f"{name}/"
        previous = {part: message for part, message in self.faults.items() if part.startswith(prefix)}
        current = {prefix + part: message for part, message in faults.items()}
        for part in previous.keys() - current.keys():
            self._event(f"fault cleared: {part}", "INFO")
        for part, message in current.items():
            if previous.get(part) != message:
                self._event(f"FAULT {part}: {message}", "ERROR")
        self.faults = {**{p: m for p, m in self.faults.items() if not p.startswith(prefix)}, **current}

    def _event(self, text: str, level: str) -> None:
        if self.output.enabled:
            self.output.log("events", rr.TextLog(text, level=level))

    def _log_status(self, t_ns: int) -> None:
        episode = None
        if self.episode is not None:
            index, duration_s, started_ns = self.episode
            planned = f" of {duration_s:g} s" if duration_s != float("inf") else ""
            episode = f"{index} · {(t_ns - started_ns) / 1e9:.1f} s{planned}"
        self.output.log("status", rr.TextDocument(status_text(
            state=self.state, input_age_ms=self.input_age_ms, stale=self.stale, episode=episode, sync=self.sync,
            faults=self.faults, dropped=self.dropped), media_type=rr.MediaType.MARKDOWN))
