"""Episode storage with no LeRobot import (an import-linter contract): the frame object every sink is fed, the sink
interface and the paired commit, the native TeleDex layout (written and read), the fields and columns both formats
share, repair, merge helpers, the sync readers and the VITRA export. The recording loop, the LeRobot sink (LeRobot
glue) and the conversions between the formats live in recording/."""
