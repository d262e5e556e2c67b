"""Replay teleoperator: a recorded input file, played in real time through the same parser and control chain as the
live device that sent it."""

from teledex_lerobot.errors import DataError
from teledex_lerobot.inputs import PARSERS
from teledex_lerobot.inputs.datagram_file import datagram_file_path, read_header

from .config_teledex_replay import TeledexReplayConfig
from .teledex_input import TeledexGlove, TeledexInputTeleop, TeledexKeypoints, TeledexXR
from .teledex_leader_arm import TeledexLeaderArm

# The control config each device uses, for files that do not name the one they were recorded with.
DEVICE_CONTROLS = {cls.parser: cls.default_control for cls in (TeledexGlove, TeledexXR, TeledexKeypoints,
                                                                TeledexLeaderArm)}


class TeledexReplay(TeledexInputTeleop):
    config_class = TeledexReplayConfig
    name = "teledex_replay"

    def __init__(self, config: TeledexReplayConfig):
        path = datagram_file_path(config.replay_file)
        header = read_header(path)
        if header["parser"] not in PARSERS:
            raise DataError(f"{path}: its parser {header['parser']!r} is not one of {sorted(PARSERS)}: give "
                            "--teleop.replay_file a file recorded by a TeleDex input (record_to)")
        self.parser = header["parser"]
        self.default_control = header.get("control") or DEVICE_CONTROLS[self.parser]
        super().__init__(config)
