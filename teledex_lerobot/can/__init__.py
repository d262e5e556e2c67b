"""CAN buses shared by every vendor, beside devices/ as LeRobot's motors/ sits beside its robots/: where a device is
plugged in (port.py), the teledex loopback bus (bus.py: a python-can interface whose frames never leave this machine)
and its broker (broker.py, wire.py), the simulators' bus lifecycle (simulator.py), who is on a channel (identify.py)
and whether a device is silent or our reader is behind (liveness.py). Imports nothing from devices/."""
