"""Who may send us input: the listen address and the sender allow-list shared by every network source.

Listeners bind 127.0.0.1 by default, so only programs on this machine can reach them. Accepting a headset or a
glove on the network is an explicit choice (a LAN address, or 0.0.0.0 for every interface), optionally narrowed to
an allow-list of sender addresses or networks; packets and connections from anyone else are counted and dropped.
Among the senders allowed, one operator at a time: a datagram source locks to the first sender (SenderLock), the
XRoboToolkit link to the first app that identifies itself (kept for that app through its drops), the WebXR
tracking to the first page that sends a state.
"""

import errno
import ipaddress
import logging
import threading

from ..errors import ConfigError, DeviceError

logger = logging.getLogger(__name__)

LOCAL_BIND = "127.0.0.1"
# A datagram sender silent this long has let go of the input: the next sender may take it (a glove streams at
# 100 Hz and a headset at 60-90 Hz, so this is a sender gone, not a Wi-Fi hiccup).
SENDER_IDLE_S = 2.0


def is_loopback(bind: str) -> bool:
    try:
        return ipaddress.ip_address(bind).is_loopback
    except ValueError:
        return bind == "localhost"


class SenderFilter:
    """The allow-list (empty: anyone who can reach the listener) and the count of what it dropped."""

    def __init__(self, allow: list[str] | tuple[str, ...] = ()):
        try:
            self.networks = [ipaddress.ip_network(entry.strip(), strict=False) for entry in allow if entry.strip()]
        except ValueError as error:
            raise ConfigError(f"teleop.allow: {error}; give sender addresses or networks, e.g. "
                              "--teleop.allow='[192.168.1.20, 10.0.0.0/24]'") from error
        self.dropped = 0
        self._reported: set[str] = set()
        self._lock = threading.Lock()

    def allows(self, host: str) -> bool:
        """Whether `host` (a sender's IP address) may send; counts and logs (once per address) a refusal."""
        if not self.networks:
            return True
        address = ipaddress.ip_address(host.split("%")[0])
        if address.version == 6 and address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        if any(address in network for network in self.networks):
            return True
        with self._lock:
            self.dropped += 1
            first = host not in self._reported
            self._reported.add(host)
        if first:
            logger.warning("Dropped input from %s: not in --teleop.allow %s", host, [str(n) for n in self.networks])
        return False

    def describe(self) -> str:
        return "any sender" if not self.networks else "senders " + ", ".join(str(n) for n in self.networks)


def cannot_listen(bind: str, port: int, error: OSError, other_port: str = "or choose another --teleop.port"
                  ) -> DeviceError:
    """A listener that could not bind, as one line naming the address and the fix (the commands print it)."""
    if error.errno == errno.EADDRINUSE:
        why = (f"the port is in use (another program, or a teleop still running, listens there; `ss -lntup "
               f"'sport = :{port}'` names it): stop it, {other_port}")
    elif error.errno == errno.EADDRNOTAVAIL:
        why = f"{bind} is not an address of this computer (`ip -4 addr` lists them): fix --teleop.bind"
    elif error.errno == errno.EACCES:
        why = "ports below 1024 need root: choose another --teleop.port"
    else:
        why = str(error)
    return DeviceError(f"cannot listen on {bind}:{port}: {why}")


def describe_listener(kind: str, bind: str, port: int, senders: SenderFilter) -> str:
    """The line printed when a listener starts: where it listens and who can reach it."""
    if is_loopback(bind):
        return f"{kind}: listening on {bind}:{port} (this machine only; --teleop.bind=<LAN address> to accept a device)"
    return (f"{kind}: listening on {bind}:{port}, reachable from the network ({senders.describe()}; "
            "--teleop.allow=[...] to restrict)")


class SenderLock:
    """One datagram sender at a time: the first (address, port) that sends owns the input until it has been silent
    for `idle_s` or is handed over (`release`); packets from any other sender are counted (`refused`) and dropped,
    so a second program cannot interleave its poses or presses with the operator's."""

    def __init__(self, idle_s: float = SENDER_IDLE_S):
        self.idle_ns = int(idle_s * 1e9)
        self.owner: tuple | None = None
        self.owners = 0  # how many senders have owned the input
        self.refused = 0
        self._last_ns = 0
        self._reported: set[str] = set()  # addresses refused (logged once each)
        self._lock = threading.Lock()

    def admit(self, sender: tuple, now_ns: int) -> bool:
        """Whether the packet from `sender` that arrived at `now_ns` is the owner's (taking ownership if free)."""
        with self._lock:
            if sender != self.owner:
                if self.owner is not None and now_ns - self._last_ns < self.idle_ns:
                    self.refused += 1
                    first = sender[0] not in self._reported
                    self._reported.add(sender[0])
                    if first:
                        logger.warning("Refused input from %s:%d: %s:%d is sending (the input is theirs until they "
                                       "stop for %.0f s, or it is handed over at the console)", *sender[:2],
                                       *self.owner[:2], self.idle_ns / 1e9)
                    return False
                logger.info("Input from %s:%d", *sender[:2])
                self.owner = sender
                self.owners += 1
            self._last_ns = now_ns
            return True

    def release(self) -> None:
        """Let the owner go: the next sender takes the input."""
        with self._lock:
            self.owner = None
