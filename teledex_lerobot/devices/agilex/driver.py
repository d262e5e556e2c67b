"""Agilex Piper through the unmodified vendor SDK (piper_sdk C_PiperInterface_V2), over any python-can interface.

Connection: the SDK's documented seam for non-socketcan interfaces, CreateCanBus with the configured interface,
then ConnectPort (read threads; queries limits and firmware). Startup: CAN control + joint
mode, then EnableArm until every motor reports driver-enabled (foc_status bit 6), then the gripper if it is driven;
a re-arm finding the motors disabled (the arm was power-cycled) runs the same enable sequence again, judged from
motor status frames that arrived after the re-arm began (the SDK keeps the last ones it saw, however old).
Each command resends MotionCtrl_2 (the arm acts on joint targets only in CAN + joint mode; the vendor demos do the
same) and JointCtrl/GripperCtrl in integer device units (0.001 deg, 0.001 mm; the SDK rejects floats).
Feedback: joints and gripper from the SDK's caches, stamped with the CAN frame's receive time converted to our
monotonic clock; joint velocities from the motor high-speed frames (0.001 rad/s).
Supervision: silence from the receive times of the joint feedback frames the SDK's read thread takes (the bus it
reads is watched: can.liveness); every status frame (0x2A1) is seen as the SDK's parser takes it (its
callback_function, the SDK's own seam), so a communication error (err_code bits, arm status 5) flagged in a single
frame is counted and logged, while one flagged in COMM_ERROR_PERSISTS_FRAMES consecutive frames is a fault; the motor
drivers' status bits (over-temperature, over-current, collision, driver error, stall, low voltage), the gripper's, any
other arm status and the enable bits are faults.
The SDK's read thread skips reading, and spins, while its bus is not ACTIVE (error-passive, bus-off): that is a
bus_error, the thread is stopped, and re-arming rebuilds the connection.
"""

import logging
import threading
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING

import can
import numpy as np

from ...can.identify import BusSignature
from ...can.liveness import BusLiveness, WallToMonotonic
from ...can.port import CanPortConfig
from ...clock import now_ns
from ...errors import ModelError
from ..device_fault import DeviceUnavailable
from ..joint_device import JointState
from ..real_config import SharedRealConfig
from ..real_device import RealJointDevice
from . import protocol as pp
from .config import PiperConfig

if TYPE_CHECKING:
    from piper_sdk import C_PiperInterface_V2

logger = logging.getLogger(__name__)

PIPER_JOINTS = ("joint1", "joint2", "joint3", "joint4", "joint5", "joint6", "gripper")
# A communication error flagged in this many consecutive status frames (200 Hz) is a fault; fewer are counted.
COMM_ERROR_PERSISTS_FRAMES = 2
ENABLE_RETRY_S = 0.01


def _enum_value(value) -> int:
    return int(getattr(value, "value", value))


class PiperJointDevice(RealJointDevice):
    """Device vector: joint1..joint6 (rad) + gripper (opening, m), the order of configs/urdf/piper.urdf."""

    bus_kind = pp.BUS_SIGNATURE.kind

    def __init__(self, part, port: CanPortConfig, config: SharedRealConfig, settings: PiperConfig,
                 signatures: Iterable[BusSignature] = ()):
        super().__init__("piper", part, port, config, signatures)
        if len(self.device_target) != len(PIPER_JOINTS):
            raise ModelError(f"{self.name}: the piper model has {len(self.device_target)} joints where the Piper has "
                             f"{list(PIPER_JOINTS)}: restore configs/urdf/piper.urdf")
        self.settings = settings
        self._drives_arm = bool(np.any(self.driven < 6))
        self._drives_gripper = bool(np.any(self.driven == 6))
        self._sdk: C_PiperInterface_V2 | None = None
        self._clock = WallToMonotonic()  # measured again at every connect (_open)
        self.firmware: str | None = None
        self._comm_lock = threading.Lock()
        self.comm_error_frames = 0  # status frames that flagged a joint communication error
        self.comm_error_joints: dict[int, int] = {}  # joint 1-6 -> frames that flagged it
        self._comm_error_run = 0  # consecutive status frames flagging one
        self._comm_error_run_joints: list[int] = []
        # low-speed frames (enable and driver bits) the SDK has parsed, per motor: a re-arm judges the enable bits
        # only from frames that arrived after it began (the SDK's cache may still hold a power-cycled arm's old ones)
        self._low_speed_frames = dict.fromkeys(pp.MOTOR_LOW_SPEED, 0)

    # --- RealJointDevice hooks ---
    def _open(self) -> None:
        from piper_sdk import C_PiperInterface_V2  # imported here: only the real backend needs the SDK

        self.port.check_opens(self.name)
        self._clock = WallToMonotonic()
        channel = self.port.channel
        # judge_flag=False: the SDK's socketcan checks (operstate, bitrate from `ip`) fail on vcan and other
        # interfaces; teledex-doctor runs them instead.
        sdk = None
        try:
            sdk = C_PiperInterface_V2(channel, judge_flag=False, can_auto_init=False)
            sdk.CreateCanBus(channel, bustype=self.port.interface, expected_bitrate=self.port.bitrate,
                             judge_flag=False)
            can_bus = sdk.GetCanBus()
            if can_bus is None or can_bus.recv_bus is None:  # the SDK swallows the error and would spin
                raise DeviceUnavailable(f"{self.name}: piper_sdk could not open CAN {self.port.interface}:"
                                        f"{channel}. Run teledex-doctor.")
            self.liveness = BusLiveness(
                lambda message: "" if message.arbitration_id in pp.JOINT_FEEDBACK else None, polled=False,
                clock=self._clock)
            self.liveness.attach(can_bus.recv_bus)
            parse = can_bus.callback_function

            def parse_then_observe(message: can.Message) -> None:
                parse(message)
                self._observe(message)

            can_bus.callback_function = parse_then_observe
            sdk.ConnectPort()
        except Exception:
            if sdk is not None:
                self._release(sdk)
            C_PiperInterface_V2._instances.pop(channel, None)  # a failed constructor stays cached otherwise
            raise
        self._sdk = sdk

    def _startup(self) -> None:
        self.firmware = self._wait_firmware()
        self._enable()

    def _rearm(self) -> None:
        if self._drives_arm and not all(self._fresh_enable_status()):
            logger.info("%s: the motors are disabled (power cycled?): enabling them again", self.name)
            self._enable()

    def _fresh_enable_status(self) -> list[bool]:
        """The motors' enable bits from low-speed frames every motor sent after this call began."""
        with self._comm_lock:
            before = dict(self._low_speed_frames)
        deadline = time.monotonic() + self.config.connect_timeout_s
        while True:
            with self._comm_lock:
                if all(self._low_speed_frames[can_id] > count for can_id, count in before.items()):
                    return self.sdk.GetArmEnableStatus()
            if time.monotonic() > deadline:
                raise DeviceUnavailable(f"{self.name}: no motor status (0x261-0x266) from every motor within "
                                        f"{self.config.connect_timeout_s} s: check the arm's power; run "
                                        "teledex-doctor.")
            time.sleep(ENABLE_RETRY_S)

    def _enable(self) -> None:
        """CAN + joint mode, every motor enabled, the target where the arm is now (the next command must not jump)."""
        sdk = self.sdk
        sdk.MotionCtrl_2(pp.CTRL_MODE_CAN, pp.MOVE_MODE_J, self.settings.speed_percent, 0x00)
        deadline = time.monotonic() + self.config.connect_timeout_s
        while not sdk.EnablePiper():  # sends EnableArm(7); True once all six motors report driver-enabled
            if time.monotonic() > deadline:
                raise DeviceUnavailable(f"{self.name}: the motors did not report enabled within "
                                      f"{self.config.connect_timeout_s} s (foc_status bit 6). Check the emergency "
                                      "stop button and the 24 V supply; run teledex-doctor.")
            time.sleep(ENABLE_RETRY_S)
        # start from where the arm is, not from home: the first command must not jump
        measured = self._measured_full()
        self.device_target[:6] = measured[:6]
        if self._drives_gripper:
            self._send_gripper(measured[6])

    def _close(self) -> None:
        sdk, self._sdk = self._sdk, None
        if sdk is None:
            return
        if self.settings.disable_on_disconnect:
            sdk.DisableArm(pp.ALL_MOTORS)
        self._release(sdk)

    def _send(self, device_target: np.ndarray) -> None:
        sdk = self.sdk
        if self._drives_arm:
            sdk.MotionCtrl_2(pp.CTRL_MODE_CAN, pp.MOVE_MODE_J, self.settings.speed_percent, 0x00)
            sdk.JointCtrl(*(int(v) for v in pp.rad_to_millideg(device_target[:6])))
        if self._drives_gripper:
            self._send_gripper(device_target[6])

    def _latest_state(self) -> JointState | None:
        sdk = self._sdk
        if sdk is None:
            return None
        joints = sdk.GetArmJointMsgs()
        if joints.time_stamp == 0:
            return None  # nothing received yet
        stamp_s = joints.time_stamp
        positions = self._measured_full(joints)
        velocities = np.zeros(7)
        high_speed = sdk.GetArmHighSpdInfoMsgs()
        for joint in range(6):
            velocities[joint] = getattr(high_speed, f"motor_{joint + 1}").motor_speed / 1000  # 0.001 rad/s
        if self._drives_gripper:
            gripper = sdk.GetArmGripperMsgs()
            stamp_s = min(stamp_s, gripper.time_stamp) if gripper.time_stamp else stamp_s
        return JointState(positions, velocities, self._clock.to_monotonic_ns(stamp_s))

    def _device_error(self) -> str | None:
        sdk = self.sdk
        status = sdk.GetArmStatus().arm_status
        problems = []
        arm_status = _enum_value(status.arm_status)
        # a communication error is judged by how many consecutive frames flag it (below), not by the last frame
        if arm_status not in (pp.ARM_STATUS_NORMAL, pp.ARM_STATUS_COMM_ERROR):
            problems.append(f"arm status {arm_status} ({pp.ARM_STATUS_NAMES.get(arm_status, 'unknown')})")
        limit = pp.angle_limit_joints(_enum_value(status.err_code))
        with self._comm_lock:
            if self._comm_error_run >= COMM_ERROR_PERSISTS_FRAMES:
                problems.append(f"communication error on joints {self._comm_error_run_joints or '(none named)'}")
        if limit:
            problems.append(f"angle limit reached on joints {limit}")
        if self._drives_arm:
            low_speed = sdk.GetArmLowSpdInfoMsgs()
            for joint in range(1, 7):
                bits = pp.bit_names(getattr(low_speed, f"motor_{joint}").foc_status_code, pp.FOC_FAULT_BITS)
                if bits:
                    problems.append(f"joint {joint} motor driver: {', '.join(bits)}")
            if not all(sdk.GetArmEnableStatus()):
                problems.append("motors no longer enabled")
        if self._drives_gripper:
            bits = pp.bit_names(sdk.GetArmGripperMsgs().gripper_state.status_code, pp.GRIPPER_FAULT_BITS)
            if bits:
                problems.append(f"gripper driver: {', '.join(bits)}")
        if not problems:
            return None
        return "; ".join(problems) + (". Clear the cause (teledex-doctor shows the state), then re-arm: that enables "
                                      "the motors again.")

    def _bus_problem(self) -> str | None:
        can_bus = self._sdk.GetCanBus() if self._sdk is not None else None
        bus = can_bus.recv_bus if can_bus is not None else None
        if bus is None:
            return "piper_sdk closed its CAN bus. Re-arm to reconnect."
        state = bus.state
        if state != can.BusState.ACTIVE:
            self._stop_reading()  # the SDK's read thread skips recv() while not ACTIVE and would spin a core
            return (f"the CAN interface reports the bus {state.name} (error-passive or bus-off): check the cable, "
                    "termination and bitrate, then re-arm (the connection is rebuilt).")
        read_thread = getattr(self._sdk, "_C_PiperInterface_V2__can_deal_th", None)
        if read_thread is not None and not read_thread.is_alive():
            return "piper_sdk's read thread stopped (its bus failed). Re-arm to reconnect."
        return None

    def _needs_reopen(self) -> bool:
        return self._sdk is None or self._bus_problem() is not None

    def health(self) -> dict:
        with self._comm_lock:
            return {**super().health(), "comm_error_frames": self.comm_error_frames,
                    "comm_error_joints": dict(self.comm_error_joints)}

    def _observe(self, message: can.Message) -> None:
        """Every frame once the SDK has parsed it: counts motor status frames, and status frames flagging a
        communication error."""
        if message.arbitration_id in self._low_speed_frames:
            with self._comm_lock:
                self._low_speed_frames[message.arbitration_id] += 1
            return
        if message.arbitration_id != pp.STATUS or len(message.data) < 8:
            return
        joints = pp.comm_error_joints((message.data[6] << 8) | message.data[7])
        flagged = bool(joints) or message.data[1] == pp.ARM_STATUS_COMM_ERROR
        with self._comm_lock:
            if flagged:
                self.comm_error_frames += 1
                for joint in joints:
                    self.comm_error_joints[joint] = self.comm_error_joints.get(joint, 0) + 1
            run_starts = flagged and not self._comm_error_run
            self._comm_error_run = self._comm_error_run + 1 if flagged else 0
            self._comm_error_run_joints = joints
        if run_starts:
            logger.warning("%s: the arm flags a communication error on joints %s", self.name, joints or "(none named)")

    # --- helpers ---
    @property
    def sdk(self) -> "C_PiperInterface_V2":
        """The vendor SDK's interface to the arm, while connected."""
        if self._sdk is None:
            raise DeviceUnavailable(f"{self.name} is not connected: call connect() first")
        return self._sdk

    def _measured_full(self, joints=None) -> np.ndarray:
        sdk = self.sdk
        joints = joints or sdk.GetArmJointMsgs()
        state = joints.joint_state
        millideg = [state.joint_1, state.joint_2, state.joint_3, state.joint_4, state.joint_5, state.joint_6]
        gripper_um = sdk.GetArmGripperMsgs().gripper_state.grippers_angle
        return np.concatenate([pp.millideg_to_rad(millideg), [pp.um_to_m(gripper_um)]])

    def _send_gripper(self, width_m: float) -> None:
        effort = int(round(self.settings.gripper_effort_nm * 1000))  # 0.001 N*m
        self.sdk.GripperCtrl(int(pp.m_to_um(width_m)), effort, 0x01, 0x00)

    def _wait_firmware(self) -> str | None:
        """The reply to the query ConnectPort sent; None (logged) if the arm never answers, which is not fatal."""
        deadline = now_ns() + int(0.5e9)
        while now_ns() < deadline:
            version = self.sdk.GetPiperFirmwareVersion()
            if isinstance(version, str):
                return version
            time.sleep(0.01)
        logger.warning("%s: no firmware version reply", self.name)
        return None

    def _stop_reading(self) -> None:
        stop = getattr(self._sdk, "_C_PiperInterface_V2__read_can_stop_event", None)
        if stop is not None:
            stop.set()

    @staticmethod
    def _release(sdk) -> None:
        """DisconnectPort, plus the thread handling it lacks (its hasattr check never matches a name-mangled
        attribute, so it never joins the read thread, and it never stops the monitor and FPS threads). The read
        thread is stopped first, while the bus is still open: it blocks in recv(1 s), and frames still arriving wake
        it at once. Finally the per-channel singleton is dropped so a reconnect builds a fresh interface."""
        read_stop = getattr(sdk, "_C_PiperInterface_V2__read_can_stop_event", None)
        read_thread = getattr(sdk, "_C_PiperInterface_V2__can_deal_th", None)
        if read_stop is not None and read_thread is not None:
            read_stop.set()
            read_thread.join(timeout=0.1)
        try:
            sdk.DisconnectPort()
        except Exception as error:
            logger.warning("piper_sdk DisconnectPort failed: %s", error)
        monitor_stop = getattr(sdk, "_C_PiperInterface_V2__can_monitor_stop_event", None)
        if monitor_stop is not None:
            monitor_stop.set()
        fps_counter = getattr(sdk, "_C_PiperInterface_V2__fps_counter", None)
        if fps_counter is not None:
            fps_counter.stop()
        type(sdk)._instances.pop(sdk.GetCanName(), None)
