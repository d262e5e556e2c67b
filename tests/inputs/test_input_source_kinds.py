"""The registry of input sources (inputs.source_kinds): every kind a teleoperator may name is registered and describes
itself; an unknown name fails naming the registered ones; a kind registered here, outside the teleoperator, is built
from the teleoperator's config, printed, diagnosed and handed over by it."""

import inspect
import time
from types import SimpleNamespace

import pytest

from lerobot_teleoperator_teledex import (
    TeledexGloveConfig,
    TeledexKeypoints,
    TeledexKeypointsConfig,
    TeledexLeaderArmConfig,
    TeledexReplayConfig,
    TeledexXRConfig,
)
from teledex_lerobot.inputs.datagram_file import read_datagrams
from teledex_lerobot.inputs.source_kinds import SOURCE_KINDS, register_source, source_kind
from teledex_lerobot.inputs.sources import InputSource, ThreadedSource, UdpSource
from teledex_lerobot.inputs.webxr import PORT, WebXRSource
from teledex_lerobot.inputs.xrobotoolkit import TCP_PORT
from teledex_lerobot.paths import STREAMS_DIR

PRESET = "piper_linkerhand_o6_single"


def test_every_kind_is_registered_and_every_config_names_registered_kinds():
    assert list(SOURCE_KINDS) == ["udp", "unix", "replay", "xrobotoolkit", "webxr", "robot"]
    assert all(issubclass(kind, InputSource) and not inspect.isabstract(kind) for kind in SOURCE_KINDS.values())
    assert (source_kind("xrobotoolkit").default_port, source_kind("webxr").default_port) == (TCP_PORT, PORT)
    assert TeledexGloveConfig().allowed_sources() == ("udp", "unix", "replay")
    assert TeledexXRConfig().allowed_sources() == ("udp", "unix", "replay", "xrobotoolkit", "webxr")
    assert TeledexLeaderArmConfig().allowed_sources() == ("udp", "unix", "replay", "robot")
    assert TeledexReplayConfig().allowed_sources() == ("replay",)


def test_an_unknown_kind_is_named_with_the_registered_ones():
    with pytest.raises(ValueError, match="unknown input source 'bluetooth'; registered: udp, unix, replay, "
                                         "xrobotoolkit, webxr, robot"):
        source_kind("bluetooth")
    with pytest.raises(ValueError, match=r"source must be one of \('udp', 'unix', 'replay'\) \(got 'bluetooth'\)"):
        TeledexGloveConfig(source="bluetooth")
    with pytest.raises(ValueError, match="'udp' is already registered"):
        register_source("udp", WebXRSource)


def test_network_kinds_say_where_they_listen_and_webxr_its_page(tmp_path):
    udp = UdpSource.from_config(SimpleNamespace(bind="127.0.0.1", allow=[]), 0)
    try:
        [line] = udp.describe("teledex_glove (udp)")
        assert line.startswith(f"teledex_glove (udp): listening on 127.0.0.1:{udp.address[1]} (this machine only")
        assert udp.diagnostics() == ["dropped_senders=0", "refused=0"]
    finally:
        udp.stop()
    page = WebXRSource("127.0.0.1", 0, certificate_dir=tmp_path, pairing=True)
    try:
        listening, certificate, url = page.describe("teledex_xr (webxr)")
        assert "listening on 127.0.0.1:" in listening and "certificate (self-signed" in certificate
        assert url.startswith("  open https://<this computer's address>:") and "?token=" in url
        [new_url] = page.hand_over()  # the next operator's page pairs with a new token
        assert new_url.split("?token=")[1].split()[0] != url.split("?token=")[1].split()[0]
        assert page.diagnostics() == ["dropped_senders=0", "refused=0", "pages=0", "unpaired=0"]
    finally:
        page.stop()


class ScriptedSource(ThreadedSource):
    """A kind of source the teleoperator has never heard of: it plays keypoint datagrams from memory."""

    default_port = 4242

    def __init__(self, port: int, speed: float):
        super().__init__()
        self.port, self.speed, self.played = port, speed, 0
        self.datagrams = read_datagrams(STREAMS_DIR / "wrist_motion.datagrams.jsonl")[1][:20]

    @classmethod
    def from_config(cls, config, port: int):
        return cls(port, config.replay_speed)

    def _run(self, receiver) -> None:
        for _, data in self.datagrams:
            receiver.handle(data)
            self.played += 1

    def describe(self, name: str) -> list[str]:
        return [f"{name}: scripted on port {self.port} at x{self.speed}"]

    def diagnostics(self) -> list[str]:
        return [f"played={self.played}"]

    def hand_over(self) -> list[str]:
        return ["  the next script may play"]


def test_a_kind_registered_outside_the_teleoperator_is_built_from_its_config(capsys):
    register_source("scripted", ScriptedSource)
    try:
        teleop = TeledexKeypoints(TeledexKeypointsConfig(preset=PRESET, source="scripted", replay_speed=2.0,
                                                         keyboard=False))
        teleop.connect()
        try:
            deadline = time.monotonic() + 10
            while teleop.receiver.packets < 20 and time.monotonic() < deadline:
                time.sleep(0.01)
            assert teleop.receiver.packets == 20
            assert "teledex_keypoints (scripted): scripted on port 4242 at x2.0\n" in capsys.readouterr().out
            assert teleop.input_diagnostics().startswith("[teleop] input played=20 bad_fields=0 ")
            assert teleop.keyboard_help().endswith("h = hand the input over")
            assert teleop.press_keyboard_key("h")
            assert capsys.readouterr().out.endswith("the next sender takes it\n  the next script may play\n")
        finally:
            teleop.disconnect()
    finally:
        del SOURCE_KINDS["scripted"]
