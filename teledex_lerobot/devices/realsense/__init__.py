"""Intel RealSense cameras: LeRobot's RealSenseCamera is the driver; here are the intrinsics and depth units it carries
for camera_info.json and the conversion of its depth to millimetres (camera_info.py), and teledex-doctor's check
that the configured serials are connected (probe.py)."""
