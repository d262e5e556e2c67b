"""Who may send us input: the listen address and the sender allow-list shared by every network source.

Listeners bind 127.0.0.1 by default, so only programs on this machine can reach them. Accepting a headset or a
glove on the network is an explicit choice (a LAN address, or 0.0.0.0 for every interface), optionally narrowed to
an allow-list of sender addresses or networks; packets and connections from anyone else are counted and dropped.
"""

import ipaddress
import logging
import threading

logger = logging.getLogger(__name__)

LOCAL_BIND = "127.0.0.1"


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
            raise ValueError(f"teleop.allow: {error}; give sender addresses or networks, e.g. "
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


def describe_listener(kind: str, bind: str, port: int, senders: SenderFilter) -> str:
    """The line printed when a listener starts: where it listens and who can reach it."""
    if is_loopback(bind):
        return f"{kind}: listening on {bind}:{port} (this machine only; --teleop.bind=<LAN address> to accept a device)"
    return (f"{kind}: listening on {bind}:{port}, reachable from the network ({senders.describe()}; "
            "--teleop.allow=[...] to restrict)")
