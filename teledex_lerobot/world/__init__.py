"""The MuJoCo world: MJCF from our URDFs, the report's tasks, cameras, world-backed joint devices, scripted expert."""
