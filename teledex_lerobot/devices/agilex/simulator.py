"""A simulated Agilex Piper on a python-can bus: what the unmodified piper_sdk talks to in tests and teledex-sim.

Reproduces what the SDK relies on: unsolicited feedback at the real rates (status, end pose, joints,
gripper and motor high-speed frames at 200 Hz, motor low-speed frames at 40 Hz: about 3040 frames/s), the enable
state machine (foc_status bit 6 of every motor, gripper status bit 6), mode gating (joint targets act only after
0x151 selects CAN control + joint mode), the speed percentage, joint limits (targets clamped, status "target over
limit"), end pose from the FK of configs/urdf/piper.urdf link6 (equal to the SDK's FK), firmware and limit queries,
emergency stop and resume; the limit query is answered with the vendor's per-joint limits (piper_sdk's table).
The joints move with the `sim` backend's dynamics (FirstOrderJointDevice).

Fault injection for tests: silence() (feedback stops), set_joint_error() (error bits in 0x2A1, optionally in one
status frame only), set_motor_status() (a motor driver's status bits in 0x261-0x266), unplug().
"""

import struct
import threading
from dataclasses import dataclass, field

import can
import numpy as np
from piper_sdk.piper_param.piper_param_manager import C_PiperParamManager
from scipy.spatial.transform import Rotation

from ...can.simulator import BusSimulator, SimBus
from ...clock import now_ns
from ...kinematics import KinematicModel
from ...paths import URDF_DIR
from ..simulated import FirstOrderJointDevice, SimDynamicsConfig
from . import protocol as pp

ARM_JOINTS = 6
FEEDBACK_HZ = 200.0
# What the arm answers to the limit query (0x472 -> 0x473, max/min angle per motor): the vendor's per-joint limits,
# from piper_sdk's own table as installed (C_PiperParamManager), rad.
VENDOR_JOINT_LIMITS_RAD = tuple(tuple(C_PiperParamManager().GetPiperParamOrigin()["joint_limit"][f"j{joint}"])
                                for joint in range(1, ARM_JOINTS + 1))
LOW_SPEED_EVERY_N_TICKS = 5  # 200 Hz / 5 = 40 Hz


@dataclass
class PiperSimConfig:
    interface: str = "virtual"
    channel: str = "piper_sim"
    firmware: str = "S-V1.6-3"
    initial_positions: tuple[float, ...] = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)  # joint1..6 rad, gripper m
    # noise-free by default so tests can compare exact values; the SDK/bus adds the real latency
    dynamics: SimDynamicsConfig = field(default_factory=lambda: SimDynamicsConfig(
        time_constant_s=0.02, noise_std=0.0, latency_ms=0.0))


class PiperSimulator(BusSimulator[FirstOrderJointDevice]):
    loop_name = "piper-sim-feedback"

    def __init__(self, config: PiperSimConfig | None = None):
        super().__init__()
        self.config = config or PiperSimConfig()
        self.model = KinematicModel.from_urdf(URDF_DIR / "piper.urdf")  # joint1..6, gripper
        self._lower, self._upper = self.model.lower, self.model.upper
        initial = np.clip(np.asarray(self.config.initial_positions, dtype=float), self._lower, self._upper)
        self._dynamics = FirstOrderJointDevice(initial, self.model.velocity_limits, self.config.dynamics,
                                              self.config.dynamics.feedback_hz or 1000.0)
        self._bus = SimBus(self.config.interface, self.config.channel, self._on_frame, "piper-sim",
                           "the Piper's CAN IDs")
        self._lock = threading.Lock()
        # device state, guarded by _lock
        self.motor_enabled = [False] * ARM_JOINTS
        self.gripper_enabled = False
        self.ctrl_mode = pp.CTRL_MODE_STANDBY
        self.move_mode = pp.MOVE_MODE_P
        self.speed_percent = 0
        self.estop = False
        self.target_over_limit = False
        self._target = initial.copy()  # where the arm is going (joint1..6, gripper)
        self._setpoint = initial.copy()  # the firmware's interpolated setpoint, moving at speed_percent
        self._pending_joint_pairs: dict[int, tuple[int, int]] = {}
        self._gripper_effort = 0
        # fault injection
        self._silent = False
        self._angle_limit_joints: set[int] = set()
        self._comm_error_joints: set[int] = set()
        self._single_frame_errors: set[int] = set()  # comm-error joints flagged in the next status frame only
        self._motor_status_bits = [0] * ARM_JOINTS
        self.commands_received = 0

    # --- fault injection ---
    def silence(self, silent: bool = True) -> None:
        """Stop (or resume) every feedback frame while still accepting commands: a hung controller."""
        self._silent = silent

    def set_joint_error(self, joint: int, kind: str = "comm", single_frame: bool = False) -> None:
        """Raise an error bit for joint 1..6 in 0x2A1: kind "comm" (communication) or "angle_limit";
        single_frame: a communication error flagged in the next status frame only (a glitch)."""
        with self._lock:
            if single_frame:
                self._single_frame_errors.add(joint)
            else:
                (self._comm_error_joints if kind == "comm" else self._angle_limit_joints).add(joint)

    def clear_joint_errors(self) -> None:
        with self._lock:
            self._comm_error_joints.clear()
            self._angle_limit_joints.clear()

    def set_motor_status(self, joint: int, bits: int) -> None:
        """A motor driver's status bits (joint 1..6; protocol.FOC_FAULT_BITS), beside its enable bit."""
        with self._lock:
            self._motor_status_bits[joint - 1] = bits

    # --- what a test can observe directly ---
    def target(self) -> np.ndarray:
        """The target the arm accepted last (joint1..6 rad, gripper m), after decoding and clamping."""
        with self._lock:
            return self._target.copy()

    # --- command handling ---
    def _on_frame(self, message: can.Message) -> None:
        can_id, data = message.arbitration_id, bytes(message.data)
        if can_id not in pp.COMMAND_IDS:
            return
        with self._lock:
            self.commands_received += 1
            if can_id == pp.ENABLE:
                self._on_enable(data)
            elif can_id == pp.MOTION_CTRL_2:
                self.ctrl_mode, self.move_mode, self.speed_percent = data[0], data[1], min(data[2], 100)
            elif can_id == pp.MOTION_CTRL_1:
                self._on_motion_ctrl_1(data)
            elif can_id in pp.JOINT_CTRL:
                self._on_joint_ctrl(pp.JOINT_CTRL.index(can_id), data)
            elif can_id == pp.GRIPPER_CTRL:
                self._on_gripper_ctrl(data)
            elif can_id == pp.LIMITS_QUERY:
                self._on_limits_query(data)
            elif can_id == pp.FIRMWARE and data[:1] == b"\x01":
                self._send_firmware()

    def _on_enable(self, data: bytes) -> None:
        motor, enable = data[0], data[1] == pp.ENABLE_ON
        motors = range(ARM_JOINTS) if motor == pp.ALL_MOTORS else [motor - 1] if 1 <= motor <= ARM_JOINTS else []
        for index in motors:
            self.motor_enabled[index] = enable
        if motor == pp.ALL_MOTORS:
            self.gripper_enabled = enable
        if not enable:  # a disabled motor stops where it is
            self._hold_here()

    def _on_motion_ctrl_1(self, data: bytes) -> None:
        if data[0] == pp.ESTOP_STOP:
            self.estop = True
            self._hold_here()
        elif data[0] == pp.ESTOP_RESUME:
            self.estop = False

    def _joint_mode_active(self) -> bool:
        return (self.ctrl_mode == pp.CTRL_MODE_CAN and self.move_mode == pp.MOVE_MODE_J and not self.estop
                and all(self.motor_enabled))

    def _on_joint_ctrl(self, pair: int, data: bytes) -> None:
        self._pending_joint_pairs[pair] = pp.unpack_int32_pair(data)
        if pair != len(pp.JOINT_CTRL) - 1:
            return  # the three frames form one target; it takes effect with the last
        pairs, self._pending_joint_pairs = self._pending_joint_pairs, {}
        if not self._joint_mode_active() or len(pairs) != len(pp.JOINT_CTRL):
            return  # mode gate: the real arm ignores joint targets outside CAN + joint mode
        requested = pp.millideg_to_rad([v for p in range(len(pp.JOINT_CTRL)) for v in pairs[p]])
        clamped = np.clip(requested, self._lower[:ARM_JOINTS], self._upper[:ARM_JOINTS])
        self.target_over_limit = bool(np.any(clamped != requested))
        self._target[:ARM_JOINTS] = clamped

    def _on_gripper_ctrl(self, data: bytes) -> None:
        stroke_um, effort, code = struct.unpack(">iHB", data[:7])
        self.gripper_enabled = code in (0x01, 0x03)
        self._gripper_effort = effort
        if self.gripper_enabled and not self.estop:
            self._target[ARM_JOINTS] = np.clip(pp.um_to_m(stroke_um), self._lower[ARM_JOINTS], self._upper[ARM_JOINTS])

    def _on_limits_query(self, data: bytes) -> None:
        motor, content = data[0], data[1]
        if not 1 <= motor <= ARM_JOINTS:
            return
        if content == 0x01:
            lower, upper = VENDOR_JOINT_LIMITS_RAD[motor - 1]
            to_decidegree = 1800 / np.pi
            payload = struct.pack(">BhhH", motor, round(upper * to_decidegree), round(lower * to_decidegree),
                                  round(self.model.velocity_limits[motor - 1] * 1000))
            self._bus.send(pp.MOTOR_LIMITS_REPLY, payload.ljust(8, b"\x00"))
        elif content == 0x02:
            self._bus.send(pp.MOTOR_ACCEL_REPLY, struct.pack(">BH", motor, 500).ljust(8, b"\x00"))

    def _send_firmware(self) -> None:
        text = self.config.firmware.encode("ascii")
        for start in range(0, len(text), 8):
            self._bus.send(pp.FIRMWARE, text[start:start + 8].ljust(8, b"\x00"))

    def _hold_here(self) -> None:
        here = self._dynamics.read().positions
        self._target = here.copy()
        self._setpoint = here.copy()
        self._dynamics.command(here.copy())

    # --- feedback ---
    def _run(self) -> None:
        period_ns = int(1e9 / FEEDBACK_HZ)
        next_tick, last_tick, tick_count = now_ns(), now_ns(), 0
        while not self._stop.is_set():
            tick = now_ns()
            self._advance_setpoint((tick - last_tick) * 1e-9)
            last_tick = tick
            if not self._silent:
                self._send_feedback(low_speed=tick_count % LOW_SPEED_EVERY_N_TICKS == 0)
            tick_count += 1
            next_tick += period_ns
            delay_s = (next_tick - now_ns()) * 1e-9
            if delay_s > 0:
                self._stop.wait(delay_s)
            else:
                next_tick = now_ns()

    def _advance_setpoint(self, dt_s: float) -> None:
        """The firmware's trajectory: the setpoint heads for the target at speed_percent of the joint speeds."""
        with self._lock:
            max_step = self.model.velocity_limits * (self.speed_percent / 100) * dt_s
            max_step[ARM_JOINTS] = self.model.velocity_limits[ARM_JOINTS] * dt_s  # the gripper ignores speed %
            self._setpoint = self._setpoint + np.clip(self._target - self._setpoint, -max_step, max_step)
            self._dynamics.command(self._setpoint.copy())

    def _send_feedback(self, low_speed: bool) -> None:
        state = self._dynamics.read()
        q, dq = state.positions, state.velocities
        with self._lock:
            status = self._status_payload(moving=bool(np.any(np.abs(self._target - q) > 1e-4)))
            gripper_status = (1 << pp.GRIPPER_ENABLED_BIT) if self.gripper_enabled else 0
            gripper_effort = self._gripper_effort
            foc_status = [((1 << pp.FOC_DRIVER_ENABLED_BIT) if enabled else 0) | bits
                          for enabled, bits in zip(self.motor_enabled, self._motor_status_bits, strict=True)]
        send = self._bus.send
        send(pp.STATUS, status)
        for can_id, pair in zip(pp.END_POSE, self._end_pose_pairs(q), strict=True):
            send(can_id, pp.pack_int32_pair(*pair))
        millideg = pp.rad_to_millideg(q[:ARM_JOINTS])
        for index, can_id in enumerate(pp.JOINT_FEEDBACK):
            send(can_id, pp.pack_int32_pair(millideg[2 * index], millideg[2 * index + 1]))
        send(pp.GRIPPER_FEEDBACK, struct.pack(">ihBB", int(pp.m_to_um(q[ARM_JOINTS])), gripper_effort,
                                              gripper_status, 0))
        for joint, can_id in enumerate(pp.MOTOR_HIGH_SPEED):
            speed = int(np.clip(round(dq[joint] * 1000), -32768, 32767))  # 0.001 rad/s
            send(can_id, struct.pack(">hhi", speed, 0, int(millideg[joint])))
        if low_speed:
            for joint, can_id in enumerate(pp.MOTOR_LOW_SPEED):
                # 24.0 V, 35 C driver, 30 C motor, foc bits, 0 A bus current
                send(can_id, struct.pack(">HhbBH", 240, 35, 30, foc_status[joint], 0))

    def _status_payload(self, moving: bool) -> bytes:
        arm_status = (pp.ARM_STATUS_ESTOP if self.estop else
                      pp.ARM_STATUS_TARGET_OVER_LIMIT if self.target_over_limit else pp.ARM_STATUS_NORMAL)
        comm_errors = self._comm_error_joints | self._single_frame_errors
        self._single_frame_errors = set()
        if comm_errors:
            arm_status = pp.ARM_STATUS_COMM_ERROR
        err_code = pp.err_code_bits(self._angle_limit_joints, comm_errors)
        return struct.pack(">BBBBBBH", self.ctrl_mode, arm_status, self.move_mode, 0, int(moving), 0, err_code)

    def _end_pose_pairs(self, q: np.ndarray) -> list[tuple[int, int]]:
        """Flange (link6) pose: position in 0.001 mm, extrinsic XYZ Euler angles in 0.001 deg (the SDK's FK)."""
        pose = self.model.frame_pose(q, "link6")
        xyz_um = pp.m_to_um(pose[:3, 3])
        rpy_millideg = np.rint(Rotation.from_matrix(pose[:3, :3]).as_euler("xyz", degrees=True)
                               * pp.MILLIDEG_PER_DEG).astype(int)
        return [(xyz_um[0], xyz_um[1]), (xyz_um[2], rpy_millideg[0]), (rpy_millideg[1], rpy_millideg[2])]
