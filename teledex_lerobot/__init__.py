"""Open TeleDex core: kinematics, operator input, retargeting, control, devices, sync and storage.

Below cli/ and storage/ (which write LeRobot datasets), the core knows nothing of LeRobot; the LeRobot Robot and
Teleoperator classes live in the lerobot_robot_teledex and lerobot_teleoperator_teledex packages. The layers and
this rule are import-linter contracts in pyproject.toml, checked by `make test`.
"""
