"""teledex-record: record episodes to a LeRobotDataset and, in the same pass, the native TeleDex layout, with every
frame validated for time synchronisation.

Same flag style as lerobot-record (--robot.*, --teleop.*, --dataset.*), plus --native.* and --sync.*. Keys while
recording (from a terminal or a desktop session): n / right arrow = end the episode and save it; r / left arrow =
re-record it; d = discard it and go on; s = mark it a success, f = a failure; space = start the next episode when
--wait_for_start=true; q / Esc = save the episode and stop. Without a keyboard, episodes run on the timers.
"""

import errno
import json
import logging
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

# The record script imports every LeRobot device config, so any LeRobot robot or teleoperator can be recorded.
from lerobot.scripts import lerobot_record  # noqa: F401
from lerobot.configs import parser
from lerobot.configs.dataset import DatasetRecordConfig
from lerobot.datasets import LeRobotDataset
from lerobot.robots import RobotConfig, make_robot_from_config
from lerobot.teleoperators import TeleoperatorConfig, make_teleoperator_from_config
from lerobot.utils.import_utils import register_third_party_plugins
from lerobot.utils.keyboard_input import create_key_listener

from lerobot_robot_teledex.camera_info import camera_info
from lerobot_robot_teledex.sync_validated import SyncValidatedRobot

from ..clock import now_ns
from ..storage.lerobot_sink import build_frame, check_compatible, dataset_features, reopen, write_sidecar
from ..storage.native import NATIVE_FORMAT, PARTIAL_SUFFIX, NativeEpisodeWriter
from ..storage.video import silence_encoder_logs
from ..sync import SyncPacket, SyncPolicy

logger = logging.getLogger(__name__)
INPUT_SOURCE = "input"


@dataclass
class NativeOutputConfig:
    enabled: bool = True
    # Where the native layout goes; default: "<dataset root>_native".
    root: str | None = None
    video_crf: int = 18


@dataclass
class TeledexRecordConfig:
    robot: RobotConfig
    dataset: DatasetRecordConfig
    teleop: TeleoperatorConfig | None = None
    native: NativeOutputConfig = field(default_factory=NativeOutputConfig)
    sync: SyncPolicy = field(default_factory=SyncPolicy)
    resume: bool = False
    # Wait for the space key before each episode; otherwise episodes start on their own.
    wait_for_start: bool = False

    def __post_init__(self):
        if self.teleop is None:
            raise ValueError("A teleoperator is required: --teleop.type=... (e.g. teledex_replay)")
        if not self.dataset.repo_id:
            raise ValueError("--dataset.repo_id is required (e.g. local/my_task)")
        if self.dataset.root is None:
            raise ValueError("--dataset.root is required: the folder the dataset is written to")

    @property
    def native_root(self) -> Path:
        return Path(self.native.root) if self.native.root else Path(f"{Path(self.dataset.root)}_native")


class RecordingEvents:
    """Key presses, turned into the flags the loop reads."""

    def __init__(self):
        self.end_episode = self.rerecord = self.discard = self.stop = self.start = False
        self.success: bool | None = None

    def on_key(self, name: str) -> bool:
        """Set the flag of a recording key; False for keys that are not recording keys."""
        key = name.lower()
        if key in ("right", "n"):
            self.end_episode = True
        elif key in ("left", "r"):
            self.rerecord = self.end_episode = True
        elif key == "d":
            self.discard = self.end_episode = True
        elif key in ("s", "f"):
            self.success = key == "s"
            print(f"Episode marked a {'success' if self.success else 'failure'}")
        elif key == "space":
            self.start = True
        elif key in ("esc", "q"):
            self.stop = self.end_episode = True
        else:
            return False
        return True

    def next_episode(self) -> None:
        self.end_episode = self.rerecord = self.discard = self.start = False
        self.success = None


@dataclass
class EpisodeStats:
    frames: int = 0
    late_frames: int = 0
    sync_valid: int = 0
    max_diffs_ms: list = field(default_factory=list)

    def add(self, packet: SyncPacket, late: bool) -> None:
        self.frames += 1
        self.late_frames += late
        self.sync_valid += packet.valid
        self.max_diffs_ms.append(packet.max_diff_ms)

    def summary(self) -> dict:
        valid = np.array(self.max_diffs_ms)
        return {"frames": self.frames, "late_frames": self.late_frames,
                "sync_success_rate": self.sync_valid / max(self.frames, 1),
                "mean_max_diff_ms": float(valid.mean()) if len(valid) else None}


class Recorder:
    def __init__(self, cfg: TeledexRecordConfig):
        self.cfg = cfg
        self.robot = SyncValidatedRobot(make_robot_from_config(cfg.robot), cfg.sync)
        if hasattr(cfg.teleop, "keyboard"):
            cfg.teleop.keyboard = False  # one keyboard listener, ours: it forwards the teleop's keys below
        self.teleop = make_teleoperator_from_config(cfg.teleop)
        self.source_names = [*self._joint_sources(), *self.robot.cameras, INPUT_SOURCE]
        self.features = dataset_features(self.robot, self.source_names, cfg.dataset.video)
        self.events = RecordingEvents()
        self.session_dir: Path | None = None
        self.dataset: LeRobotDataset | None = None

    def _joint_sources(self) -> list[str]:
        rig = getattr(self.robot.robot, "rig", None)
        return list(rig.parts) if rig is not None else ["robot"]

    def _writer_options(self) -> dict:
        d = self.cfg.dataset
        return {"image_writer_threads": d.num_image_writer_threads_per_camera * len(self.robot.cameras),
                "image_writer_processes": d.num_image_writer_processes, "batch_encoding_size": 1,
                "rgb_encoder": d.rgb_encoder, "streaming_encoding": d.streaming_encoding,
                "encoder_queue_maxsize": d.encoder_queue_maxsize, "encoder_threads": d.encoder_threads}

    def open_dataset(self) -> None:
        d = self.cfg.dataset
        root = Path(d.root)
        if self.cfg.resume:
            dataset = LeRobotDataset.resume(d.repo_id, root=root, **self._writer_options())
            check_compatible(dataset, self.features, d.fps, self.robot.name)
        else:
            if root.exists():
                raise FileExistsError(f"{root} already exists: pass --resume=true to add episodes to it, or choose "
                                      "another --dataset.root.")
            options = self._writer_options()
            dataset = LeRobotDataset.create(
                d.repo_id, d.fps, root=root, robot_type=self.robot.name, features=self.features,
                use_videos=d.video, image_writer_processes=options["image_writer_processes"],
                image_writer_threads=options["image_writer_threads"], rgb_encoder=d.rgb_encoder,
                streaming_encoding=d.streaming_encoding, encoder_queue_maxsize=d.encoder_queue_maxsize,
                encoder_threads=d.encoder_threads)
        self.dataset = dataset
        if self.cfg.native.enabled:
            stamp = datetime.now().strftime("%Y-%m-%d_%H-%M-%S")
            self.session_dir = self.cfg.native_root / f"session_{stamp}"
            self.session_dir.mkdir(parents=True, exist_ok=True)
            (self.session_dir / "session.json").write_text(json.dumps({
                "format": NATIVE_FORMAT, "session_id": self.session_dir.name, "lerobot_root": str(root.resolve()),
                "repo_id": d.repo_id, "fps": d.fps, "robot_type": self.robot.name,
                "joint_names": list(self.robot.action_features), "sources": self.source_names,
                "sync_policy": asdict(self.robot.policy)}, indent=2))

    def run(self) -> None:
        d = self.cfg.dataset
        self.open_dataset()
        self.teleop.connect()
        self.robot.connect()
        teleop_keys = getattr(self.teleop, "keyboard_help", lambda: "")()
        listener = create_key_listener(self._on_key, controls_help="n next, r re-record, d discard, s/f success/"
                                       "failure, q quit" + (f"; teleoperation: {teleop_keys}" if teleop_keys else ""))
        saved = 0
        try:
            saved = self._record_episodes()
        except OSError as err:
            if err.errno != errno.ENOSPC:
                raise
            raise SystemExit(
                f"Disk full ({err}). The episode being recorded is lost; every episode saved before it is intact. "
                f"Free space, run `teledex-repair {d.root}`, then continue with --resume=true.") from err
        finally:
            self._close(listener)
        print(f"Saved {saved} episode(s) to {d.root}" + (f" and {self.session_dir}" if self.session_dir else ""))
        if d.push_to_hub and saved:
            self.dataset.push_to_hub(tags=d.tags, private=d.private)

    def _on_key(self, name: str) -> None:
        """Recording keys, then the teleoperator's own (its state machine: emergency, zero pose, ...)."""
        if not self.events.on_key(name) and hasattr(self.teleop, "press_keyboard_key"):
            self.teleop.press_keyboard_key(name)

    def _record_episodes(self) -> int:
        d = self.cfg.dataset
        saved = 0
        while saved < d.num_episodes and not self.events.stop:
            self.events.next_episode()
            if self.cfg.wait_for_start:
                print("Press space to start the episode")
                self._drive(None, stop=lambda: self.events.start or self.events.stop)
                if self.events.stop:
                    break
            index = self.dataset.meta.total_episodes
            reset_episode = getattr(self.robot, "reset_episode", None)
            if reset_episode is not None:  # a simulated world lays out this episode's scene, the robot at home
                reset_episode(index)
            print(f"Recording episode {index} ({saved + 1}/{d.num_episodes})")
            native = self._native_writer(index)
            stats = self._drive(native, duration_s=d.episode_time_s)
            if self.events.rerecord or self.events.discard or stats.frames == 0:
                self.dataset.clear_episode_buffer()
                if native is not None:
                    native.discard()
                print(f"Episode {index} {'discarded' if self.events.discard else 'dropped for re-recording'}")
                continue
            self._save(index, native, stats)
            saved += 1
            if saved < d.num_episodes and not self.events.stop and d.reset_time_s > 0:
                print(f"Reset the environment ({d.reset_time_s:g} s)")
                self._drive(None, duration_s=d.reset_time_s)
        return saved

    def _close(self, listener) -> None:
        try:
            if self.dataset is not None:
                if self.dataset.has_pending_frames():
                    self.dataset.clear_episode_buffer()
                self.dataset.finalize()
        except OSError:
            logger.exception("Could not finalize the dataset; `teledex-repair` restores every saved episode")
        finally:
            if self.robot.is_connected:
                self.robot.disconnect()
            if self.teleop.is_connected:
                self.teleop.disconnect()
            if listener is not None:
                listener.stop()

    def _native_writer(self, index: int) -> NativeEpisodeWriter | None:
        if self.session_dir is None:
            return None
        return NativeEpisodeWriter(self.session_dir, index, joint_names=list(self.robot.action_features),
                                   source_names=self.source_names, fps=self.cfg.dataset.fps,
                                   cameras={n: camera_info(c) for n, c in self.robot.cameras.items()},
                                   video_crf=self.cfg.native.video_crf)

    def _drive(self, native: NativeEpisodeWriter | None, duration_s: float = float("inf"), stop=None) -> EpisodeStats:
        """The control loop. With native None nothing is recorded (reset or waiting); with a writer, every frame goes
        to both formats."""
        period_s = 1.0 / self.cfg.dataset.fps
        recording = native is not None
        stats = EpisodeStats()
        started = time.perf_counter()
        next_tick = started  # the schedule: a tick that starts more than half a period behind it is late
        next_report = started + 1.0
        while (time.perf_counter() - started) < duration_s and not self.events.end_episode:
            if stop is not None and stop():
                break
            tick = time.perf_counter()
            late = tick - next_tick > period_s / 2
            observation = self.robot.get_observation()
            action = self.teleop.get_action()
            input_ns = getattr(self.teleop, "sample_capture_ns", None) or now_ns()
            packet = self.robot.validate({INPUT_SOURCE: input_ns})
            sent = self.robot.send_action(action)
            if recording:
                self.dataset.add_frame(build_frame(self.dataset, observation, sent, packet, self.source_names,
                                                   self.cfg.dataset.single_task))
                native.add_frame(frame_ns=packet.checked_ns, qpos=_values(observation, sent), action=_values(sent, sent),
                                 packet=packet, images={n: observation[n] for n in self.robot.cameras})
                stats.add(packet, late=late)
                if tick >= next_report:
                    next_report += 1.0
                    self._print_progress(stats, tick - started)
            next_tick = max(next_tick + period_s, time.perf_counter() - period_s / 2)  # never catch up in a burst
            delay_s = next_tick - time.perf_counter()
            if delay_s > 0:
                time.sleep(delay_s)
        return stats

    def _print_progress(self, stats: EpisodeStats, elapsed_s: float) -> None:
        summary = stats.summary()
        faults = self.robot.device_faults() if hasattr(self.robot.robot, "device_faults") else {}
        print(f"  episode {self.dataset.meta.total_episodes}  {elapsed_s:5.1f} s  "
              f"{stats.frames / max(elapsed_s, 1e-9):5.1f} fps  sync ok {100 * summary['sync_success_rate']:5.1f}%"
              f"  late {stats.late_frames}" + "".join(f"\n  FAULT {role}: {message}" for role, message in faults.items()),
              flush=True)

    def _save(self, index: int, native: NativeEpisodeWriter | None, stats: EpisodeStats) -> None:
        """Both formats get the episode or neither does: the native one is saved first (an atomic rename) and is
        taken back if LeRobot's save then fails, e.g. on a full disk."""
        metadata = self._metadata(index, stats)
        saved_native = None
        try:
            if native is not None:
                saved_native = native.save(metadata)
            self.dataset.save_episode()
        except BaseException:
            self.dataset.clear_episode_buffer()
            if saved_native is not None:
                saved_native.rename(saved_native.with_name(saved_native.name + PARTIAL_SUFFIX))
            raise
        write_sidecar(self.dataset.root, index, metadata=metadata, sync_policy=asdict(self.robot.policy),
                      camera_info={n: asdict(camera_info(c)) for n, c in self.robot.cameras.items()},
                      source_names=self.source_names)
        self.dataset = reopen(self.dataset, **self._writer_options())
        summary = stats.summary()
        print(f"Saved episode {index}: {summary['frames']} frames, sync ok {100 * summary['sync_success_rate']:.2f}%,"
              f" mean max_diff {summary['mean_max_diff_ms'] or 0:.1f} ms, late frames {summary['late_frames']}")

    def _metadata(self, index: int, stats: EpisodeStats) -> dict:
        """The report's table 4, for this episode."""
        d = self.cfg.dataset
        rig = getattr(self.robot.robot, "rig", None)
        parts = {role: part.spec.model for role, part in rig.parts.items()} if rig is not None else {}
        # the rig as recorded, so exports compute kinematics from this episode's own models and mount
        rig_record = None if rig is None else {"parts": {role: asdict(part.spec) for role, part in rig.parts.items()},
                                               "hand_mount": asdict(rig.hand_mount_spec)}
        cameras = {n: {"type": c.__class__.__name__, "width": c.width, "height": c.height, "fps": c.fps}
                   for n, c in self.robot.cameras.items()}
        return {
            "format": NATIVE_FORMAT,
            "episode": {"task_name": d.single_task, "episode_id": f"episode_{index:06d}",
                        "session_id": self.session_dir.name if self.session_dir else None, "duration_s": round(stats.frames / d.fps, 3),
                        "timesteps": stats.frames, "success": self.events.success,
                        "recorded_utc": datetime.now(timezone.utc).isoformat()},
            "hardware": {"preset": getattr(self.cfg.robot, "preset", None), "robot_type": self.robot.name,
                         "arm_type": parts.get("arm"), "hand_type": parts.get("hand"),
                         "backend": getattr(self.cfg.robot, "backend", None),
                         "total_dof": len(self.robot.action_features), "rig": rig_record},
            "cameras": cameras,
            "collection": {"control_frequency_hz": d.fps, "dt_s": 1 / d.fps, "video_codec": "libx264",
                           "data_format": "video_compressed", "qpos_dim": len(self.robot.action_features),
                           "camera_streams": list(cameras),
                           "tactile_sensors": ["hand"] if getattr(self.robot.robot, "tactile_keys", None) else []},
            "sync": {"policy": asdict(self.robot.policy), **stats.summary()},
            "lerobot": {"repo_id": d.repo_id, "root": str(Path(d.root).resolve()), "episode_index": index},
        }


def _values(values: dict, keys_from: dict) -> np.ndarray:
    return np.array([values[k] for k in keys_from], dtype=np.float64)


@parser.wrap()
def record(cfg: TeledexRecordConfig) -> None:
    Recorder(cfg).run()


def main() -> None:
    silence_encoder_logs()
    register_third_party_plugins()
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")
    record()


if __name__ == "__main__":
    main()
