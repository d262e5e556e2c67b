"""Open TeleDex core: kinematics, operator input, retargeting, control, devices, sync, storage and the recording.

Below cli/ (the commands) and recording/ (which drives LeRobot robots and teleoperators and writes LeRobot datasets),
the core, storage included, knows nothing of LeRobot; the LeRobot Robot and Teleoperator classes live in the
lerobot_robot_teledex and lerobot_teleoperator_teledex packages. The layers and this rule are import-linter
contracts in pyproject.toml, checked by `make test`.
"""
