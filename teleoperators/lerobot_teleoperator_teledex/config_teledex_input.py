"""Configs of the live input teleoperators: UdexReal glove, XR headset (Pico/Quest/WebXR), generic keypoint stream,
leader arm. Every one drives one rig, or several followers at once, through the control chain configured by a
control config (configs/control/*.yaml: strategy, relative arm, output chain, stale timeout, key bindings).

Network listeners bind 127.0.0.1 unless --teleop.bind names another address (a LAN address, or 0.0.0.0 for every
interface), and then accept only the senders in --teleop.allow if that is given."""

from dataclasses import dataclass, field
from typing import ClassVar

from lerobot.teleoperators import TeleoperatorConfig

from teledex_lerobot.errors import ConfigError
from teledex_lerobot.inputs.senders import LOCAL_BIND, SenderFilter
from teledex_lerobot.inputs.source_kinds import SOURCE_KINDS
from teledex_lerobot.inputs.webxr import DEFAULT_CERTIFICATE_DIR

from .config_rig import TeledexRigTeleopConfig


@dataclass(kw_only=True)
class TeledexInputConfig(TeledexRigTeleopConfig):
    # The registered sources that are one device's own link (inputs.source_kinds) this device takes, besides those
    # that carry any device's datagrams (udp, unix, replay).
    own_sources: ClassVar[tuple[str, ...]] = ()
    # A name in configs/control/ or a .yaml path; "" = the device's default.
    control: str = ""
    # Where packets come from: udp (bind:port), unix (a local datagram socket at socket_path), or replay (a
    # recorded datagram file, played in real time through the same parser); XR headsets also xrobotoolkit and webxr.
    source: str = "udp"
    # The address network sources listen on: 127.0.0.1 (this machine only), a LAN address, or 0.0.0.0 (every
    # interface). A headset or glove on the network needs one of the latter two.
    bind: str = LOCAL_BIND
    # Sender addresses or networks that may send (e.g. [192.168.1.20, 10.0.0.0/24]); [] = any that can reach bind.
    allow: list[str] = field(default_factory=list)
    port: int = 0  # 0 = the device's default port
    socket_path: str = "/tmp/teledex_input.sock"  # source=unix: the local datagram socket to read
    replay_file: str = ""  # a path, or a name in configs/streams/ (<name>.datagrams.jsonl)
    replay_speed: float = 1.0  # source=replay: 1.0 = as recorded, 2.0 = twice as fast
    replay_loop: bool = True  # source=replay: start over at the end of the file (else the input goes stale there)
    # Write every received packet to this datagram file (replayable with source=replay).
    record_to: str = ""
    # One master, several followers: follower name -> preset. Keys become "<name>_<key>", to match
    # --robot.type=teledex_followers with the same followers. Empty: the robot's own rig(s) (see `preset`).
    followers: dict[str, str] = field(default_factory=dict)
    # Per-follower control config (name -> control config); followers not listed use `control`.
    follower_controls: dict[str, str] = field(default_factory=dict)
    # None = the control config's auto_start: press L1 on connect and L2 at the zero pose.
    auto_start: bool | None = None
    # Overrides the control config's strategy: how the hand is driven (joint_mapping, teledex, dexpilot, analog);
    # "" = the control config's.
    hand_method: str = ""
    # The operator's hand calibration from teledex-calibrate-hand: an operator name or a .yaml path; "" = the control
    # config's (usually none: the canonical hand).
    hand_calibration: str = ""
    # Listen to the keyboard for the state machine's keys (e = Emergency, z = zero pose, t = teleoperation,
    # p = park). teledex-record turns this off and forwards its own key presses instead.
    keyboard: bool = True

    def __post_init__(self):
        if self.source not in self.allowed_sources():
            raise ConfigError(f"source must be one of {self.allowed_sources()} (got {self.source!r})")
        if self.source == "replay" and not self.replay_file:
            raise ConfigError("source=replay needs replay_file (a .datagrams.jsonl file)")
        if self.replay_speed <= 0:
            raise ConfigError("replay_speed must be > 0")
        SenderFilter(self.allow)  # a malformed address fails here, naming the option

    def allowed_sources(self) -> tuple[str, ...]:
        """The registered sources this device takes: every one that carries any device's datagrams, and its own."""
        return tuple(name for name, kind in SOURCE_KINDS.items() if kind.any_device or name in self.own_sources)


@TeleoperatorConfig.register_subclass("teledex_glove")
@dataclass(kw_only=True)
class TeledexGloveConfig(TeledexInputConfig):
    """UdexReal HandDriver JSON over UDP (default port 5555)."""


@TeleoperatorConfig.register_subclass("teledex_xr")
@dataclass(kw_only=True)
class TeledexXRConfig(TeledexInputConfig):
    """XR headsets, all in the XRoboToolkit state schema: source=xrobotoolkit (the XRoboToolkit app on a Pico or
    Quest connects to TCP 63901), webxr (our page for headset browsers, https://<bind>:8012/), or udp (29000) / unix
    (a local bridge) / replay."""

    own_sources: ClassVar[tuple[str, ...]] = ("xrobotoolkit", "webxr")
    source: str = "xrobotoolkit"  # xrobotoolkit, webxr, udp, unix or replay
    # xrobotoolkit: also send our address to the app's discovery listener at this headset address ("host" or
    # "host:port"), every 5 s, so the app lists this computer; "" = type the address into the app instead.
    announce_to: str = ""
    # xrobotoolkit: the port of a page that shows the operator the robot's cameras and status in a browser beside the
    # app (which shows nothing of ours), on the same address as the link; 0 = no page.
    view_port: int = 8012
    # webxr, and xrobotoolkit's view page: where the self-signed certificate is kept (made on first run, reused).
    certificate_dir: str = str(DEFAULT_CERTIFICATE_DIR)
    # webxr: how often the page gets the robot's camera frames (JPEG) and its drawing (0 = never: status only).
    view_hz: float = 30.0
    # webxr: also draw the simulated world's task objects where they are (a training aid: a real station knows no
    # object poses, so by default the page shows what a real station can: the cameras and the robot measured).
    show_objects: bool = False

    def __post_init__(self):
        super().__post_init__()
        if not 0 <= self.view_hz <= 120:
            raise ConfigError(f"view_hz must be in 0..120 (frames per second to the page; 0 = none), got "
                              f"{self.view_hz}")
        if not 0 <= self.view_port <= 65535:
            raise ConfigError(f"--teleop.view_port={self.view_port} is no TCP port: give one from 1 to 65535, or 0 "
                              "for no view page")


@TeleoperatorConfig.register_subclass("teledex_keypoints")
@dataclass(kw_only=True)
class TeledexKeypointsConfig(TeledexInputConfig):
    """Generic keypoint stream over UDP (default port 5566): 21 MediaPipe keypoints + wrist pose per hand."""


@TeleoperatorConfig.register_subclass("teledex_leader_arm")
@dataclass(kw_only=True)
class TeledexLeaderArmConfig(TeledexInputConfig):
    """A leader arm (any of our arms) copied joint by joint. source=robot reads it in this process; udp, unix and
    replay take joint datagrams (inputs.joint_stream)."""

    own_sources: ClassVar[tuple[str, ...]] = ("robot",)
    source: str = "robot"  # robot (the leader_* arm, read here), udp, unix or replay (joint datagrams)
    leader_model: str = "piper"  # source=robot: the leader arm's model (a built-in name or a URDF path)
    leader_side: str = "right"  # source=robot: the leader arm's side
    leader_backend: str = "sim"  # fake | sim | real (real: e.g. a Piper in teach mode)
    leader_rate_hz: float = 200.0  # source=robot: how often the leader's joints are read
