"""Config of the replay teleoperator: a recorded input file played through its device's parser and control chain."""

from dataclasses import dataclass

from lerobot.teleoperators import TeleoperatorConfig

from .config_teledex_input import TeledexInputConfig


@TeleoperatorConfig.register_subclass("teledex_replay")
@dataclass(kw_only=True)
class TeledexReplayConfig(TeledexInputConfig):
    """Replays a recorded input file (`replay_file`: a name in configs/streams/ or a .datagrams.jsonl path, as
    written by `--teleop.record_to` or `teledex-convert stream-to-datagrams`) exactly as the live device would send
    it: the file names its parser and the control config it was recorded with (`control` overrides it)."""

    source: str = "replay"  # always replay
    replay_file: str = "demo_grasp"  # a name in configs/streams/ or a .datagrams.jsonl path

    def allowed_sources(self) -> tuple[str, ...]:
        return ("replay",)
