"""Open TeleDex core: kinematics, operator input, control, simulated devices. Knows nothing of LeRobot's classes."""
