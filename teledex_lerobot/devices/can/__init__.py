"""CAN buses shared by every vendor: the teledex loopback bus (a python-can interface whose frames never leave this
machine) and its broker."""
