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
import pkgutil
import sys

from ..recording.options import RecordOptions
from .errors import run_command

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
    """Parse the command line as lerobot-record does (draccus, LeRobot's plugins and scoped help), then record. The
    recording and LeRobot are imported here, never for --help."""
    from lerobot.configs import parser
    from lerobot.utils.import_utils import register_third_party_plugins

    from ..recording.recorder import Recorder, TeledexRecordConfig
    from ..storage.video import silence_encoder_logs

    @parser.wrap()
    def parse_and_record(cfg: TeledexRecordConfig) -> None:
        Recorder(cfg).run()

    import_lerobot_devices()
    silence_encoder_logs()
    register_third_party_plugins()
    run_command("teledex-record", parse_and_record)


def main() -> None:
    args = sys.argv[1:]
    if {"-h", "--help"} & set(args) and not any(arg.startswith(_TYPED_FLAGS) for arg in args):
        print_help()
        return
    record()


if __name__ == "__main__":
    main()
