"""teledex-sim as a separate process on udp_multicast: the unmodified vendor SDKs enable, move and read back a
simulated Piper and O6, the way a vendor demo program would."""

import random
import subprocess
import sys
import time

import can
import pytest
from piper_sdk import C_PiperInterface_V2

from teledex_lerobot.devices.sim_testing import wait_until

pytestmark = pytest.mark.filterwarnings("ignore:The .bustype. argument is deprecated:DeprecationWarning")


def _group() -> str:
    return f"239.74.{random.randint(0, 255)}.{random.randint(1, 254)}"


@pytest.fixture
def sim_process():
    piper_group, hand_group = _group(), _group()
    try:
        can.Bus(channel=piper_group, interface="udp_multicast").shutdown()
    except Exception as error:  # no multicast on this host's loopback
        pytest.skip(f"udp_multicast unavailable: {error}")
    process = subprocess.Popen([sys.executable, "-m", "teledex_lerobot.cli.sim", "--piper", piper_group, "--hand",
                                f"linkerhand_o6:right:{hand_group}", "--duration-s", "30"],
                               stdout=subprocess.PIPE, text=True)
    assert "teledex-sim: 2 device(s)" in process.stdout.readline()
    yield piper_group, hand_group
    process.terminate()
    process.wait(timeout=5)


def test_vendor_sdks_drive_the_simulated_devices(sim_process):
    piper_group, hand_group = sim_process
    C_PiperInterface_V2._instances.clear()
    piper = C_PiperInterface_V2(piper_group, judge_flag=False, can_auto_init=False)
    piper.CreateCanBus(piper_group, bustype="udp_multicast")
    piper.ConnectPort()
    try:
        assert wait_until(piper.EnablePiper, 3.0, period_s=0.01)
        assert wait_until(lambda: piper.GetPiperFirmwareVersion() == "S-V1.6-3")
        target = [10000, 20000, -30000, 5000, -10000, 15000]

        def moved():
            piper.MotionCtrl_2(1, 1, 100, 0)
            piper.JointCtrl(*target)
            state = piper.GetArmJointMsgs().joint_state
            return [state.joint_1, state.joint_2, state.joint_3, state.joint_4, state.joint_5, state.joint_6] == target
        assert wait_until(moved, 5.0, period_s=0.01)
    finally:
        piper.DisconnectPort()
        C_PiperInterface_V2._instances.clear()

    from linkerbot.hand.o6 import O6
    with O6("right", hand_group, interface_type="udp_multicast") as hand:
        assert hand.angle.get_blocking(timeout_ms=1000).angles.to_list() == [100.0] * 6  # starts open
        hand.angle.set_angles([10.0, 20.0, 30.0, 40.0, 50.0, 60.0])
        time.sleep(0.5)
        # the simulated hand's reply, quantised to the device's 0-255 steps
        assert hand.angle.get_blocking(timeout_ms=1000).angles.to_list() == pytest.approx(
            [10.2, 20.0, 29.8, 40.0, 50.2, 60.0], abs=0.01)
