"""The Piper simulator against the unmodified piper_sdk: feedback, enable, mode gate, limits."""

import time

import numpy as np
import pytest
from device_harness import BusListener, piper_firmware_reads, unique_channel, wait_until
from piper_sdk import C_PiperInterface_V2
from piper_sdk.piper_param.piper_param_manager import C_PiperParamManager
from scipy.spatial.transform import Rotation

from teledex_lerobot.devices.agilex import protocol as pp
from teledex_lerobot.devices.agilex.simulator import PiperSimConfig, PiperSimulator

pytestmark = pytest.mark.filterwarnings("ignore:The .bustype. argument is deprecated:DeprecationWarning")


@pytest.fixture
def sim_and_sdk():
    C_PiperInterface_V2._instances.clear()  # the SDK caches one instance per channel name
    channel = unique_channel("piper")
    sim = PiperSimulator(PiperSimConfig(channel=channel)).start()
    sdk = C_PiperInterface_V2(channel, judge_flag=False, can_auto_init=False)
    sdk.CreateCanBus(channel, bustype="virtual", judge_flag=False)
    sdk.ConnectPort()
    yield sim, sdk
    sdk.DisconnectPort()
    sim.stop()
    C_PiperInterface_V2._instances.clear()


def _joint_feedback(sdk) -> list[int]:
    state = sdk.GetArmJointMsgs().joint_state
    return [state.joint_1, state.joint_2, state.joint_3, state.joint_4, state.joint_5, state.joint_6]


def test_firmware_limits_and_enable(sim_and_sdk):
    sim, sdk = sim_and_sdk
    assert piper_firmware_reads(sdk, "S-V1.6-3")
    # limit queries are answered with the URDF limits, in 0.1 deg and 0.001 rad/s
    for motor, lower, upper in ((2, 0.0, 3.14), (3, -2.967, 0.0)):
        sdk.SearchMotorMaxAngleSpdAccLimit(motor, 0x01)
        assert wait_until(lambda: sdk.GetCurrentMotorAngleLimitMaxVel().current_motor_angle_limit_max_vel.motor_num
                          == motor)
        reply = sdk.GetCurrentMotorAngleLimitMaxVel().current_motor_angle_limit_max_vel
        assert (reply.min_angle_limit, reply.max_angle_limit) == (round(np.degrees(lower) * 10),
                                                                  round(np.degrees(upper) * 10))
        assert reply.max_joint_spd == 3000
    assert not any(sdk.GetArmEnableStatus())
    assert wait_until(sdk.EnablePiper)
    assert sim.motor_enabled == [True] * 6 and sim.gripper_enabled
    assert sdk.GetArmGripperMsgs().gripper_state.status_code & (1 << pp.GRIPPER_ENABLED_BIT)
    sdk.DisableArm(7)
    assert wait_until(lambda: not any(sdk.GetArmEnableStatus()))


def test_joint_targets_need_can_joint_mode(sim_and_sdk):
    sim, sdk = sim_and_sdk
    assert wait_until(sdk.EnablePiper)
    target = [10000, 20000, -30000, 5000, -10000, 15000]
    sdk.JointCtrl(*target)  # no MotionCtrl_2 yet: the arm ignores it
    time.sleep(0.1)
    assert _joint_feedback(sdk) == [0] * 6
    sdk.MotionCtrl_2(1, 1, 100, 0)
    sdk.JointCtrl(*target)
    assert wait_until(lambda: _joint_feedback(sdk) == target), _joint_feedback(sdk)
    status = sdk.GetArmStatus().arm_status
    assert int(status.ctrl_mode.value) == pp.CTRL_MODE_CAN and int(status.mode_feed.value) == pp.MOVE_MODE_J
    sdk.GripperCtrl(50000, 1000, 1, 0)
    assert wait_until(lambda: sdk.GetArmGripperMsgs().gripper_state.grippers_angle == 50000)


def test_end_pose_is_the_flange_fk(sim_and_sdk):
    sim, sdk = sim_and_sdk
    assert wait_until(sdk.EnablePiper)
    q = np.array([0.3, 1.2, -0.9, 0.4, -0.5, 0.7])
    sdk.MotionCtrl_2(1, 1, 100, 0)
    sdk.JointCtrl(*(int(v) for v in pp.rad_to_millideg(q)))
    assert wait_until(lambda: np.allclose(_joint_feedback(sdk), pp.rad_to_millideg(q), atol=1))
    time.sleep(0.02)
    pose = sdk.GetArmEndPoseMsgs().end_pose
    measured_q = pp.millideg_to_rad(_joint_feedback(sdk))
    expected = sim.model.frame_pose(np.append(measured_q, 0.0), "link6")
    # one device unit of joint angle (0.001 deg) moves the flange by up to ~10 um
    np.testing.assert_allclose(np.array([pose.X_axis, pose.Y_axis, pose.Z_axis]) / 1e6, expected[:3, 3], atol=1e-5)
    rpy = Rotation.from_euler("xyz", np.array([pose.RX_axis, pose.RY_axis, pose.RZ_axis]) / 1000, degrees=True)
    assert (rpy.inv() * Rotation.from_matrix(expected[:3, :3])).magnitude() < np.radians(0.01)
    # the SDK's own DH forward kinematics (dh_is_offset=1) agrees with the frames we send
    sdk.EnableFkCal()
    assert wait_until(lambda: any(sdk.GetFK("feedback")[-1]))  # computed on the next feedback frame
    sdk_link6 = sdk.GetFK("feedback")[-1]
    np.testing.assert_allclose(np.array(sdk_link6[:3]) / 1000, expected[:3, 3], atol=2e-4)


def test_limits_clamp_and_emergency_stop(sim_and_sdk):
    sim, sdk = sim_and_sdk
    assert wait_until(sdk.EnablePiper)
    sdk.MotionCtrl_2(1, 1, 100, 0)
    sdk.JointCtrl(200000, 0, 0, 0, 0, 0)  # 200 deg: beyond joint1's 150 deg limit
    assert wait_until(lambda: int(sdk.GetArmStatus().arm_status.arm_status.value) == pp.ARM_STATUS_TARGET_OVER_LIMIT)
    assert wait_until(lambda: abs(_joint_feedback(sdk)[0] - round(2.6179 * pp.MILLIDEG_PER_RAD)) <= 1)
    sdk.MotionCtrl_2(1, 1, 20, 0)
    sdk.JointCtrl(0, 0, 0, 0, 0, 0)
    time.sleep(0.05)
    sdk.EmergencyStop(pp.ESTOP_STOP)
    assert wait_until(lambda: int(sdk.GetArmStatus().arm_status.arm_status.value) == pp.ARM_STATUS_ESTOP)
    time.sleep(0.05)
    held = _joint_feedback(sdk)[0]
    time.sleep(0.1)
    assert _joint_feedback(sdk)[0] == held  # stopped where it was
    sdk.EmergencyStop(pp.ESTOP_RESUME)
    assert wait_until(lambda: int(sdk.GetArmStatus().arm_status.arm_status.value) == pp.ARM_STATUS_NORMAL)


def test_feedback_frames_and_rates():
    channel = unique_channel("piper-rate")
    listener = BusListener(channel)
    with PiperSimulator(PiperSimConfig(channel=channel)) as sim:
        time.sleep(0.5)
    listener.close()
    joints = len(listener.with_id(pp.JOINT_FEEDBACK[0]))
    low_speed = len(listener.with_id(pp.MOTOR_LOW_SPEED[0]))
    # every high-rate frame once per tick, low-speed frames every 5th tick (200 Hz / 40 Hz)
    for can_id in (pp.STATUS, *pp.END_POSE, *pp.JOINT_FEEDBACK, pp.GRIPPER_FEEDBACK, *pp.MOTOR_HIGH_SPEED):
        assert abs(len(listener.with_id(can_id)) - joints) <= 1
    assert abs(joints / low_speed - 5) < 1
    assert all(len(m.data) == 8 and not m.is_extended_id for m in listener.frames)
    assert sim.frames_sent == len(listener.frames)


def test_limit_query_answers_the_vendors_per_joint_limits(sim_and_sdk):
    """Each motor answers 0x472 with its own limits from piper_sdk's table (as installed), in 0.1 deg. (Ask one motor
    at a time: the SDK's GetAllMotorAngleLimitMaxSpd stores one shared message object in all six slots, so it
    shows the last motor's reply six times.)"""
    sim, sdk = sim_and_sdk
    table = C_PiperParamManager().GetPiperParamOrigin()["joint_limit"]
    for motor in range(1, 7):
        sdk.SearchMotorMaxAngleSpdAccLimit(motor, 0x01)
        assert wait_until(lambda: sdk.GetCurrentMotorAngleLimitMaxVel().current_motor_angle_limit_max_vel
                          .motor_num == motor)
        reply = sdk.GetCurrentMotorAngleLimitMaxVel().current_motor_angle_limit_max_vel
        lower, upper = table[f"j{motor}"]
        assert (reply.min_angle_limit, reply.max_angle_limit) == (round(np.degrees(lower) * 10),
                                                                  round(np.degrees(upper) * 10))
