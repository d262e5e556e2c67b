"""TeleDex robots behind LeRobot's Robot interface: one arm, one hand, or an arm + hand + cameras rig."""

import logging
import threading
from collections.abc import Callable
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np
from lerobot.cameras import make_cameras_from_configs
from lerobot.robots import Robot
from lerobot.utils.decorators import check_if_already_connected, check_if_not_connected

from teledex_lerobot.clock import MONOTONIC, Clock
from teledex_lerobot.control.safety import JointSafety
from teledex_lerobot.devices.device_fault import CAMERA_LOST, CAMERA_STALLED, DeviceFault, make_fault
from teledex_lerobot.devices.joint_device import JointDevice, TactileLayout
from teledex_lerobot.devices.real_device import RealJointDevice
from teledex_lerobot.devices.registry import build_devices, tactile_layout
from teledex_lerobot.errors import ConfigError, DeviceError
from teledex_lerobot.geometry.camera import WRIST_VIEW
from teledex_lerobot.presets import load_preset
from teledex_lerobot.rig import Rig
from teledex_lerobot.robot_body import RigBody
from teledex_lerobot.station import DrawnObject, RigParts, Station, open_station

from ..cameras.camera_info import camera_info
from ..cameras.capture_time import camera_capture_ns
from ..cameras.depth_streams import depth_key, reads_depth
from ..cameras.render_camera import DrawnScene, TeledexRenderCamera
from ..cameras.world_camera import TeledexWorldCamera
from .config_teledex import WORLD_BACKEND, TeledexArmConfig, TeledexConfig, TeledexHandConfig, TeledexRobotConfig
from .frame_pacing import FramePacing
from .robot_world import RobotWorld

if TYPE_CHECKING:  # Rerun takes seconds to import: only when a view starts
    from teledex_lerobot.viewer.live_view import LiveView

logger = logging.getLogger(__name__)

# Longest wait for a new camera frame in get_observation (a few periods of a 30 fps camera); after it, the last
# frame is used however old (up to an hour), and the sync check flags it.
CAMERA_WAIT_MS = 150
STALE_FRAME_MAX_AGE_MS = 3_600_000
# A frame published more than this fraction of a frame period before get_observation began is not fresh.
FRESH_FRAME_PERIODS = 0.1
# After an episode's reset, how many camera waits (CAMERA_WAIT_MS each, 6 s in all: a rendered camera on a loaded
# machine takes a second or more per frame) for a frame of the new scene.
FIRST_FRAME_TRIES = 40
# What to do about a camera in fault (its message says what happened first).
LOST_CAMERA_FIX = "check that it is plugged in and powered (replug a USB camera); re-arming reconnects it"
STALLED_CAMERA_FIX = ("check its cable and USB bandwidth (one camera per controller), free some CPU or lower its "
                      "width, height or fps, or raise --robot.camera_stall_ms")


class TeledexRobotBase(Robot):
    """Drives every part of a rig through its joint device and safety filter; subclasses only say how the rig is
    built. Observation and action keys are "<role>_<joint>.pos" with role "arm" or "hand".

    What it shares with the teleoperators of its process (its rig, measured pose, view, world and live view) goes to
    its station (teledex_lerobot/station.py): its own, opened under --robot.station, or, given `station`, the one of
    the teledex_followers robot it is a follower of (which announces the rigs).

    With backend=mujoco its parts share a simulated world, `world` (robot_world.py: episodes laid out and judged,
    lockstep); None on every other backend. A follower of teledex_followers in a world of several rigs is given its
    `world` and the source of its devices (`devices_from`, that world's parts of its rig)."""

    config_class = TeledexRobotConfig
    name = "teledex_base"

    def __init__(self, config: TeledexRobotConfig, station: Station | None = None, world: RobotWorld | None = None,
                 devices_from: Callable[[], dict[str, JointDevice]] | None = None):
        super().__init__(config)
        self.config = config
        self.rig = self._build_rig()
        if station is None:
            station = open_station(config.station, self)
            station.announce_rigs({"": self.rig_parts()})
        self.station = station
        self.cameras = make_cameras_from_configs(config.cameras)
        self.safety = {
            role: JointSafety(part.lower, part.upper, part.velocity_limits * config.max_step_s)
            for role, part in self.rig.parts.items()
        }
        self.devices: dict[str, JointDevice] = {}
        self._observation_capture_ns: dict[str, int] = {}
        # Prefix of the keys the measured pose is published under for teleoperators (a follower's name + "_").
        self.measured_key_prefix = ""
        self.pacing = FramePacing()
        # What this session commanded, for the summary logged at disconnect: command count and each joint's range.
        self.commands_sent = 0
        self._sent_range: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        # the rig's kinematic models are not thread-safe; every render camera draws from its own thread
        self._scene_lock = threading.Lock()
        self._view: LiveView | None = None  # the station's live view, fed while it runs
        if world is None and config.backend == WORLD_BACKEND:
            world = RobotWorld(config.world)
        self.world = world
        self._devices_from = devices_from or (lambda: build_devices(self.config.backend, self.rig, self.config))
        # when the episode began (reset_episode): no observation may carry a measurement or frame captured before
        self._episode_started_ns: int | None = None
        # Cameras are devices: one whose read fails (lost) or whose newest frame is older than camera_stall_ms
        # (stalled) latches a fault, reported with the parts' until clear_faults() finds it delivering again. Each
        # camera's last frame (and depth map) stands in for the frames it does not deliver meanwhile.
        self._camera_faults: dict[str, DeviceFault] = {}
        self._last_frames: dict[str, tuple[np.ndarray, np.ndarray | None]] = {}
        self._cameras_connected = False  # every camera connected at connect()

    def _build_rig(self) -> Rig:
        raise NotImplementedError

    @cached_property
    def tactile_layout(self) -> TactileLayout | None:
        """The touch sensors of the real hand's driver when they are observed (its vendor's settings), else None."""
        hand = self.rig.parts.get("hand")
        if self.config.backend != "real" or hand is None:
            return None
        return tactile_layout(hand, self.config.real)

    @cached_property
    def tactile_keys(self) -> list[str]:
        """One float per taxel, `hand_tactile_<sensor>_r<row>c<column>`, 0-255 (0 = no contact)."""
        if self.tactile_layout is None:
            return []
        rows, columns = self.tactile_layout.shape
        return [f"hand_tactile_{sensor}_r{r}c{c}" for sensor in self.tactile_layout.sensors
                for r in range(rows) for c in range(columns)]

    @cached_property
    def environment_state_keys(self) -> list[str]:
        """The world's object poses it observes (RobotWorld.environment_state_keys); none without a world."""
        return self.world.environment_state_keys if self.world is not None else []

    @cached_property
    def observation_features(self) -> dict[str, type | tuple]:
        features: dict[str, type | tuple] = dict.fromkeys(
            self.rig.action_keys + self.tactile_keys + self.environment_state_keys, float)
        for name, cam in self.cameras.items():
            features[name] = (cam.height, cam.width, 3)
            if reads_depth(cam):
                features[depth_key(name)] = (cam.height, cam.width, 1)
        return features

    @cached_property
    def action_features(self) -> dict[str, type]:
        return dict.fromkeys(self.rig.action_keys, float)

    @property
    def is_connected(self) -> bool:
        """Its devices and cameras connected; a camera lost since is a fault (reported, re-armed by reconnecting),
        not a disconnected robot."""
        return bool(self.devices) and self._cameras_connected

    @check_if_already_connected
    def connect(self, calibrate: bool = True) -> None:
        if self.config.live_view.enabled:  # first: a viewer that cannot start leaves nothing half-open
            self.station.start_live_view(self.config.live_view)
        devices = self._devices_from()
        connected = []
        try:
            for device in devices.values():
                device.connect()
                connected.append(device)
        except BaseException:
            for device in connected:  # leave nothing half-open: the user fixes the failing device and retries
                device.disconnect()
            raise
        self.devices = devices
        if self.world is not None:
            self.world.connect(devices, self.station)
        self._attach_render_cameras()
        for cam in self.cameras.values():
            cam.connect()
        self._cameras_connected = True
        self.station.cameras.update({self.measured_key_prefix + name: camera_info(cam)
                                     for name, cam in self.cameras.items()})
        self.pacing = FramePacing()
        self._publish_measured(self.rig.join(self.measured_positions()))
        self._attach_view()
        self.configure()
        logger.info("%s connected (backend=%s)", self, self.config.backend)

    @check_if_not_connected
    def reset_episode(self, episode_index: int | None = None) -> int | None:
        """Start an episode (capabilities.EpisodicRobot: the recorder calls it before recording each one). Its world
        (backend=mujoco) lays out episode `episode_index`'s scene with the robot at home and returns the layout seed
        (RobotWorld.reset_episode); other backends have nothing to reset (people reset a real scene): None."""
        if self.world is None:
            return None
        seed = self.world.reset_episode(episode_index)
        self.begin_episode()
        return seed

    def begin_episode(self) -> None:
        """The world was just laid out (by this robot, or by the follower that lays out a shared world): no
        observation may carry what was captured before, and the teleoperators start from home."""
        self._episode_started_ns = self.clock.now_ns()
        self._publish_measured(self.rig.join(self.measured_positions()))

    @property
    def clock(self) -> Clock:
        """The clock every capture time of this robot is taken on: its world's (a lockstep world's own), else the
        machine's."""
        return self.world.clock if self.world is not None else MONOTONIC

    @property
    def is_calibrated(self) -> bool:
        return True

    def calibrate(self) -> None:
        """Position-controlled joints in radians from the model: there is no per-unit calibration to store."""
        logger.info("%s: nothing to calibrate (joint positions come calibrated in SI units)", self)

    def configure(self) -> None:
        pass

    def measured_positions(self) -> dict[str, np.ndarray]:
        return {role: device.read().positions for role, device in self.devices.items()}

    @check_if_not_connected
    def get_observation(self) -> dict:
        """Camera frames first (waiting for a fresh one only while the camera is no slower than the loop, see
        frame_pacing) with the depth map of each camera that records one, then each part's measurement captured
        closest to the newest frame, so one observation describes one instant. A camera in fault gives its last
        frame (_camera_frame)."""
        started_ns = self.clock.now_ns()
        self.pacing.observation_started(started_ns)
        frames = {name: self._camera_frame(name, cam, started_ns) for name, cam in self.cameras.items()}
        images = {name: image for name, (image, _) in frames.items()}
        depths = {depth_key(name): depth for name, (_, depth) in frames.items() if depth is not None}
        # a camera in fault has no instant to describe
        frame_times = [cam.capture_ns for name, cam in self.cameras.items()
                       if getattr(cam, "capture_ns", None) and name not in self._camera_faults]
        reference_ns = max(frame_times) if frame_times else self.clock.now_ns()
        states = {role: device.read_nearest(reference_ns) for role, device in self.devices.items()}
        if self.world is not None:
            self.world.judge()
        self._observation_capture_ns = {role: state.capture_ns for role, state in states.items()}
        joints = self.rig.join({role: state.positions for role, state in states.items()})
        self._publish_measured(joints)
        self._publish_view(images)
        if self._view is not None:
            self._view.robot_state(self.view_name, joints, images, self.device_faults())
        objects = self.world.object_state() if self.world is not None else {}
        return {**joints, **self._taxels(), **objects, **images, **depths}

    def _publish_view(self, images: dict) -> None:
        """For an operator's display (the station's view): the camera frames, and in a world what the hand touches
        and the world's objects (RobotWorld.drawn_objects)."""
        objects: dict[str, DrawnObject] = {}
        touching: frozenset[str] = frozenset()
        if self.world is not None:
            objects, touching = self.world.drawn_objects(hand="hand" in self.rig.parts)
        prefix = self.measured_key_prefix
        self.station.publish_view({prefix + name: image for name, image in images.items()}, objects, touching, prefix)

    def _publish_measured(self, joints: dict[str, float]) -> None:
        """For the teleoperators of its station, which start from where the robot is."""
        self.station.publish_measured({self.measured_key_prefix + key: value for key, value in joints.items()})

    @property
    def view_name(self) -> str:
        """This rig's name in the live view: its follower's name, or "robot"."""
        return self.measured_key_prefix.removesuffix("_") or "robot"

    def _attach_view(self) -> None:
        """Draw this rig in the station's live view, if one runs (started by this robot, or by the robot of several
        followers it is one of)."""
        self._view = self.station.live_view
        if self._view is not None:
            self._view.add_rig(self.view_name, self.rig, list(self.cameras))

    def rig_parts(self) -> RigParts:
        """What this robot's rig is built from, for teleoperators that drive the robot's own rig."""
        specs = {role: part.spec for role, part in self.rig.parts.items()}
        preset = self.config.preset if isinstance(self.config, TeledexConfig) else ""
        source = preset or " + ".join(spec.model for spec in specs.values())
        return RigParts(specs.get("arm"), specs.get("hand"), self.rig.hand_mount_spec, source)

    def _taxels(self) -> dict[str, float]:
        layout = self.tactile_layout
        if layout is None or not self.tactile_keys:
            return {}
        matrices = self.devices["hand"].tactile()
        zeros = np.zeros(layout.shape)  # until the first complete matrix of a sensor has arrived
        values = np.concatenate([np.asarray(matrices.get(sensor, zeros), float).reshape(-1)
                                 for sensor in layout.sensors])
        return dict(zip(self.tactile_keys, values.tolist(), strict=True))

    def _camera_frame(self, name: str, cam, started_ns: int) -> tuple[np.ndarray, np.ndarray | None]:
        """The camera's frame and depth map (None: it records none). A lost camera is not read; a read that fails
        latches its loss, a newest frame older than camera_stall_ms its stall; either way its last frame stands in."""
        fault = self._camera_faults.get(name)
        if fault is None or fault.kind != CAMERA_LOST:
            try:  # a stalled camera is not waited for: the control loop keeps its rate meanwhile
                image = self._read_frame(name, cam, started_ns) if fault is None else \
                    cam.read_latest(max_age_ms=STALE_FRAME_MAX_AGE_MS)
                depth = cam.read_latest_depth(max_age_ms=STALE_FRAME_MAX_AGE_MS) if reads_depth(cam) else None
                self._last_frames[name] = (image, depth)
            except Exception as error:  # whatever the camera's driver raises: the camera is gone, the rest records on
                self._latch(name, make_fault(CAMERA_LOST, f"camera {name} lost: {error}; {LOST_CAMERA_FIX}"))
            else:
                self._check_stall(name, cam)
        if name not in self._last_frames:  # lost at its first read: nothing to show
            height, width = cam.height, cam.width
            self._last_frames[name] = (np.zeros((height, width, 3), np.uint8),
                                       np.zeros((height, width, 1), np.uint16) if reads_depth(cam) else None)
        return self._last_frames[name]

    def _check_stall(self, name: str, cam) -> None:
        """Latch a stall of a camera whose newest frame is older than camera_stall_ms: its cause began when the frame
        after it was due (the frames recorded since carry an ever older image)."""
        captured_ns = camera_capture_ns(cam)
        if name in self._camera_faults or captured_ns is None:
            return
        age_ns = self.clock.now_ns() - captured_ns
        if age_ns > self.config.camera_stall_ms * 1e6:
            period_ns = round(1e9 / cam.fps) if cam.fps else 0
            self._latch(name, make_fault(
                CAMERA_STALLED, f"camera {name} stalled: no new frame for {age_ns / 1e9:.1f} s (limit "
                f"--robot.camera_stall_ms={self.config.camera_stall_ms:g}); {STALLED_CAMERA_FIX}",
                since_ns=captured_ns + period_ns))

    def _latch(self, name: str, fault: DeviceFault) -> None:
        """Said once in the log too: lerobot-record, which knows nothing of faults, records the last frame on."""
        logger.warning("%s", fault.message)
        self._camera_faults[name] = fault

    def _read_frame(self, name: str, cam, started_ns: int):
        frame = self._take_frame(name, cam, started_ns)
        captured_ns = getattr(cam, "capture_ns", None)
        if captured_ns is not None:
            self.pacing.frame_taken(name, captured_ns)
        return frame

    def _take_frame(self, name: str, cam, started_ns: int):
        captured_ns = getattr(cam, "capture_ns", None)
        if self._episode_started_ns is not None and captured_ns is not None and captured_ns < self._episode_started_ns:
            return self._first_frame_of_episode(name, cam)
        if isinstance(cam, TeledexWorldCamera) and cam.lockstep:
            return cam.read()  # rendered now, on the world's clock: nothing to wait for
        if not self.pacing.wait_for_next_frame(name, cam.fps):
            return cam.read_latest(max_age_ms=STALE_FRAME_MAX_AGE_MS)
        try:
            frame = cam.async_read(timeout_ms=CAMERA_WAIT_MS)
            published_ns = getattr(cam, "published_ns", None)
            if published_ns is not None and started_ns - published_ns > FRESH_FRAME_PERIODS * 1e9 / cam.fps:
                # The frame had been waiting: the next one is closer to now, so wait for it. The control loop then
                # locks onto the camera's frame clock and every observation is one instant.
                frame = cam.async_read(timeout_ms=CAMERA_WAIT_MS)
            return frame
        except TimeoutError:
            # A stalled camera must not stop the recording: its old frame goes out with its old capture time, and
            # the sync check marks the frame invalid.
            logger.warning("Camera %s: no new frame within %d ms; using the last one", name, CAMERA_WAIT_MS)
            return cam.read_latest(max_age_ms=STALE_FRAME_MAX_AGE_MS)

    def _first_frame_of_episode(self, name: str, cam):
        """A frame captured after the episode's reset: the latest may still show the previous episode's scene."""
        for _ in range(FIRST_FRAME_TRIES):
            try:
                frame = cam.async_read(timeout_ms=CAMERA_WAIT_MS)
            except TimeoutError:
                continue
            if cam.capture_ns >= self._episode_started_ns:
                return frame
        raise DeviceError(f"Camera {name}: no frame captured since the episode began ({FIRST_FRAME_TRIES} waits of "
                          f"{CAMERA_WAIT_MS} ms; its frames would show the previous episode's scene): the camera "
                          "stalled or the machine is too busy for it; free some CPU, or lower the camera's width, "
                          "height or fps")

    @check_if_not_connected
    def send_action(self, action: dict) -> dict:
        targets = self.rig.split_action(action, self.name)
        if self._view is not None:
            self._view.robot_command(self.view_name, action)
        measured = self.measured_positions()
        sent = {}
        for role, target in targets.items():
            commanded = self.safety[role].apply(target, measured[role])
            self.devices[role].command(commanded)
            held = self.devices[role].held_target()  # a faulted device keeps its last target: that is what was sent
            sent[role] = commanded if held is None else held
            low, high = self._sent_range.get(role, (sent[role], sent[role]))
            self._sent_range[role] = (np.minimum(low, sent[role]), np.maximum(high, sent[role]))
        self.commands_sent += 1
        return self.rig.join(sent)

    def capture_timestamps_ns(self) -> dict[str, int]:
        """When each part's measurement in the last observation was captured (clock.now_ns); cameras keep their
        own. Before any observation: the devices' latest measurements."""
        return self._observation_capture_ns or {role: d.read().capture_ns for role, d in self.devices.items()}

    @property
    def fault_lookback_ns(self) -> int:
        """A camera's stall is detected camera_stall_ms after its cause."""
        return round(self.config.camera_stall_ms * 1e6) if self.cameras else 0

    def active_faults(self) -> dict[str, DeviceFault]:
        """Every part whose device has a latched fault and every camera in fault, by its name (kind, message, when
        it was detected), at this instant."""
        return {**{role: fault for role, device in self.devices.items() if (fault := device.fault())},
                **self._camera_faults}

    def device_faults(self) -> dict[str, str]:
        """Every part whose device reports a fault, with the message (what happened and what to check)."""
        return {role: fault.message for role, fault in self.active_faults().items()}

    def clear_faults(self) -> dict[str, str]:
        """Re-arm every device; the faults whose cause is still there (re-detected at once) remain, returned."""
        for device in self.devices.values():
            device.clear_fault()
        for name, fault in list(self._camera_faults.items()):
            cam = self.cameras[name]
            if fault.kind == CAMERA_LOST:
                try:
                    self._reconnect_camera(cam)
                except Exception as error:
                    self._camera_faults[name] = make_fault(
                        CAMERA_LOST, f"camera {name} lost, and reconnecting failed: {error}; {LOST_CAMERA_FIX}")
                    continue
            else:  # stalled: cleared once it delivers frames again
                captured_ns = camera_capture_ns(cam)
                if captured_ns is None or self.clock.now_ns() - captured_ns > self.config.camera_stall_ms * 1e6:
                    continue
            del self._camera_faults[name]
        return self.device_faults()

    def _reconnect_camera(self, cam) -> None:
        if cam.is_connected:
            cam.disconnect()
        if isinstance(cam, TeledexRenderCamera):  # its renderer ended with it
            self._attach_render_camera(cam)
        cam.connect()

    def device_health(self) -> dict[str, dict]:
        """Per part, the real driver's counters (reader starvation, faults latched, bus errors counted)."""
        return {role: device.health() for role, device in self.devices.items() if isinstance(device, RealJointDevice)}

    def emergency_stop(self, engaged: bool = True) -> None:
        """Hold every joint where it is (engaged) or resume following actions."""
        for safety in self.safety.values():
            safety.emergency = engaged

    @check_if_not_connected
    def disconnect(self) -> None:
        for cam in self.cameras.values():
            if cam.is_connected:
                cam.disconnect()
        for device in self.devices.values():
            device.disconnect()
        self.devices = {}
        self._observation_capture_ns = {}
        self._camera_faults, self._last_frames, self._cameras_connected = {}, {}, False
        self._view = None
        for name in self.cameras:
            self.station.cameras.pop(self.measured_key_prefix + name, None)
        if self.world is not None:
            self.world.disconnect(self.station)
        self._episode_started_ns = None
        if self.config.live_view.enabled:
            self.station.stop_live_view()
        spans = [float(np.max(high - low)) for low, high in self._sent_range.values()]
        logger.info("%s disconnected (%d commands sent, the widest joint range commanded %.3f)", self,
                    self.commands_sent, max(spans, default=0.0))

    def _attach_render_cameras(self) -> None:
        for cam in self.cameras.values():
            if isinstance(cam, TeledexRenderCamera):
                self._attach_render_camera(cam)

    def _attach_render_camera(self, cam: TeledexRenderCamera) -> None:
        if isinstance(cam, TeledexWorldCamera):
            if self.world is None:
                raise ConfigError(f"{cam} renders the MuJoCo world, and --robot.backend={self.config.backend} runs "
                                  "none: use --robot.backend=mujoco, or a teledex_render camera")
            cam.attach_world(self.world.running, self.world.rig_name)
            return
        home = {role: part.home for role, part in self.rig.parts.items()}
        points = np.concatenate([segments.reshape(-1, 3) for _, segments in self.rig.drawing_segments(home)])
        centre = (points.min(axis=0) + points.max(axis=0)) / 2
        distance = 1.7 * max(float(np.ptp(points, axis=0).max()), 0.15)
        wrist = None
        if cam.config.view == WRIST_VIEW:
            if "hand" not in self.rig.parts:
                raise ConfigError(f"{cam}: the wrist view needs a hand in the rig; choose a fixed view")
            wrist = RigBody(self.rig).parts["hand"].wrist_camera_pose()
        cam.attach_scene(self._draw_scene, centre, distance, wrist)

    def _draw_scene(self) -> DrawnScene:
        with self._scene_lock:
            measured = self.measured_positions()
            hand = self.rig.base_poses(measured)["hand"] if "hand" in self.rig.parts else None
            return self.rig.drawing_segments(measured), hand


class TeledexArm(TeledexRobotBase):
    config_class = TeledexArmConfig
    name = "teledex_arm"

    def _build_rig(self) -> Rig:
        return Rig.from_parts(arm=self.config.part_spec(), hand=None)


class TeledexHand(TeledexRobotBase):
    config_class = TeledexHandConfig
    name = "teledex_hand"

    def _build_rig(self) -> Rig:
        return Rig.from_parts(arm=None, hand=self.config.part_spec())


class Teledex(TeledexRobotBase):
    config_class = TeledexConfig
    name = "teledex"

    def _build_rig(self) -> Rig:
        return Rig.from_preset(load_preset(self.config.preset))
