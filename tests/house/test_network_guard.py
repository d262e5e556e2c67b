"""The suite's network guard (tests/network_guard) catches every way a test could reach beyond this machine, in the
test process and in the processes it starts, and lets loopback traffic through."""

import socket
import struct
import subprocess
import sys

import network_guard
import pytest

TEST_NET = "192.0.2.1"  # RFC 5737 documentation address: never routed anywhere
TEST_NET_V6 = "2001:db8::1"


def _forbidden_attempts():
    def udp_send():
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            sock.sendto(b"x", (TEST_NET, 9))

    def udp_send_v6():
        with socket.socket(socket.AF_INET6, socket.SOCK_DGRAM) as sock:
            sock.sendto(b"x", 0, (TEST_NET_V6, 9))

    def tcp_connect():
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.connect((TEST_NET, 9))

    def listen_on_every_interface():
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind(("0.0.0.0", 0))

    def listen_on_empty_host():
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            sock.bind(("", 0))

    def join_multicast_on_the_network():
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            sock.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP,
                            socket.inet_aton("239.74.163.1") + socket.inet_aton("0.0.0.0"))

    def resolve_a_name():
        socket.getaddrinfo("example.com", 443)

    def create_connection():
        socket.create_connection((TEST_NET, 80), timeout=0.1)

    return [udp_send, udp_send_v6, tcp_connect, listen_on_every_interface, listen_on_empty_host,
            join_multicast_on_the_network, resolve_a_name, create_connection]


@pytest.mark.parametrize("attempt", _forbidden_attempts(), ids=lambda f: f.__name__)
def test_each_forbidden_thing_is_refused_and_fails_the_test(attempt, network_guard_check):
    with pytest.raises(OSError) as refused:
        attempt()
    assert isinstance(refused.value, network_guard.NetworkGuardViolation) or \
        isinstance(refused.value.__context__, network_guard.NetworkGuardViolation)
    with pytest.raises(pytest.fail.Exception, match="reached beyond this machine"):
        network_guard_check.check()  # what the autouse fixture does at teardown
    assert network_guard_check.take() == []  # check() consumed them: this test itself passes


def test_a_subprocess_is_guarded_too(network_guard_check):
    code = f"import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ({TEST_NET!r}, 9))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "network guard" in done.stderr
    caught = network_guard_check.take()
    assert len(caught) == 1 and f"send to {TEST_NET!r}" in caught[0] and "[pid " in caught[0]


def test_loopback_traffic_passes(network_guard_check):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as receiver, \
            socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:
        receiver.bind(("127.0.0.1", 0))
        receiver.settimeout(2.0)
        sender.sendto(b"ping", receiver.getsockname())
        assert receiver.recv(16) == b"ping"
    with socket.socket(socket.AF_INET6, socket.SOCK_DGRAM) as sock:
        sock.bind(("::1", 0))
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind(("localhost", 0))
        server.listen()
        socket.create_connection(server.getsockname(), timeout=2.0).close()
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:  # a multicast group joined on loopback only
        sock.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP,
                        socket.inet_aton("239.74.163.1") + socket.inet_aton("127.0.0.1"))
        mreqn = socket.inet_aton("239.74.163.3") + socket.inet_aton("0.0.0.0") + \
            struct.pack("i", socket.if_nametoindex("lo"))
        sock.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, mreqn)
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind("")  # Linux autobind: a Unix address, not an IP one
    assert network_guard_check.take() == []
