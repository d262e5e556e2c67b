"""teledex-record's recording: the LeRobot robot (wrapped for the sync check) and teleoperator made from their
configs, the two sinks (the LeRobot dataset and the native layout, its session folder) and the loop feeding them
(loop.py). TeledexRecordConfig is lerobot-record's robot, teleoperator and dataset settings plus our options
(options.py); cli/record.py parses it from the command line and calls Recorder(cfg).run(), and anything else (the
demo, the benchmarks, the tests) may build it in code."""

import errno
import logging
import shutil
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path

import numpy as np
from lerobot.configs.dataset import DatasetRecordConfig
from lerobot.robots import RobotConfig, make_robot_from_config
from lerobot.teleoperators import TeleoperatorConfig, make_teleoperator_from_config
from lerobot.utils.keyboard_input import create_key_listener

from lerobot_robot_teledex.cameras.camera_info import stream_infos
from lerobot_robot_teledex.cameras.depth_streams import reads_depth
from lerobot_robot_teledex.robots.config_teledex import WORLD_BACKEND, TeledexRobotConfig
from lerobot_robot_teledex.robots.followers import TeledexFollowersConfig
from lerobot_robot_teledex.sync_validated import SyncValidatedRobot

from ..capabilities import (
    BackendConfig,
    FollowersRobot,
    KeyboardInput,
    KeyboardListeningConfig,
    ObservationGroupsRobot,
    PresetConfig,
    RigRobot,
    ScriptedInput,
    StationRobot,
    WorldReader,
    WorldRobot,
)
from ..rig import Rig
from ..storage.errors import UserError, check_root
from ..storage.frame import FrameLayout
from ..storage.native import NativeSink, RecordedCamera, create_session, shared_metadata
from ..storage.sync_rule import stored_policy
from ..world.world import AUTO, LOCKSTEP, REAL_TIME
from .hub import PushError, push, push_command
from .lerobot_dataset import LeRobotSink, depth_quantization, quiet_depth_encoder
from .loop import INPUT_SOURCE, EpisodePlan, RecordingSession
from .options import RecordOptions

logger = logging.getLogger(__name__)


@dataclass(kw_only=True)
class TeledexRecordConfig(RecordOptions):
    # The robot recorded: --robot.type=teledex (a preset rig), teledex_followers, teledex_arm / teledex_hand, or any
    # LeRobot robot; --robot.type=<type> --help lists its flags.
    robot: RobotConfig
    # LeRobot's dataset settings, as in lerobot-record (repo_id and root are required).
    dataset: DatasetRecordConfig
    # The input: --teleop.type=teledex_replay, teledex_xr, teledex_glove, ... or any LeRobot teleoperator.
    teleop: TeleoperatorConfig | None = None

    def __post_init__(self):
        super().__post_init__()
        if self.teleop is None:
            raise UserError("A teleoperator is required: --teleop.type=... (e.g. teledex_replay)")
        if not self.dataset.repo_id:
            raise UserError("--dataset.repo_id is required (e.g. local/my_task)")
        if self.dataset.root is None:
            raise UserError("--dataset.root is required: the folder the dataset is written to")

    @property
    def native_root(self) -> Path:
        return Path(self.native.root) if self.native.root else Path(f"{Path(self.dataset.root)}_native")


def check_roots(cfg: TeledexRecordConfig) -> None:
    """Refuse before anything is created: an existing root without --resume, a missing one with it, a folder that
    cannot be written."""
    roots = [Path(cfg.dataset.root)] + ([cfg.native_root] if cfg.native.enabled else [])
    for root in roots:
        check_root(root)
        if cfg.resume:
            if not root.is_dir():
                raise UserError(f"--resume=true but {root} does not exist; drop --resume to start a new dataset")
            probe_dir = root
        else:
            if root.exists():
                raise UserError(f"{root} already exists: pass --resume=true to add episodes to it, or choose another "
                                "--dataset.root (and --native.root)")
            probe_dir = next(p for p in [*root.parents] if p.exists())
        try:
            probe = probe_dir / f".teledex-write-probe-{datetime.now().timestamp()}"
            probe.touch()
            probe.unlink()
        except OSError as err:
            raise UserError(f"Cannot write in {probe_dir} ({err.strerror}): choose a writable --dataset.root / "
                            "--native.root") from err


def robot_type(robot) -> str:
    """info.json's robot_type, which the Hub's viewer and LeRobot's filters key on: what the robot is, as each LeRobot
    robot's name says its model (so101_follower). A rig by its models ("piper+linkerhand_o6"), several rigs by
    follower ("left:piper+linkerhand_l10,right:..."), any other robot by its name, as lerobot-record writes it."""
    if isinstance(robot, RigRobot):
        return robot.rig.name
    if isinstance(robot, FollowersRobot):
        return ",".join(f"{name}:{follower.rig.name}" for name, follower in robot.robots.items())
    return robot.name


def resolve_world_clock(cfg: TeledexRecordConfig) -> None:
    """--robot.world.clock=auto: lockstep when a script (or a policy) drives a simulated world, real time when a
    person does; lockstep with a person is refused (the loop would run as fast as the CPU, not as they move)."""
    robot, teleop = cfg.robot, cfg.teleop
    assert teleop is not None  # TeledexRecordConfig requires one
    if not isinstance(robot, TeledexRobotConfig | TeledexFollowersConfig) or robot.backend != WORLD_BACKEND:
        return
    scripted = isinstance(teleop, ScriptedInput) and teleop.scripted
    if robot.world.clock == AUTO:
        robot.world.clock = LOCKSTEP if scripted else REAL_TIME
        print(f"World clock: {robot.world.clock} (--robot.world.clock=auto: "
              f"{'a scripted input drives' if scripted else 'a person drives'})", flush=True)
    elif robot.world.clock == LOCKSTEP and not scripted:
        raise UserError(f"--robot.world.clock=lockstep needs a scripted input (e.g. --teleop.type=teledex_world_expert)"
                        f": {teleop.type} is driven by a person, who needs the world in real time. Use "
                        "--robot.world.clock=real_time (or auto).")


class Recorder:
    def __init__(self, cfg: TeledexRecordConfig):
        self.cfg = cfg
        resolve_world_clock(cfg)
        self.robot = SyncValidatedRobot(make_robot_from_config(cfg.robot), cfg.sync)
        if isinstance(cfg.teleop, KeyboardListeningConfig):
            cfg.teleop.keyboard = False  # one keyboard listener, ours: it forwards the teleop's keys (_on_key)
        self.teleop = make_teleoperator_from_config(cfg.teleop)
        if set(self.teleop.action_features) != set(self.robot.action_features):
            raise UserError(
                f"The teleoperator drives {list(self.teleop.action_features)} but the robot takes "
                f"{list(self.robot.action_features)}: they are different rigs, and nothing was created. Give the rig "
                "once, to the robot (leave --teleop.preset, arm_model and hand_model empty), or make them match.")
        # every camera stream (colour, and depth where a camera records it) is a sync source of its own
        streams = [key for key, value in self.robot.observation_features.items() if isinstance(value, tuple)]
        groups = self.robot.robot if isinstance(self.robot.robot, ObservationGroupsRobot) else None
        self.layout = FrameLayout.from_features(
            self.robot.observation_features, self.robot.action_features, groups.tactile_keys if groups else (),
            [*self._joint_sources(), *streams, INPUT_SOURCE], cfg.dataset.fps,
            groups.environment_state_keys if groups else (), self.robot.judges_episodes)
        if self.layout.depth_streams and not cfg.dataset.video:
            raise UserError(f"--dataset.video=false with depth ({', '.join(self.layout.depth_streams)}): depth is "
                            "stored as LeRobot's depth video in both formats; drop --dataset.video=false, or turn "
                            "the cameras' use_depth off")
        self.session: RecordingSession | None = None
        self.lerobot: LeRobotSink | None = None
        self.robot_type = robot_type(self.robot.robot)

    @property
    def _rig(self) -> Rig | None:
        """The robot's rig, for a TeleDex robot of one rig."""
        return self.robot.robot.rig if isinstance(self.robot.robot, RigRobot) else None

    def _followers(self) -> dict[str, tuple[Rig, np.ndarray]] | None:
        """A robot of several rigs: each follower's rig and its base in the first one's base frame."""
        robot = self.robot.robot
        if not isinstance(robot, FollowersRobot):
            return None
        bases = robot.base_poses()
        return {name: (follower.rig, bases[name]) for name, follower in robot.robots.items()}

    def _joint_sources(self) -> list[str]:
        """Each part a source of its own: "arm", "hand"; a follower's "<follower>_arm"."""
        robot = self.robot.robot
        if isinstance(robot, FollowersRobot):
            return [f"{name}_{role}" for name, follower in robot.robots.items() for role in follower.rig.parts]
        rig = self._rig
        return list(rig.parts) if rig is not None else ["robot"]

    def _writer_options(self) -> dict:
        d = self.cfg.dataset
        return {"image_writer_threads": d.num_image_writer_threads_per_camera * len(self.robot.cameras),
                "image_writer_processes": d.num_image_writer_processes, "rgb_encoder": d.rgb_encoder,
                "depth_encoder": quiet_depth_encoder(d.depth_encoder),
                "streaming_encoding": True, "encoder_queue_maxsize": d.encoder_queue_maxsize,
                "encoder_threads": d.encoder_threads}

    def _open(self, keyboard: bool) -> RecordingSession:
        """The two sinks, once the robot is connected (cameras know their intrinsics then)."""
        d = self.cfg.dataset
        cameras = {n: info for n, info in stream_infos(self.robot.cameras).items() if n in self.layout.cameras}
        sidecar = {"camera_info": {n: asdict(c) for n, c in cameras.items()},
                   "sync_policy": stored_policy(self.cfg.sync), "source_names": list(self.layout.source_names)}
        created = [] if self.cfg.resume else [Path(d.root)]
        try:
            self.lerobot = LeRobotSink.open(d.repo_id, Path(d.root), d.fps, self.robot_type, self.layout,
                                            self.cfg.resume, d.video, self._writer_options(), sidecar,
                                            former_robot_type=self.robot.name)
            self.robot_type = self.lerobot.dataset.meta.robot_type  # a resumed dataset keeps its own
            native, session_id = None, None
            if self.cfg.native.enabled:
                created += [] if self.cfg.resume else [self.cfg.native_root]
                session_dir = create_session(self.cfg.native_root, Path(d.root), d.repo_id, self.robot_type,
                                             self.layout, self.cfg.sync)
                session_id = session_dir.name
                native = NativeSink(session_dir, self.layout, cameras,
                                    staged_video=self.lerobot.staged_video if d.video and cameras else None,
                                    video_crf=self.cfg.native.video_crf,
                                    depth={n: depth_quantization(d.depth_encoder) for n in self.layout.depth_streams})
        except BaseException:
            if self.lerobot is not None:
                self.lerobot.dataset.finalize()
            for root in created:  # a failed start leaves nothing behind (and no root that then demands --resume)
                _remove_created(root)
            raise
        robot = self.robot.robot
        return RecordingSession(self.robot, self.teleop, self.layout, self.lerobot, native,
                                self.lerobot.next_index, self._metadata(), self.cfg.sync, self.cfg.timing,
                                session_id=session_id, fault_policy=self.cfg.fault_policy, keyboard=keyboard,
                                live_view=robot.station.live_view if isinstance(robot, StationRobot) else None)

    def run(self) -> int:
        d = self.cfg.dataset
        check_roots(self.cfg)  # before anything is connected or created
        listener = None
        saved = 0
        try:
            self.teleop.connect()
            self.robot.connect()
            world = self.robot.robot.world if isinstance(self.robot.robot, WorldRobot) else None
            if world is not None and world.runner is not None and isinstance(self.teleop, WorldReader):
                self.teleop.attach_world(world.runner)
            teleop_keys = self.teleop.keyboard_help() if isinstance(self.teleop, KeyboardInput) else ""
            listener = create_key_listener(self._on_key, controls_help="n next, r re-record, d discard, s/f success/"
                                           "failure, a re-arm after a device fault, q quit"
                                           + (f"; teleoperation: {teleop_keys}" if teleop_keys else ""))
            if listener is None and (self.cfg.wait_for_start or self.cfg.confirm_episodes):
                raise UserError("--wait_for_start and --confirm_episodes wait for keys, and no keyboard can be read "
                                "here (no terminal, no desktop session): run teledex-record in a terminal, or drop "
                                "them")
            self.session = self._open(keyboard=listener is not None)
            saved = self.session.run(EpisodePlan(
                d.num_episodes, d.episode_time_s, d.reset_time_s, d.single_task, self.cfg.wait_for_start,
                self.cfg.confirm_episodes, settle_s=self.cfg.settle_s if self.cfg.settle_s >= 0 else None,
                successes_only=self.cfg.keep == "successes"))
        except BaseException as err:
            if _is_disk_full(err):
                saved_now = len(self.session.saved_uuids) if self.session else 0
                raise UserError(
                    f"Disk full: the episode in progress is lost (unless its save was done: teledex-repair "
                    f"completes it); the {saved_now} episode(s) saved "
                    f"in this run and every earlier one are intact in both formats. Free space, run `teledex-repair "
                    f"{d.root}`, then continue with --resume=true.") from err
            raise
        finally:
            self._close(listener)
        print(f"Saved {saved} episode(s) to {d.root}" + (f" and {self.cfg.native_root}" if self.cfg.native.enabled
                                                          else ""))
        if self.lerobot is not None and (depth := self.lerobot.dataset.meta.depth_keys):  # ACT, Diffusion stop on it
            print(f"Depth ({', '.join(depth)}) is LeRobot's 1-channel depth feature, which ACT and Diffusion cannot "
                  f"take: train on `teledex-convert to-training {d.root} <new folder>` (depth as a 3-channel picture) "
                  "or drop it with lerobot-edit-dataset remove_feature (docs/recording.md, Training on depth)")
        not_pushed = self._push(saved) if d.push_to_hub and saved else None
        if self.session.unresolved_faults:
            raise UserError("the session ended with device faults nobody cleared (" + "; ".join(
                f"{part}: {message}" for part, message in self.session.unresolved_faults.items()) + "). The episodes "
                "saved are intact and every frame in fault is marked (device_fault); fix the cause, then record on "
                "with --resume=true." + (f" Also: {not_pushed}" if not_pushed else ""))
        if not_pushed:
            raise UserError(not_pushed)
        return saved

    def _push(self, saved: int) -> str | None:
        """Both formats to the Hub (hub.py); None once pushed, else the line saying the data is saved and the command
        that pushes it later: a push that fails or is stopped never ends a recording in a traceback."""
        d = self.cfg.dataset
        where = f"{d.root}" + (f" and {self.cfg.native_root}" if self.cfg.native.enabled else "")
        private, tags = d.private or None, d.tags or ()
        try:
            push(Path(d.root), d.repo_id, self.cfg.native_root, private=private, tags=tags)
        except PushError as err:
            return f"the {saved} episode(s) are saved in {where}, not pushed to the Hub: {err}"
        except (Exception, KeyboardInterrupt) as err:  # saved all the same: the push is the part to do again
            again = push_command(Path(d.root), d.repo_id, self.cfg.native_root, private, tags)
            return (f"the {saved} episode(s) are saved in {where}, not pushed to the Hub ({type(err).__name__}: "
                    f"{err}); push later with `{again}`")
        return None

    def _on_key(self, name: str) -> None:
        """Recording keys, then the teleoperator's own (its state machine: emergency, zero pose, ...)."""
        if self.session is None:
            return  # keys before the recording opened
        if not self.session.events.on_key(name) and isinstance(self.teleop, KeyboardInput):
            self.teleop.press_keyboard_key(name)

    def _close(self, listener) -> None:
        try:
            if self.lerobot is not None:
                self.lerobot.close()
        except Exception as err:  # after a failure (a full disk) LeRobot's writer is half-closed; saved ones stay
            logger.warning("Could not close the dataset cleanly (%s); `teledex-repair` restores every saved episode",
                           err)
        finally:
            if self.robot.is_connected:
                self.robot.disconnect()
            if self.teleop.is_connected:
                self.teleop.disconnect()
            if listener is not None:
                listener.stop()

    def _metadata(self) -> dict:
        """What every episode's metadata.json shares: hardware, cameras, collection settings."""
        d = self.cfg.dataset
        robot = self.cfg.robot
        cameras = {n: RecordedCamera(type(c).__name__, c.width, c.height, c.fps, reads_depth(c))
                   for n, c in self.robot.cameras.items()}
        return shared_metadata(self.layout, self.robot_type, cameras, d.rgb_encoder.vcodec if d.video else "libx264",
                               d.repo_id, Path(d.root),
                               preset=robot.preset if isinstance(robot, PresetConfig) else None,
                               backend=robot.backend if isinstance(robot, BackendConfig) else None, rig=self._rig,
                               followers=self._followers())


def _is_disk_full(error: BaseException) -> bool:
    err: BaseException | None = error
    while err is not None:
        if isinstance(err, OSError) and err.errno == errno.ENOSPC:
            return True
        if "No space left on device" in str(err):  # LeRobot's encoder thread reports its OSError as text
            return True
        err = err.__cause__ or err.__context__
    return False


def _remove_created(root: Path) -> None:
    shutil.rmtree(root, ignore_errors=True)

