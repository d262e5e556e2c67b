"""Keeps the test suite on this machine: any socket that would send to, connect to, or listen on an address outside
loopback, or join a multicast group on a real interface, is refused and recorded.

Patched on socket.socket (every Python socket, asyncio's included): connect, connect_ex, bind, sendto, sendmsg and
setsockopt for IP_ADD_MEMBERSHIP / IP_ADD_SOURCE_MEMBERSHIP / IPV6_JOIN_GROUP / MCAST_JOIN_GROUP; and the name
lookups (getaddrinfo, gethostbyname...), since resolving a name asks a DNS server. Allowed: 127.0.0.0/8, ::1,
"localhost", Unix and other non-IP sockets, multicast joins on the loopback interface. A refused call raises
NetworkGuardViolation (an OSError, as an unreachable network would) before anything is sent.

Subprocesses are covered by the sitecustomize module next to this file: the test session puts this directory on
PYTHONPATH, and every Python process it starts installs the guard at startup and appends its violations to the
file named by TELEDEX_NETWORK_GUARD_LOG. Code in C extensions that opens its own sockets is not seen.
"""

import errno
import ipaddress
import os
import socket
import struct
import threading
import traceback
from collections.abc import Callable

LOG_ENV = "TELEDEX_NETWORK_GUARD_LOG"
LOCAL_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"})
_IP_FAMILIES = (socket.AF_INET, socket.AF_INET6)
# setsockopt options that join a multicast group, by level
_JOINS = {socket.IPPROTO_IP: {socket.IP_ADD_MEMBERSHIP, getattr(socket, "IP_ADD_SOURCE_MEMBERSHIP", 39), 42},
          socket.IPPROTO_IPV6: {socket.IPV6_JOIN_GROUP, 42}}  # 42 = MCAST_JOIN_GROUP
_ORIGINAL = {}


class NetworkGuardViolation(OSError):
    def __init__(self, what: str):
        super().__init__(errno.EACCES, f"network guard: {what} (tests must stay on 127.0.0.0/8, ::1 or Unix "
                                       "sockets)")
        self.what = what


def _is_loopback_host(host) -> bool:
    if host is None:
        return True  # getaddrinfo(None, port): the local host
    if isinstance(host, bytes):
        host = host.decode(errors="replace")
    host = str(host)
    if host.lower() in LOCAL_NAMES:
        return True
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return False  # a name to resolve (asks DNS), or "" (every interface)
    mapped = getattr(address, "ipv4_mapped", None)
    return (mapped or address).is_loopback


def _check_address(sock: socket.socket, address, what: str) -> None:
    if sock.family in _IP_FAMILIES and isinstance(address, tuple) and not _is_loopback_host(address[0]):
        _violation(f"{what} {address[0]!r}")


def _loopback_ifindex() -> int:
    try:
        return socket.if_nametoindex("lo")
    except OSError:
        return 1


def _check_join(level: int, option: int, value) -> None:
    if option not in _JOINS.get(level, ()) or not isinstance(value, (bytes, bytearray)):
        return
    value = bytes(value)
    if level == socket.IPPROTO_IP and option != 42:
        # ip_mreq: group, interface address; ip_mreqn: group, address, ifindex; source: group, interface, source
        group = socket.inet_ntoa(value[:4])
        interface = socket.inet_ntoa(value[4:8])
        ifindex = struct.unpack("i", value[8:12])[0] if len(value) == 12 and option == socket.IP_ADD_MEMBERSHIP else 0
        on_loopback = ipaddress.ip_address(interface).is_loopback or ifindex == _loopback_ifindex()
    elif level == socket.IPPROTO_IPV6 and option != 42:
        group = socket.inet_ntop(socket.AF_INET6, value[:16])
        on_loopback = struct.unpack("I", value[16:20])[0] == _loopback_ifindex()
    else:  # MCAST_JOIN_GROUP: struct group_req starts with the interface index
        group = "(group_req)"
        on_loopback = struct.unpack("I", value[:4])[0] == _loopback_ifindex()
    if not on_loopback:
        _violation(f"join multicast group {group} on a network interface")


_record: Callable[[str], None] | None = None
_lock = threading.Lock()


def _violation(what: str) -> None:
    where = "".join(traceback.format_stack(limit=8)[:-2])
    if _record is not None:
        _record(f"{what}\n{where}")
    raise NetworkGuardViolation(what)


def _guarded_methods():
    original = _ORIGINAL

    def connect(self, address):
        _check_address(self, address, "connect to")
        return original["connect"](self, address)

    def connect_ex(self, address):
        _check_address(self, address, "connect to")
        return original["connect_ex"](self, address)

    def bind(self, address):
        _check_address(self, address, "listen on")
        return original["bind"](self, address)

    def sendto(self, data, *args):
        _check_address(self, args[-1], "send to")
        return original["sendto"](self, data, *args)

    def sendmsg(self, buffers, ancdata=(), flags=0, address=None):
        if address is not None:
            _check_address(self, address, "send to")
            return original["sendmsg"](self, buffers, ancdata, flags, address)
        return original["sendmsg"](self, buffers, ancdata, flags)

    def setsockopt(self, level, option, value, *rest):
        _check_join(level, option, value)
        return original["setsockopt"](self, level, option, value, *rest)

    return {"connect": connect, "connect_ex": connect_ex, "bind": bind, "sendto": sendto, "sendmsg": sendmsg,
            "setsockopt": setsockopt}


def _guarded_lookups():
    original = _ORIGINAL

    def getaddrinfo(host, *args, **kwargs):
        if not _is_loopback_host(host):
            _violation(f"resolve {host!r}")
        return original["getaddrinfo"](host, *args, **kwargs)

    def gethostbyname(host):
        if not _is_loopback_host(host):
            _violation(f"resolve {host!r}")
        return original["gethostbyname"](host)

    def gethostbyname_ex(host):
        if not _is_loopback_host(host):
            _violation(f"resolve {host!r}")
        return original["gethostbyname_ex"](host)

    def gethostbyaddr(address):
        if not _is_loopback_host(address):
            _violation(f"reverse-resolve {address!r}")
        return original["gethostbyaddr"](address)

    return {"getaddrinfo": getaddrinfo, "gethostbyname": gethostbyname, "gethostbyname_ex": gethostbyname_ex,
            "gethostbyaddr": gethostbyaddr}


def install(record: Callable[[str], None]) -> None:
    """Patch the socket module for this process; record(text) receives every refused call. Idempotent."""
    global _record
    with _lock:
        _record = record
        if _ORIGINAL:
            return
        methods, lookups = _guarded_methods(), _guarded_lookups()
        for name, guarded in methods.items():
            _ORIGINAL[name] = getattr(socket.socket, name)
            setattr(socket.socket, name, guarded)
        for name, guarded in lookups.items():
            _ORIGINAL[name] = getattr(socket, name)
            setattr(socket, name, guarded)


def append_to_log(path: str) -> Callable[[str], None]:
    def record(text: str) -> None:
        with open(path, "a", encoding="utf-8") as log:
            log.write(f"[pid {os.getpid()}] {text}\n\x1e\n")  # record separator between entries
    return record
