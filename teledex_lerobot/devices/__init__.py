"""Joint devices: the interface (joint_device.py), the hardware-free `fake` and `sim` backends (simulated.py), one
folder per vendor (agilex/, linkerhand/, linker_a7/, realsense/: driver, CAN protocol, wire-protocol simulator,
doctor probe, settings), the one registry of models and backends (registry.py), what every real driver shares
(real_device.py, real_config.py, device_fault.py, probe.py), the CAN buses (can/: the teledex loopback bus, the
simulators' bus lifecycle, channel identification) and the rig renderer of the simulated camera (render.py)."""
