"""Joint devices: the interface (joint_device.py), the hardware-free `fake` and `sim` backends (simulated.py), one
folder per vendor (agilex/, linkerhand/, linker_a7/, realsense/: driver, CAN protocol, wire-protocol simulator,
doctor probe, settings), the one registry of models and backends (registry.py), what every real driver shares
(real_device.py, real_config.py, device_fault.py, probe.py) and the rig renderer of the simulated camera (render.py).
The CAN buses they run on are a package of their own beside this one (teledex_lerobot/can/). The registry imports the
vendor folders, never the reverse: it hands every vendor's bus signatures to the drivers it builds, and teledex-doctor
hands them to the probes it runs."""
