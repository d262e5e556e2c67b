"""The tests' WebSocket client: its handshake may wait long on a loaded machine (two test workers, a recorder and a
browser beside them), where websockets' default gives up at 10 s."""

from websockets.sync.client import connect as _connect

HANDSHAKE_TIMEOUT_S = 60.0


def connect(url: str, **options):
    return _connect(url, open_timeout=HANDSHAKE_TIMEOUT_S, **options)
