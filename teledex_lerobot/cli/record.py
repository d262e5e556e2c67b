"""teledex-record: record episodes to a LeRobotDataset and, in the same pass, the native TeleDex layout, every frame
validated for time synchronisation and both formats committed as a pair.

Same flag style as lerobot-record (--robot.*, --teleop.*, --dataset.*), plus --native.*, --sync.* and --timing.*.
Keys while recording (from a terminal or a desktop session): n / right arrow = end the episode and save it;
r / left arrow = re-record it; d = discard it and go on; s = mark it a success, f = a failure; space = start the next
episode when --wait_for_start=true; a = re-arm the devices after a fault; q / Esc = save the episode and stop.
Without a keyboard, episodes run on timers, and a device fault ends the session (see --fault_policy);
a session ending with a fault unresolved exits with code 2.
Ctrl-C or SIGTERM stops the recording in one line: the episode in progress is handled as a device fault would be
(saved as far as it got and marked "interrupted", or dropped with --fault_policy=rerecord), every episode saved
before stays intact in both formats, devices are disconnected; exit code 130 (Ctrl-C) or 143 (SIGTERM). Exit codes:
0 done, 2 bad input, configuration, device, port in use or disk (one line naming the fix), 130/143 stopped, 1 a bug.
--dataset.push_to_hub=true (LeRobot's default) pushes both formats once saved (recording/hub.py); a push that fails
or is stopped exits 2 with one line: the episodes are saved, and the teledex-push command that pushes them later.
Videos are always encoded while recording (LeRobot's streaming encoder, --dataset.rgb_encoder.*), once per frame for
both formats.
"""

import importlib
import logging
import pkgutil
import sys
from typing import TYPE_CHECKING

from ..capabilities import RatedConfig
from ..errors import ConfigError, teledex_cause
from ..recording.options import RecordOptions
from .errors import run_command

if TYPE_CHECKING:
    from ..recording.recorder import TeledexRecordConfig

logger = logging.getLogger(__name__)

# Flags whose help needs LeRobot's device registry (each type has its own flags): answered by LeRobot's scoped help.
_TYPED_FLAGS = ("--robot.type", "--teleop.type", "--config_path")

LEROBOT_FLAGS = """\
LeRobot's flags, as in lerobot-record:
  --robot.type     teledex (an arm + hand rig from --robot.preset), teledex_followers (several rigs),
                   teledex_arm, teledex_hand, or any LeRobot robot
  --teleop.type    teledex_replay (a recorded input file), teledex_xr (XRoboToolkit app, WebXR page),
                   teledex_glove (UdexReal), teledex_keypoints (hand keypoint stream), teledex_leader_arm,
                   teledex_world_expert (the MuJoCo world's scripted expert), or any LeRobot teleoperator
  --dataset.*      repo_id and root (required), fps, single_task, num_episodes, episode_time_s, reset_time_s,
                   video, push_to_hub, rgb_encoder.*, ...
Give the types to list every flag of them (this loads LeRobot, a few seconds):
  teledex-record --robot.type=teledex --teleop.type=teledex_xr --help

Example (no hardware):
  teledex-record --robot.type=teledex --teleop.type=teledex_replay --dataset.repo_id=local/demo \\
    --dataset.root=outputs/demo_rec --dataset.single_task="grasp" --dataset.num_episodes=2 \\
    --dataset.episode_time_s=8 --dataset.push_to_hub=false
"""


def print_help() -> None:
    """Our own flags and a guide to LeRobot's, without loading LeRobot."""
    from draccus.help_formatter import SimpleHelpFormatter
    from draccus.wrappers.dataclass_wrapper import DataclassWrapper
    from draccus.wrappers.field_wrapper import FieldWrapper
    from draccus.wrappers.suppressing_argparse import SuppressingArgumentParser

    parser = SuppressingArgumentParser(prog="teledex-record", description=__doc__, epilog=LEROBOT_FLAGS,
                                       formatter_class=SimpleHelpFormatter)

    def register(wrapper) -> None:  # one group per config section, its fields in it
        group = parser.add_argument_group(title=wrapper.title, description=wrapper.description)
        for child in wrapper._children:
            if isinstance(child, FieldWrapper):
                child.add_action(group)
            else:
                register(child)

    register(DataclassWrapper(RecordOptions))
    parser.print_help()


def import_lerobot_devices() -> None:
    """Import every device package LeRobot ships, so that the command line can name any LeRobot robot, teleoperator
    or camera (each registers its config choice when imported). LeRobot's record script imports a list of them and its
    policies too: 2-4 s of every teledex-record start, for nothing we use."""
    import lerobot.cameras
    import lerobot.robots
    import lerobot.teleoperators

    for package in (lerobot.robots, lerobot.teleoperators, lerobot.cameras):
        for module in pkgutil.iter_modules(package.__path__):
            if module.ispkg:
                importlib.import_module(f"{package.__name__}.{module.name}")


def record() -> None:
    """Import LeRobot's devices and plugins, parse the command line and record. The recording and LeRobot are imported
    here, never for --help."""
    from lerobot.utils.import_utils import register_third_party_plugins

    from ..recording.recorder import Recorder
    from ..storage.video import silence_encoder_logs

    import_lerobot_devices()
    silence_encoder_logs()
    register_third_party_plugins()
    run_command("teledex-record", lambda: Recorder(parse(sys.argv[1:])).run())


def parse(args: list[str]) -> "TeledexRecordConfig":
    """The command line as lerobot-record's parser reads it (LeRobot's plugin paths, scoped help, --config_path), but
    a value draccus cannot decode ends in one line (a ConfigError) where LeRobot's parser prints it and exits 1."""
    import draccus
    from draccus.utils import DecodingError
    from lerobot.configs import parser

    from ..recording.recorder import TeledexRecordConfig

    for flag, path in parser.parse_plugin_args(parser.PLUGIN_DISCOVERY_SUFFIX, args).items():
        parser.load_plugin(path)
        args = parser.filter_arg(flag, args)
    if "--help" in args or "-h" in args:
        parser.print_scoped_help(TeledexRecordConfig, args)
        sys.exit(0)
    config_path = parser.parse_arg("config_path", args)
    if config_path:
        args = parser.filter_arg("config_path", args)
    try:
        cfg = draccus.parse(config_class=TeledexRecordConfig, config_path=config_path, args=args)
    except DecodingError as err:  # our config's refusal inside, or draccus' own (a missing field, a wrong type)
        raise teledex_cause(err) or ConfigError(f"{err}; see teledex-record --help") from None
    fps_given = config_path is not None or any(arg.startswith("--dataset.fps") for arg in args)
    use_recording_rate(cfg, fps_given)
    return cfg


def use_recording_rate(cfg: "TeledexRecordConfig", fps_given: bool) -> None:
    """A preset's rate is the recording's unless --dataset.fps says otherwise; a camera slower than the recording is
    refused (every tick would wait for its frame, or repeat an old one)."""
    if not isinstance(cfg.robot, RatedConfig):
        return
    rate = cfg.robot.recording_fps()
    if rate is not None and not fps_given:
        cfg.dataset.fps = rate
        logger.info("Recording at %d fps, the preset's rate (--dataset.fps to change it)", rate)
    slow = {name: fps for name, fps in cfg.robot.camera_fps().items() if fps < cfg.dataset.fps}
    if slow:
        cameras = ", ".join(f"{name} at {fps} fps" for name, fps in slow.items())
        preset = f" (the preset's rate is {rate} fps)" if rate is not None else ""
        raise ConfigError(f"--dataset.fps={cfg.dataset.fps} is faster than the camera(s) {cameras}{preset}: record at "
                          f"--dataset.fps={min(slow.values())} or below, or give the camera a higher fps")


def main() -> None:
    args = sys.argv[1:]
    if {"-h", "--help"} & set(args) and not any(arg.startswith(_TYPED_FLAGS) for arg in args):
        print_help()
        return
    record()


if __name__ == "__main__":
    main()
