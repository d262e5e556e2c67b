"""The tests' WebSocket client: its handshake may wait long on a loaded machine (two test workers, a recorder and a
browser beside them), where websockets' default gives up at 10 s. A handshake that still times out prints every
thread's stack first (in the test's captured stderr): two-worker runs saw one hang past 60 s, cause not yet found."""

import faulthandler
import sys

from websockets.sync.client import connect as _connect

HANDSHAKE_TIMEOUT_S = 60.0


def connect(url: str, **options):
    try:
        return _connect(url, open_timeout=HANDSHAKE_TIMEOUT_S, **options)
    except TimeoutError:
        faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
        raise
