"""Installs the network guard in every Python process the test suite starts (the suite puts this directory on
PYTHONPATH and names the violation log in the environment)."""

import os

if os.environ.get("TELEDEX_NETWORK_GUARD_LOG"):
    import network_guard

    network_guard.install(network_guard.append_to_log(os.environ["TELEDEX_NETWORK_GUARD_LOG"]))
