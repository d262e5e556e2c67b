"""A scripted person in the headset: it sees only what our WebXR page shows (the robot's hand as measured, the
task's objects, the status panel) and acts only through the emulated Quest 3's right controller (IWER): it picks
the level pinch with the thumbstick, holds the trigger to move the arm, steers the controller until the hand it sees
is where it wants it, closes the grip, carries the half cube over the other and lets go. Test-only.

Like a person, it closes the loop on what it sees: each step it moves the controller by a fraction of the hand's
remaining error (position and turn; slowly enough for the page's lag), mapped from the robot's base frame (x forward,
y left, z up) into the headset's (y up, -z forward) and divided by the arm's translation gain, so the relative arm's
dead zone, gain and lag need no model. It knows how a good pinch of the half cube looks (world/grasps.py: palm level,
thumb behind the near face), as an instructed operator would.
"""

import json
import time

import numpy as np
from scipy.spatial.transform import Rotation

from teledex_lerobot.control.config import RelativeArmConfig
from teledex_lerobot.inputs.xr_state import OPERATOR_FROM_XR
from teledex_lerobot.world.grasps import grasp_for, heading_frame
from teledex_lerobot.world.tasks.cube import HALF_HEIGHT_M

STEP_S = 0.05
# Of the remaining error per step (4 /s, about a person's visuomotor crossover). The page shows the hand 150-200 ms
# late in immersive mode (IWER renders with software GL here); closing the loop on it at 0.4 per step (8 /s) overshoots
# and circles, through the Piper's straight wrist where the turn is damped: 4 of 10 layouts assembled in the world, and
# 0 of 10 in a kinematic model with a 200 ms delay, which carries 10 of 10 at 0.2.
GAIN = 0.2
MAX_SPEED_M_S = 0.35
MAX_TURN_RAD_S = 1.5
LIFT_M = 0.07
OVER_M = 0.03
PLACE_DROP_M = 0.001
RETREAT_M = 0.08
# The relative arm turns the hand at most max_rotation_rad (1.45) from where the trigger was pressed, as a wrist
# turns only so far: like a person, the script lets go of the trigger, turns back and presses again (a clutch).
CLUTCH_TURN_RAD = 1.1
CLUTCH_REACH_M = 0.3
NEUTRAL_POSITION = (0.25, 1.2, -0.4)
LOOK_DOWN_RAD = -0.5  # the head tilted down at the robot drawn before it


def _pose(matrix16) -> np.ndarray:
    return np.asarray(matrix16, dtype=float).reshape(4, 4)


def _nearest_turn(yaw: float, reference: float, turn: float) -> float:
    return reference + (yaw - reference + turn / 2) % turn - turn / 2


def _yaw(pose: np.ndarray) -> float:
    return float(np.arctan2(pose[1, 0], pose[0, 0]))


class HeadsetPerson:
    def __init__(self, page, hand_model: str = "linkerhand_o6"):
        self.page = page
        self.grasp = grasp_for(hand_model, "cube_assembly")
        self.scale = RelativeArmConfig().translation_scale
        self.position = np.array(NEUTRAL_POSITION)  # the right controller, headset frame
        self.rotation = Rotation.identity()
        self.anchor = (self.position.copy(), self.rotation)  # the controller's pose when the trigger was pressed
        self.trigger = self.grip = 0.0
        self.last_error = (np.nan, np.nan)  # the last steer's remaining error (mm, rad), for failure messages

    # ---- what the person sees ----------------------------------------------------------------------------------

    def status(self) -> dict:
        return json.loads(self.page.evaluate("JSON.stringify(window.teledexView.page.status || {})"))

    def scene(self) -> dict:
        return json.loads(self.page.evaluate("JSON.stringify(window.teledexView.page.scene || {})"))

    def objects(self, scene: dict) -> dict[str, np.ndarray]:
        return {o["name"]: _pose(o["pose"]) for o in scene.get("objects", [])}

    # ---- what the person does ----------------------------------------------------------------------------------

    def _send(self, click: bool = False) -> None:
        x, y, z = self.position
        qx, qy, qz, qw = self.rotation.as_quat()
        self.page.evaluate(
            "(() => { const c = xrDevice.controllers.right;"
            f"c.position.x = {x:.5f}; c.position.y = {y:.5f}; c.position.z = {z:.5f};"
            f"c.quaternion.set({qx:.6f}, {qy:.6f}, {qz:.6f}, {qw:.6f});"
            f"c.updateButtonValue('trigger', {self.trigger:.3f}); c.updateButtonValue('squeeze', {self.grip:.3f});"
            f"c.updateButtonValue('thumbstick', {int(click)}); }})()")

    def press(self, controller: str, button: str) -> None:
        for value in (1, 0):
            self.page.evaluate(f"xrDevice.controllers.{controller}.updateButtonValue('{button}', {value})")
            time.sleep(0.2)

    def wait_status(self, condition, timeout_s: float = 20.0) -> dict:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            status = self.status()
            if status and condition(status):
                return status
            time.sleep(0.1)
        raise TimeoutError(f"status never met the condition: {self.status()}")

    def choose_grasp(self, name: str) -> None:
        for _ in range(4):
            if self.status().get("grasp") == name:
                return
            self._send(click=True)
            time.sleep(0.25)
            self._send(click=False)
            time.sleep(0.25)
        raise AssertionError(f"the thumbstick never chose {name}: {self.status()}")

    def start(self) -> None:
        """Look down at the robot, zero pose (X), teleoperation (Y), the level pinch, then hold the trigger: the arm
        follows."""
        self.page.evaluate(f"xrDevice.quaternion.set({np.sin(LOOK_DOWN_RAD / 2):.6f}, 0, 0, "
                           f"{np.cos(LOOK_DOWN_RAD / 2):.6f})")
        self._send()
        self.press("left", "x-button")
        self.wait_status(lambda s: s.get("state") == "ZeroPos")
        time.sleep(2.0)
        self.press("left", "y-button")
        self.wait_status(lambda s: s.get("state") == "Teleoperation")
        self.choose_grasp("level_pinch")
        self.engage()

    def engage(self) -> None:
        self.trigger = 1.0
        self._send()
        self.anchor = (self.position.copy(), self.rotation)
        self.wait_status(lambda s: s.get("engaged"))

    def clutch(self) -> None:
        """Let go of the trigger, bring the controller back to a comfortable pose, press again."""
        self.trigger = 0.0
        self._send()
        time.sleep(0.15)
        self.position, self.rotation = np.array(NEUTRAL_POSITION), Rotation.identity()
        self._send()
        time.sleep(0.15)
        self.engage()

    def steer(self, target_of, tolerance_m: float, tolerance_rad: float, timeout_s: float,
              settle_steps: int = 3) -> bool:
        """Move the controller until the seen hand is within tolerance of target_of(scene) (a 4x4 in the base frame)
        for settle_steps steps in a row."""
        deadline, inside = time.monotonic() + timeout_s, 0
        while time.monotonic() < deadline:
            scene = self.scene()
            if "hand" not in scene:
                time.sleep(STEP_S)
                continue
            hand, target = _pose(scene["hand"]), target_of(scene)
            error_m = target[:3, 3] - hand[:3, 3]
            error_rad = Rotation.from_matrix(target[:3, :3] @ hand[:3, :3].T).as_rotvec()
            distance_m, angle_rad = float(np.linalg.norm(error_m)), float(np.linalg.norm(error_rad))
            self.last_error = (round(distance_m * 1000, 1), round(angle_rad, 3))
            inside = inside + 1 if distance_m <= tolerance_m and angle_rad <= tolerance_rad else 0
            if inside >= settle_steps:
                return True
            move = OPERATOR_FROM_XR.T @ (GAIN * error_m / self.scale)
            move *= min(1.0, MAX_SPEED_M_S * STEP_S / max(np.linalg.norm(move), 1e-9))
            turn = OPERATOR_FROM_XR.T @ (GAIN * error_rad)
            turn *= min(1.0, MAX_TURN_RAD_S * STEP_S / max(np.linalg.norm(turn), 1e-9))
            self.position = self.position + move
            self.rotation = Rotation.from_rotvec(turn) * self.rotation
            self._send()
            if ((self.rotation * self.anchor[1].inv()).magnitude() > CLUTCH_TURN_RAD
                    or np.linalg.norm(self.position - self.anchor[0]) > CLUTCH_REACH_M):
                self.clutch()
            time.sleep(STEP_S)
        return False

    def squeeze(self, to: float, duration_s: float) -> None:
        start = self.grip
        for fraction in np.linspace(0, 1, max(2, int(duration_s / STEP_S))):
            self.grip = start + fraction * (to - start)
            self._send()
            time.sleep(STEP_S)

    # ---- the task ----------------------------------------------------------------------------------------------

    def grasp_pose(self, top: np.ndarray, bottom: np.ndarray) -> np.ndarray:
        """The level pinch's hand pose on the half, from the face that leaves the wrist comfortable both when
        grasping and after turning the half to the other's yaw: its heading nearest the preferred heading (from the
        base) less half that turn."""
        position = top[:3, 3]
        preferred = float(np.arctan2(position[1], position[0])) + self.grasp.preferred_heading_rad
        turn = _nearest_turn(_yaw(bottom) - _yaw(top), 0.0, np.pi / 2)
        heading = _nearest_turn(_yaw(top), preferred - turn / 2, np.pi / 2)
        return heading_frame(position, heading) @ self.grasp.hand_in_heading()

    def assemble_cube(self, lifted_hook=lambda: None) -> str:
        """One attempt; returns the furthest step reached. `lifted_hook` is called with the half lifted. The grip
        is open after it, whatever happened."""
        try:
            return self._assemble_cube(lifted_hook)
        finally:
            if self.grip:
                self.squeeze(0.0, 0.4)

    def _assemble_cube(self, lifted_hook) -> str:
        objects = self.objects(self.scene())
        grasp = self.grasp_pose(objects["cube_top"], objects["cube_bottom"])
        pre = grasp.copy()
        pre[2, 3] += self.grasp.approach_m[2]
        if not self.steer(lambda s: pre, 0.015, 0.15, 15.0, settle_steps=1):
            return "approach"
        if not self.steer(lambda s: grasp, 0.003, 0.05, 5.0):
            return "descend"
        self.squeeze(1.0, 0.8)
        time.sleep(0.4)
        lifted = grasp.copy()
        lifted[2, 3] += LIFT_M
        if not self.steer(lambda s: lifted, 0.015, 0.1, 4.0, settle_steps=1):
            return "lift"
        lifted_hook()
        scene = self.scene()
        seen = self.objects(scene)
        cube_in_hand = np.linalg.inv(_pose(scene["hand"])) @ seen["cube_top"]
        bottom = seen["cube_bottom"]
        goal_yaw = _nearest_turn(_yaw(bottom), _yaw(seen["cube_top"]), np.pi / 2)

        def over(height_m):
            goal = np.eye(4)
            goal[:3, :3] = Rotation.from_euler("z", goal_yaw).as_matrix()
            goal[:3, 3] = bottom[:3, 3] + [0.0, 0.0, 2 * HALF_HEIGHT_M + PLACE_DROP_M + height_m]
            return lambda s: goal @ np.linalg.inv(cube_in_hand)

        if not self.steer(over(OVER_M), 0.008, 0.15, 6.0, settle_steps=1):
            return "carry"
        self.steer(over(0.0), 0.003, 0.05, 3.0)  # resting on the other half, the hand may stop short: let go
        self.squeeze(0.0, 0.4)
        time.sleep(0.2)
        hand = _pose(self.scene()["hand"])
        hand[2, 3] += RETREAT_M
        self.steer(lambda s: hand, 0.02, 0.2, 3.0, settle_steps=1)
        return "released"
