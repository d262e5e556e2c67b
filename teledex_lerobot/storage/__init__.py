"""Episode storage: the native TeleDex layout (telemetry.npz, manifest.json, metadata.json, camera_info.json,
videos), converters to and from LeRobotDataset, and the VITRA export."""
