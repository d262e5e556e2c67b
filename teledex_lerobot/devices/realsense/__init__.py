"""Intel RealSense cameras: LeRobot's RealSenseCamera is the driver; here are the intrinsics it carries for
camera_info.json (camera_info.py) and teledex-doctor's check that the configured serials are connected (probe.py)."""
