"""teledex-doctor's check of the RealSense cameras: the configured serials are connected."""

from ..probe import Report


def probe_cameras(serials: list[str]) -> Report:
    report = Report(f"RealSense cameras {serials}")
    try:
        import pyrealsense2 as rs
    except ImportError as error:
        report.problem(f"pyrealsense2 does not import: {error}", "install libusb-1.0 (apt install libusb-1.0-0)")
        return report
    connected = {device.get_info(rs.camera_info.serial_number): device.get_info(rs.camera_info.name)
                 for device in rs.context().query_devices()}
    report.facts.append(f"connected: {connected or 'none'}")
    for serial in serials:
        if serial not in connected:
            report.problem(f"camera {serial} not found", "plug it into a USB 3 port; give serials as listed above "
                           "(names are not reliable in LeRobot 0.6: use serial_number_or_name=<serial>)")
    return report
