"""Episode storage with no LeRobot import: the recording loop, the frame object every sink is fed, the sink
interface and the paired commit, the native TeleDex layout (written and read), repair, merge helpers and the VITRA
export. The LeRobot sink is LeRobot glue and lives in cli/lerobot_dataset.py."""
