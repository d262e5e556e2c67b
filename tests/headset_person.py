"""A scripted person in the headset who works from what the page shows a real station's operator: the robot's camera
images, read through the calibration each frame carries (tests/seeing.py), the robot as the page draws it (its
measured joints, as a real station's page draws them) and the status text. It acts only through the emulated Quest
3's right controller (IWER); with two hands (TwoHandedPerson), each through the controller on its rig's side. It never
reads the world's objects (the page draws none unless asked) nor the world's grasps. Test-only.

What it knows, as an instructed operator at the station does:
- the task: put the red 4 x 4 x 2 cm half on the green one; where the table is (its height below the robot's base);
- its robot: the kinematic model the page draws (URDF and hand mount), so where its thumb tip is while the chosen
  grasp waits open, which hand poses its arm reaches (and where the wrist goes straight, which the teleop damps), and
  how the controls answer (practised): while the trigger is held the arm's flange moves by the controller's motion
  since the press, less a dead zone and times a gain, and turns as the controller turns, lagging near a straight
  wrist (the teleop's own control: teleop_stroke);
- what practice on other layouts taught it: how the half settles in the pinch, and how it comes to rest when let go;
- its own controller's pose, and the episode's time left (the status shows it).
How it works: look, move, let the arm settle, look again. Before it moves it measures both halves with the top camera
(later its hand hides them); its hand it sees where the page draws it. Between looks it predicts its hand from its
own controller's motion, corrected by the last look at the drawn hand once the arm has come to rest, so latency slows
it but does not make it overshoot. It grasps as its instructor said: palm level, fingers along a face, the thumb tip
just above the table behind the near face; after closing, the fingers have pushed the half onto the thumb. Of the
faces to pinch and the ways to set the half down it takes one its arm carries it through far from a straight wrist.
Afterwards it looks again from the top camera: the red half still on the table, or set down askew, and it tries again
while an attempt fits in the time left; it stops where it is when the time is up.
"""

import base64
import re
import time
from dataclasses import dataclass, replace

import cv2
import numpy as np
from scipy.spatial.transform import Rotation
from seeing import HALF_EDGE_M, HALF_HEIGHT_M, Camera, half_on_table, nearest_quarter_turn

from teledex_lerobot.control.config import RelativeArmConfig
from teledex_lerobot.control.hand_grasps import GRASP_SHAPES, hand_shape
from teledex_lerobot.control.relative_arm import CartesianRelativeArm
from teledex_lerobot.geometry.rotations import matrix_to_rotvec, rotvec_to_matrix
from teledex_lerobot.inputs.xr_state import OPERATOR_FROM_XR
from teledex_lerobot.kinematics.ik import solve_ik
from teledex_lerobot.retargeting.hand_layout import reference_pose
from teledex_lerobot.rig import Rig, RigPart
from teledex_lerobot.robot_body import FINGER_BONE_RADIUS_M, RigBody

STEP_S = 0.05  # the controller moves in steps this long
HAND_SPEED_M_S = 0.25  # how fast it moves the controller (a calm reach)
TURN_SPEED_RAD_S = 1.2
SETTLE_S = 0.35  # after the controller stops, at least this long before the arm is looked at
# the drawn hand moves less than this (m, rad) between two looks STILL_S apart: at rest
STILL, STILL_S = (0.0003, 0.003), 0.1
SETTLE_TIMEOUT_S = 3.0
NEUTRAL = np.array([0.25, 1.2, -0.4])  # where it holds the controller (XR: x right, y up, -z ahead), and brings it
CLUTCH_REACH_M = 0.3  # back to (trigger released) when it has reached or turned this far from where it pressed
CLUTCH_TURN_RAD = 1.1
LOOK_DOWN_RAD = 0.25  # the head tilted down a little: the screens ahead, the drawn robot below them
# The pinch: the thumb tip THUMB_CLEARANCE_M above the table, the near face NEAR_FACE_GAP_M beyond the thumb's tip;
# the fingers then push the half those millimetres onto the thumb.
THUMB_CLEARANCE_M = 0.002
NEAR_FACE_GAP_M = 0.006
APPROACH_M = 0.05  # the hand comes down onto the half from this far above
# The arm holds the palm level best facing a little to the left of the reach from its base (learned by practice:
# facing straight along the reach, or right of it, the wrist runs out of turn and the palm tilts)
REACH_TURN_RAD = 0.1
LOOK_BACK_M = np.array([-0.06, 0.0, 0.04])  # drawn back from home (base frame) to see the table


@dataclass(frozen=True)
class Practice:
    """What practice taught it of a hand (tests/simulated_station.py --practise on layouts it is not tested on): when
    the fingers close, how the half slides onto the thumb (m) and turns (xyz degrees) in its own frame as placed; and
    when let go, level in the hand 1 mm above where it is set down, how far from where it was aimed it comes to rest
    (m, in the aimed half's frame, the median) and how far it turns about the vertical (rad): the person aims that
    much the other way."""

    pinch_move_m: tuple[float, float, float]
    pinch_turn_deg: tuple[float, float, float]
    place_move_m: tuple[float, float] = (0.0, 0.0)
    place_turn_rad: float = 0.0

    @property
    def pinch_settling(self) -> np.ndarray:
        settling = np.eye(4)
        settling[:3, :3] = Rotation.from_euler("xyz", self.pinch_turn_deg, degrees=True).as_matrix()
        settling[:3, 3] = self.pinch_move_m
        return settling


# by hand model and side (tests/simulated_station.py --preset <its preset> --practise --seed 0 --layouts 10)
PRACTICE = {
    # the O6: the half slides 17 mm back onto the thumb and 8 mm aside, drops 6 mm and turns 14 degrees; it comes to
    # rest within a millimetre of where it was aimed but turned 4 degrees to the left
    ("linkerhand_o6", "right"): Practice((-0.0174, -0.0075, -0.0064), (-4.4, 9.6, 14.2), (-0.0007, 0.0009),
                                         np.radians(4.0)),
    # the L10: 14 mm back onto the thumb, 2 mm aside, 5 mm down, 4 degrees about the vertical; let go, it rests where
    # aimed to 2 mm
    ("linkerhand_l10", "right"): Practice((-0.0138, -0.0021, -0.0052), (-1.5, -1.5, 4.4), (-0.0002, 0.0016),
                                          np.radians(0.4)),
    # the left L10 (its grasps the right one's mirrored): in 6 of 10 layouts 14 mm back onto the thumb, 1 mm aside,
    # 7.5 mm down and 4 degrees the other way; in 3 the half is pushed 25 mm up into the palm (held, but elsewhere)
    ("linkerhand_l10", "left"): Practice((-0.0137, 0.0013, -0.0075), (1.5, -0.7, -4.4)),
}
LIFT_M = 0.07
OVER_M = 0.03
PLACE_DROP_M = 0.001
RETREAT_M = 0.08
END_MARGIN_S = 2.0  # it stops this long before the episode's end as the status shows it
LOOKS = 5  # it looks at the table this many times (fresh frames) before it gives up on seeing the halves
# the red half on the green one as the task wants it (m, rad; the world's bar is 8 mm and 10 degrees): beyond this it
# picks it up again and sets it down anew
ALIGNED = (0.006, np.radians(8))
# a pose the arm's IK (or the teleop, REACH_HOLD_S after the controller stopped) comes no closer to than this (m, rad)
# is out of its reach: the hand would be tilted
REACH_TOLERANCE = (0.002, 0.05)
REACH_HOLD_S = 1.0
REACH_STEP = (0.01, 0.05)  # the steps (m, rad) in which it follows a plan's way through its arm's kinematics


class EpisodeOver(Exception):
    """The episode's time is up: the person stops where it is."""


def pinch_settling(placed: np.ndarray, settled: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """How a half settled in the hand when the pinch closed: its move (m) and turn (xyz degrees), in its own frame as
    placed (of its four equal quarter turns, the nearest)."""
    settled = settled.copy()
    settled[:3, :3] = nearest_quarter_turn(settled[:3, :3], placed[:3, :3])
    change = np.linalg.inv(placed) @ settled
    return change[:3, 3], Rotation.from_matrix(change[:3, :3]).as_euler("xyz", degrees=True)


def place_settling(aimed: np.ndarray, rested: np.ndarray) -> tuple[np.ndarray, float]:
    """How a half came to rest when let go: its move (m, along the table) and turn (rad, about the vertical) in the
    frame of the pose it was aimed at (of its four equal quarter turns, the nearest)."""
    turn = _nearest_turn(_yaw(rested) - _yaw(aimed), 0.0, np.pi / 2)
    return _z_turn(-_yaw(aimed))[:2, :2] @ (rested[:2, 3] - aimed[:2, 3]), turn


def _pose(rotation: np.ndarray, position) -> np.ndarray:
    pose = np.eye(4)
    pose[:3, :3] = rotation
    pose[:3, 3] = position
    return pose


def _yaw(pose: np.ndarray) -> float:
    return float(np.arctan2(pose[1, 0], pose[0, 0]))


def _nearest_turn(angle: float, reference: float, turn: float) -> float:
    return reference + (angle - reference + turn / 2) % turn - turn / 2


def _z_turn(angle: float) -> np.ndarray:
    return Rotation.from_euler("z", angle).as_matrix()


def _shaped(vector: np.ndarray, dead_zone: float, scale: float) -> np.ndarray:
    length = float(np.linalg.norm(vector))
    return np.zeros(3) if length <= dead_zone else vector * ((length - dead_zone) * scale / length)


def _unshaped(vector: np.ndarray, dead_zone: float, scale: float) -> np.ndarray:
    """The controller motion that the arm shapes into `vector` (the inverse of _shaped)."""
    length = float(np.linalg.norm(vector))
    return np.zeros(3) if length < 1e-9 else vector * ((length / scale + dead_zone) / length)


def _distance(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    return float(np.linalg.norm(a[:3, 3] - b[:3, 3])), float(np.linalg.norm(matrix_to_rotvec(a[:3, :3] @ b[:3, :3].T)))


class ArmResponse:
    """How the arm's flange answers the controller while the trigger is held (as practised): moved by the
    controller's displacement since the press less a dead zone, times a gain; turned by its turn less a dead zone.
    Poses in the robot's base frame, the controller's in the operator's (x forward, y left, z up), whose axes the
    base's follow."""

    def __init__(self, config: RelativeArmConfig):
        self.config = config

    def flange(self, anchor_flange: np.ndarray, anchor_controller: np.ndarray, controller: np.ndarray) -> np.ndarray:
        c = self.config
        moved = _shaped(controller[:3, 3] - anchor_controller[:3, 3], c.translation_dead_zone_m, c.translation_scale)
        turned = _shaped(matrix_to_rotvec(controller[:3, :3] @ anchor_controller[:3, :3].T), c.rotation_dead_zone_rad,
                         1.0)
        return _pose(rotvec_to_matrix(turned) @ anchor_flange[:3, :3], anchor_flange[:3, 3] + moved)

    def controller(self, anchor_flange: np.ndarray, anchor_controller: np.ndarray, flange: np.ndarray) -> np.ndarray:
        c = self.config
        moved = _unshaped(flange[:3, 3] - anchor_flange[:3, 3], c.translation_dead_zone_m, c.translation_scale)
        turned = _unshaped(matrix_to_rotvec(flange[:3, :3] @ anchor_flange[:3, :3].T), c.rotation_dead_zone_rad, 1.0)
        return _pose(rotvec_to_matrix(turned) @ anchor_controller[:3, :3], anchor_controller[:3, 3] + moved)

    def anchor_seen(self, flange_seen: np.ndarray, anchor_controller: np.ndarray, controller: np.ndarray) -> np.ndarray:
        """The anchor that explains a flange pose seen with the controller where it is."""
        c = self.config
        moved = _shaped(controller[:3, 3] - anchor_controller[:3, 3], c.translation_dead_zone_m, c.translation_scale)
        turned = _shaped(matrix_to_rotvec(controller[:3, :3] @ anchor_controller[:3, :3].T), c.rotation_dead_zone_rad,
                         1.0)
        return _pose(rotvec_to_matrix(turned).T @ flange_seen[:3, :3], flange_seen[:3, 3] - moved)


# How the teleop's arm answers (practised): its own relative arm control, with the damping near a straight wrist and
# the joint speed bound, at the recorder's rate; the dead zones and the gain the person's controller motion undoes
TELEOP_TICK_S = 0.04
TELEOP_RESPONSE = RelativeArmConfig(translation_dead_zone_m=0.0, rotation_dead_zone_rad=0.0, translation_scale=1.0)


def teleop_stroke(arm: RigPart, q: np.ndarray, goal_flange: np.ndarray, hold_s: float) -> tuple[np.ndarray, float]:
    """Where the teleop leaves the arm (its joints) when the controller moves the flange straight toward
    `goal_flange` (base frame) at a calm hand's speed, re-gripped (a clutch: the teleop re-anchors at the arm) before
    it reaches or turns farther than a clutch allows, each stroke from where the arm then is, then held `hold_s`; and
    how near a straight wrist the arm came on the way (the smallest singular value of its orientation-weighted
    Jacobian, which the teleop damps below its threshold: the hand swings its turn there)."""
    control = CartesianRelativeArm(arm, TELEOP_RESPONSE)
    weights = np.array([1.0] * 3 + [TELEOP_RESPONSE.ik_orientation_weight_m_per_rad] * 3)
    margin = np.inf
    speed_m_s = HAND_SPEED_M_S * RelativeArmConfig().translation_scale

    def remaining() -> tuple[np.ndarray, np.ndarray, float, float]:
        start = arm.model.frame_pose(arm.full_configuration(q), arm.mount_frame)
        turn = matrix_to_rotvec(goal_flange[:3, :3] @ start[:3, :3].T)
        return start, turn, float(np.linalg.norm(goal_flange[:3, 3] - start[:3, 3])), float(np.linalg.norm(turn))

    start, turn, distance_m, angle_rad = remaining()
    strokes = max(1, int(np.ceil(max(distance_m / (CLUTCH_REACH_M * RelativeArmConfig().translation_scale),
                                     angle_rad / CLUTCH_TURN_RAD))))
    for left in range(strokes, 0, -1):
        control.reset()
        moving = max(1, int(np.ceil(max(distance_m / speed_m_s, angle_rad / TURN_SPEED_RAD_S) / left / TELEOP_TICK_S)))
        for tick in range(moving + 1 + (int(hold_s / TELEOP_TICK_S) if left == 1 else 0)):
            share = min(tick / moving, 1.0) / left
            pose = _pose(rotvec_to_matrix(share * turn) @ start[:3, :3],
                         start[:3, 3] + share * (goal_flange[:3, 3] - start[:3, 3]))
            q = control(np.concatenate([pose[:3, 3], Rotation.from_matrix(pose[:3, :3]).as_quat()]), q,
                        dt_s=TELEOP_TICK_S)
            _, jacobian = arm.model.frame_pose_and_jacobian(arm.full_configuration(q), arm.mount_frame)
            margin = min(margin, float(np.linalg.svd(jacobian * weights[:, None], compute_uv=False).min()))
        start, turn, distance_m, angle_rad = remaining()
    return q, margin


class BrowserHeadset:
    """The person's eyes and hands in headless Chromium: what the page shows (its status text, each camera's newest
    frame as the page received it: its JPEG and header) and the emulated Quest 3 (IWER) it moves; time is the wall
    clock the frames are stamped on. tests/simulated_station.py offers the same to a person in a simulated world."""

    def __init__(self, page):
        self.page = page
        # The page sends the controller's grip (where the hand holds it); the emulator moves its target ray, from
        # which the grip is offset (5 cm, turned 45 degrees on a Quest Touch Plus): the hand is the grip.
        self.ray_from_grip = {side: np.linalg.inv(np.asarray(page.evaluate(
            f"IWER.metaQuest3.controllerConfig.layout.{side}.gripOffsetMatrix"), dtype=float).reshape(4, 4).T)
            for side in ("left", "right")}

    def status_text(self) -> str:
        return self.page.evaluate("document.getElementById('status').textContent")

    def scene(self) -> dict:
        """The newest scene message the page draws the robot by."""
        return self.page.evaluate("window.teledexView.page.scene") or {}

    def frames(self) -> dict[str, tuple[bytes, dict]]:
        frames = self.page.evaluate("(() => { const v = window.teledexView; return Object.fromEntries("
                                    "Object.keys(v.view.frames).map((n) => [n, v.frame(n)])); })()")
        return {name: (base64.b64decode(frame["jpeg"]), frame["header"]) for name, frame in (frames or {}).items()}

    def hold(self, position: np.ndarray, quaternion: np.ndarray, trigger: float, grip: float, click: bool,
             side: str = "right") -> None:
        """A controller's grip: position (XR frame), orientation (x, y, z, w); trigger, grip, thumbstick press."""
        held = np.eye(4)
        held[:3, :3], held[:3, 3] = Rotation.from_quat(quaternion).as_matrix(), position
        ray = held @ self.ray_from_grip[side]
        x, y, z = ray[:3, 3]
        qx, qy, qz, qw = Rotation.from_matrix(ray[:3, :3]).as_quat()
        self.page.evaluate(
            f"(() => {{ const c = xrDevice.controllers.{side};"
            f"c.position.x = {x:.5f}; c.position.y = {y:.5f}; c.position.z = {z:.5f};"
            f"c.quaternion.set({qx:.6f}, {qy:.6f}, {qz:.6f}, {qw:.6f});"
            f"c.updateButtonValue('trigger', {trigger:.3f}); c.updateButtonValue('squeeze', {grip:.3f});"
            f"c.updateButtonValue('thumbstick', {int(click)}); }})()")

    def button(self, controller: str, button: str, pressed: bool) -> None:
        self.page.evaluate(f"xrDevice.controllers.{controller}.updateButtonValue('{button}', {int(pressed)})")

    def look_down(self, angle_rad: float) -> None:
        self.page.evaluate(f"xrDevice.quaternion.set({np.sin(-angle_rad / 2):.6f}, 0, 0, {np.cos(angle_rad / 2):.6f})")

    def now_ms(self) -> float:
        return time.time() * 1000

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


class HeadsetPerson:
    def __init__(self, headset, rig: Rig, table_top_z_m: float, grasp: str = "level_pinch",
                 practice: Practice | None = None, name: str = "", base_in_first: np.ndarray | None = None):
        """`practice`: what it knows of its hand (by default what PRACTICE says of it). One hand of two: `name`, its
        rig's (its status line "Arm <name>", its cameras "<name>_..."; it holds the controller on its rig's side),
        and `base_in_first`, where its base stands in the first rig's frame (the fixed camera's pose is given in
        that frame; it knows the station's layout); `table_top_z_m` is in its own base frame."""
        self.headset = headset
        self.table_top_z_m = table_top_z_m
        self.grasp = grasp
        self.practice = practice or PRACTICE[(rig.parts["hand"].spec.model, rig.side)]
        self.name, self.side = name, rig.side
        self.from_first = np.linalg.inv(np.eye(4) if base_in_first is None else base_in_first)
        self.neutral = NEUTRAL * [1.0 if self.side == "right" else -1.0, 1.0, 1.0]  # the left hand mirrors it
        self.response = ArmResponse(RelativeArmConfig())
        self.hand_mount = rig.hand_mount
        self.arm = rig.parts["arm"]
        # the hand at the robot's home (the zero pose it knows): where each episode starts
        self.home_hand = rig.base_poses({role: part.home for role, part in rig.parts.items()})["hand"]
        self.half_in_hand = self._pinch(rig)  # where the half sits in the hand when pinched, before closing
        self.hand_from_palm = self._palm_box(rig)  # the page draws the hand's palm as this box
        self.controller = _pose(np.eye(3), OPERATOR_FROM_XR @ self.neutral)  # operator frame
        self.trigger = self.grip = 0.0
        self.anchor: tuple[np.ndarray, np.ndarray] | None = None  # (controller, flange) when the trigger was pressed
        self.seen = {}  # the halves' poses in the base frame, from the top camera before the hand moved
        self.last_error = (np.nan, np.nan)  # the last move's remaining error (mm, rad), for failure messages
        self.aimed: np.ndarray | None = None  # where the half to move was aimed when set down (base frame)
        self.episode = 0  # the episode the status showed when it began
        self.episode_ends_ms = np.inf
        self.attempt_s = 0.0  # the longest attempt it has made: another is begun only if this much time is left

    @staticmethod
    def _palm_box(rig: Rig) -> np.ndarray:
        """The hand's root frame from the palm box the page draws (its robot's model, as the page has it)."""
        body = RigBody(rig).parts["hand"]
        model = rig.parts["hand"].model
        palm = body.palm
        link = model.frame_pose(reference_pose(model), palm.link)  # the palm link in the root (fixed joints)
        return np.linalg.inv(link @ _pose(palm.rotation, palm.centre_m))

    def _pinch(self, rig: Rig) -> np.ndarray:
        """The half in the hand's frame for the pinch: palm level (the hand's y down), fingers along a face (z along
        the heading); its centre across the palm's middle, its bottom THUMB_CLEARANCE_M below the thumb tip's
        underside, its near face NEAR_FACE_GAP_M beyond the thumb tip."""
        hand = rig.parts["hand"]
        body = RigBody(rig).parts["hand"]
        preshape = hand_shape(hand.joints, GRASP_SHAPES[hand.spec.model][self.grasp].preshape, hand.lower, hand.upper)
        link, offset = body.tips["thumb"]
        thumb = (body.link_poses(hand.full_configuration(preshape))[link] @ [*offset, 1.0])[:3]
        centre = [0.0, thumb[1] + FINGER_BONE_RADIUS_M + THUMB_CLEARANCE_M - HALF_HEIGHT_M / 2,
                  thumb[2] + FINGER_BONE_RADIUS_M + NEAR_FACE_GAP_M + HALF_EDGE_M / 2]
        # the half's axes (x along the heading, z up) in the hand's: x = the fingers' z, y = -x, z = -y (palm down)
        return _pose(np.array([[0.0, -1.0, 0.0], [0.0, 0.0, -1.0], [1.0, 0.0, 0.0]]), centre)

    # ---- what it sees -------------------------------------------------------------------------------------------

    def status(self) -> dict:
        """The page's status text, as shown: its 'Name: value' lines, the episode and its time left."""
        text = self.headset.status_text()
        lines = dict(line.split(": ", 1) for line in text.splitlines() if ": " in line)
        episode = re.search(r"Episode (\d+)(?:: (\d+) s left)?", text)
        return {**lines, "episode": int(episode.group(1)) if episode else 0,
                "left_s": int(episode.group(2)) if episode and episode.group(2) else None, "text": text}

    @property
    def arm_line(self) -> str:
        """Its arm's status line: "Arm", or "Arm <name>" for one of two."""
        return f"Arm {self.name}" if self.name else "Arm"

    def chosen_grasp(self) -> str:
        """Its hand's grasp as the status shows it ("Grasp: level_pinch (...)"; of two, "left: fist, right: ...")."""
        shown = self.status().get("Grasp", "")
        found = re.search(rf"{self.name}: (\w+)" if self.name else r"^(\w+)", shown)
        return found.group(1) if found else ""

    def cameras(self) -> dict[str, Camera]:
        """The fixed cameras (a wrist camera is not looked at), their poses in its base frame."""
        cameras = {}
        for name, (jpeg, header) in self.headset.frames().items():
            if "pose" not in header:
                continue
            image = cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR)
            camera = Camera.from_page(image[..., ::-1].copy(), header)
            cameras[name] = replace(camera, base_from_camera=self.from_first @ camera.base_from_camera)
        return cameras

    def fresh_cameras(self, after_ms: float, timeout_s: float = 3.0) -> dict[str, Camera]:
        """The frames of every camera captured after `after_ms` (the clock the frames' published_ms are on). When the
        episode is over (its time up, or the status shows the next) the person stops looking (EpisodeOver): the next
        frames may show the next layout."""
        deadline = self.headset.now_ms() + 1000 * timeout_s
        while True:
            self._check_episode()
            cameras = self.cameras()
            if cameras and all(c.published_ms > after_ms for c in cameras.values()) or \
                    self.headset.now_ms() > deadline:
                return cameras
            self.headset.sleep(0.03)

    def drawn_hand(self) -> np.ndarray | None:
        """Its hand (base frame) where the page draws it: the palm box of its rig as measured (the robot's joint
        readings, which a real station's page draws the same way); None before the first scene."""
        scene = self.headset.scene()
        drawing = next((rig for rig in scene.get("rigs", []) if rig["name"] == self.name), scene)
        palm = drawing.get("measured", {}).get("palm", {})
        if "pose" not in palm:
            return None
        return np.asarray(palm["pose"], dtype=float).reshape(4, 4) @ self.hand_from_palm

    def settle(self) -> np.ndarray | None:
        """Wait for the arm to come to rest (the drawn hand still between two looks); where it rests."""
        self.headset.sleep(SETTLE_S)
        deadline = self.headset.now_ms() + 1000 * SETTLE_TIMEOUT_S
        hand = self.drawn_hand()
        while self.headset.now_ms() < deadline:
            self._check_episode()
            self.headset.sleep(STILL_S)
            newer = self.drawn_hand()
            if hand is not None and newer is not None and all(np.less(_distance(newer, hand), STILL)):
                return newer
            hand = newer
        return hand

    # ---- what it does -------------------------------------------------------------------------------------------

    def _send(self, click: bool = False) -> None:
        position = OPERATOR_FROM_XR.T @ self.controller[:3, 3]
        rotation = Rotation.from_matrix(OPERATOR_FROM_XR.T @ self.controller[:3, :3] @ OPERATOR_FROM_XR)
        self.headset.hold(position, rotation.as_quat(), self.trigger, self.grip, click, self.side)

    def press(self, controller: str, button: str) -> None:
        for pressed in (True, False):
            self.headset.button(controller, button, pressed)
            self.headset.sleep(0.2)

    def press_until(self, button: str, state: str, tries: int = 5) -> None:
        """Press a left controller button until the status shows the state (a press can be lost in a gap of the
        input, as a person presses again)."""
        for _ in range(tries):
            self.press("left", button)
            try:
                self.wait_status(lambda s: s.get("State") == state, timeout_s=2.0)
                return
            except TimeoutError:
                continue
        self.wait_status(lambda s: s.get("State") == state)

    def wait_status(self, condition, timeout_s: float = 20.0) -> dict:
        deadline = self.headset.now_ms() + 1000 * timeout_s
        while self.headset.now_ms() < deadline:
            status = self.status()
            if condition(status):
                return status
            self.headset.sleep(0.1)
        raise TimeoutError(f"the status never met the condition: {self.status()['text']}")

    def choose_grasp(self) -> None:
        for _ in range(4):
            if self.chosen_grasp() == self.grasp:
                return
            self._send(click=True)
            self.headset.sleep(0.25)
            self._send(click=False)
            self.headset.sleep(0.25)
        raise AssertionError(f"the thumbstick never chose {self.grasp}: {self.status()['text']}")

    def start(self, press_keys: bool = True) -> None:
        """Look at the screens, zero pose (X), teleoperation (Y) (`press_keys`: of two hands, the first presses),
        the grasp, then hold the trigger: the arm follows."""
        self.headset.look_down(LOOK_DOWN_RAD)
        self._send()
        if press_keys:
            self.press_until("x-button", "ZeroPos")
            self.headset.sleep(2.0)
            self.press_until("y-button", "Teleoperation")
        self.choose_grasp()
        self.trigger = 1.0
        self._send()
        self.wait_status(lambda s: s.get(self.arm_line) == "following")

    def begin_episode(self) -> None:
        """The robot was reset home, and the teleop re-anchored there with the trigger held where it is: the
        controller goes back to a comfortable pose first (a clutch). The status shows the episode's time left: the
        person stops where it is END_MARGIN_S before it ends (the status was sent a little earlier, rounded up), or
        when the status shows the next episode (the recording ends one when the task is done)."""
        status = self.status()
        self.episode, left_s = status["episode"], status["left_s"]
        self.episode_ends_ms = self.headset.now_ms() + 1000 * (left_s - END_MARGIN_S) if left_s is not None else np.inf
        self.seen = {}
        self.anchor = (self.controller.copy(), self.home_hand @ np.linalg.inv(self.hand_mount))
        self._clutch()

    def hand(self) -> np.ndarray:
        """Where it expects its hand (base frame): the anchor moved as the arm answers the controller since."""
        anchor_controller, anchor_flange = self.anchor
        return self.response.flange(anchor_flange, anchor_controller, self.controller) @ self.hand_mount

    def _see(self, hand: np.ndarray | None) -> None:
        """Correct the expectation by the hand as drawn (if drawn): the anchor that explains it."""
        if hand is None:
            return
        anchor_controller, _ = self.anchor
        self.anchor = (anchor_controller, self.response.anchor_seen(hand @ np.linalg.inv(self.hand_mount),
                                                                    anchor_controller, self.controller))

    def _clutch(self) -> None:
        """Let go of the trigger (the arm holds), bring the controller back to a comfortable pose, press again."""
        hand = self.hand()
        self.trigger = 0.0
        self._send()
        self._wait_arm("disengaged")  # the release seen: the way back moves nothing
        self._move_controller(_pose(np.eye(3), OPERATOR_FROM_XR @ self.neutral))
        self.trigger = 1.0
        self._send()
        self._wait_arm("following")  # the press seen: the arm is anchored where the controller now is
        self.anchor = (self.controller.copy(), hand @ np.linalg.inv(self.hand_mount))

    def _wait_arm(self, activity: str) -> None:
        """Until the status says the arm does `activity` (the teleop may see the controller late: a gap in its
        input); on the way, the controller keeps telling where it is."""
        deadline = self.headset.now_ms() + 1000 * SETTLE_TIMEOUT_S
        while not self.status().get(self.arm_line, "").startswith(activity) and self.headset.now_ms() < deadline:
            self._send()
            self.headset.sleep(STEP_S)

    def _move_controller(self, goal: np.ndarray) -> None:
        """From where the controller is to `goal` (operator frame) at a calm person's speed; it stops where it is when
        the episode's time is up (EpisodeOver)."""
        start = self.controller.copy()
        distance_m, angle_rad = _distance(goal, start)
        steps = max(1, int(np.ceil(max(distance_m / HAND_SPEED_M_S, angle_rad / TURN_SPEED_RAD_S) / STEP_S)))
        for pose in _on_the_way(start, goal, steps):
            if self._time_left_s() <= 0:
                raise EpisodeOver
            self.controller = pose
            self._send()
            self.headset.sleep(STEP_S)

    def go(self, target_hand: np.ndarray, tolerance_m: float, tolerance_rad: float, tries: int = 4) -> bool:
        """Move the hand to `target_hand` (base frame): move, settle, look at the drawn hand, until it is within
        tolerance."""
        for _ in range(tries):
            self._stroke(target_hand)
            self._see(self.settle())
            distance_m, angle_rad = _distance(self.hand(), target_hand)
            self.last_error = (round(distance_m * 1000, 1), round(angle_rad, 3))
            if distance_m <= tolerance_m and angle_rad <= tolerance_rad:
                return True
        return False

    def _stroke(self, target_hand: np.ndarray) -> None:
        """Move the controller so that the hand goes to `target_hand`, in as many strokes as the arm's reach and turn
        from where the trigger was pressed allow, clutching between them (as a wrist turns only so far)."""
        hand = self.hand()
        distance_m, angle_rad = _distance(target_hand, hand)
        strokes = max(1, int(np.ceil(max(distance_m / (CLUTCH_REACH_M * self.response.config.translation_scale),
                                         angle_rad / CLUTCH_TURN_RAD))))
        for waypoint in _on_the_way(hand, target_hand, strokes):
            anchor_controller, anchor_flange = self.anchor
            flange = waypoint @ np.linalg.inv(self.hand_mount)
            goal = self.response.controller(anchor_flange, anchor_controller, flange)
            reach_m, turn_rad = _distance(goal, anchor_controller)
            if reach_m > CLUTCH_REACH_M or turn_rad > CLUTCH_TURN_RAD:
                self._clutch()
                anchor_controller, anchor_flange = self.anchor
                goal = self.response.controller(anchor_flange, anchor_controller, flange)
            self._move_controller(goal)

    def squeeze(self, to: float, duration_s: float) -> None:
        start = self.grip
        for share in np.linspace(0, 1, max(2, int(duration_s / STEP_S))):
            self.grip = start + share * (to - start)
            self._send()
            self.headset.sleep(STEP_S)

    # ---- the task -----------------------------------------------------------------------------------------------

    def plan(self, red: np.ndarray, green: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
        """The hand's pose pinching the red half, the pose where the half goes down on the green one (aimed against
        how it comes to rest) and how high above it the hand comes first. Of the faces to pinch from and the quarter
        turns to set it down in, the one it was taught first: facing along the reach from the robot's base less half
        the turn to the green half's yaw, turned the least, from OVER_M above; if its arm cannot carry the half
        through that plan clear of a straight wrist (it knows its robot's kinematics, as it knows how far its own wrist
        turns: wrist_margin), the next that it can, coming lower over the green half first; if none, the one that
        carries the half farthest from a straight wrist."""
        reach = float(np.arctan2(red[1, 3], red[0, 3])) + REACH_TURN_RAD
        turn = _nearest_turn(_yaw(green) - _yaw(red), 0.0, np.pi / 2)
        taught = _nearest_turn(_yaw(red), reach - turn / 2, np.pi / 2)
        plans = []
        for pinch_turns in (0, 1, -1, 2):
            heading = taught + pinch_turns * np.pi / 2
            grasp = _pose(_z_turn(heading), red[:3, 3]) @ np.linalg.inv(self.half_in_hand)
            red_yaw = _yaw(grasp @ self.held)
            nearest = _nearest_turn(_yaw(green), red_yaw, np.pi / 2)
            for place_turns in (0, 1, -1):
                place = self._aim(green, nearest + place_turns * np.pi / 2) @ np.linalg.inv(self.held)
                plans.append((grasp, place))
        scored = []
        for over_m in (OVER_M, OVER_M * 2 / 3, OVER_M / 3):
            for grasp, place in plans:
                wrist = self.wrist_margin(grasp, place, over_m)
                if wrist >= self.response.config.ik_singular_value_threshold:
                    return grasp, place, over_m
                scored.append((wrist, grasp, place, over_m))
        return max(scored, key=lambda plan: plan[0])[1:]

    @property
    def held(self) -> np.ndarray:
        """The half in the hand once pinched: the fingers pushed it onto the thumb, and it turned."""
        return self.half_in_hand @ self.practice.pinch_settling

    def _aim(self, green: np.ndarray, yaw: float) -> np.ndarray:
        """Where to hold the half, level and 1 mm above the green one at `yaw`, for it to come to rest on it."""
        moved, turned = np.asarray(self.practice.place_move_m), self.practice.place_turn_rad
        aimed = _pose(_z_turn(yaw - turned), green[:3, 3] + [0.0, 0.0, HALF_HEIGHT_M + PLACE_DROP_M])
        aimed[:2, 3] -= _z_turn(yaw)[:2, :2] @ moved
        return aimed

    def wrist_margin(self, grasp: np.ndarray, place: np.ndarray, over_m: float) -> float:
        """Following the hand in small steps as the teleop's IK does, through a plan's poses (from home above the half,
        down to it, lifted, over the green one, down): how far from a straight wrist the arm carries the half (the
        smallest singular value of the weighted Jacobian on the way, which the teleop damps below its threshold and
        the hand lags its turn: the looks on the way to the half correct that, but a held half would be set down
        askew); -inf where it comes no closer to one of the poses than REACH_TOLERANCE."""
        return self.path_margin([_raised(grasp, APPROACH_M), grasp, _raised(grasp, LIFT_M), _raised(place, over_m),
                                 place], carried_from=2)

    def path_margin(self, goals: list[np.ndarray], carried_from: int) -> float:
        """wrist_margin through any hand poses from home, the half carried from the goal `carried_from` on."""
        c = self.response.config
        weights = np.array([1.0, 1.0, 1.0] + [c.ik_orientation_weight_m_per_rad] * 3)
        q = self.arm.full_configuration(self.arm.home)
        hand, margin = self.home_hand, np.inf
        for leg, goal in enumerate(goals):
            distance_m, angle_rad = _distance(goal, hand)
            steps = max(1, int(np.ceil(max(distance_m / REACH_STEP[0], angle_rad / REACH_STEP[1]))))
            for waypoint in _on_the_way(hand, goal, steps):
                result = solve_ik(self.arm.model, self.arm.mount_frame, waypoint @ np.linalg.inv(self.hand_mount), q,
                                  max_iters=c.ik_max_iterations, orientation_weight=c.ik_orientation_weight_m_per_rad)
                q = result.q
                if leg >= carried_from:
                    _, jacobian = self.arm.model.frame_pose_and_jacobian(q, self.arm.mount_frame)
                    margin = min(margin, float(np.linalg.svd(jacobian * weights[:, None], compute_uv=False).min()))
            if result.position_error_m > REACH_TOLERANCE[0] or result.orientation_error_rad > REACH_TOLERANCE[1]:
                return -np.inf
            hand = goal
        return margin

    def teleop_reach(self, goals: list[np.ndarray], q: np.ndarray | None = None, carried_from: int = 0,
                     give_up_at: float = np.inf) -> tuple[float, np.ndarray]:
        """Its hand taken through poses (base frame) one after another, from the arm's joints `q` (at home if None),
        as the teleop answers the controller (teleop_stroke): how far the plan falls short, in REACH_TOLERANCEs (at
        most 1: every pose reached, and the half, carried from the goal `carried_from` on, kept clear of a straight
        wrist, where the hand swings its turn and the half slips or is set down askew), and the joints at the
        last. The handover plans by this: by wrist_margin every pass lies at a straight wrist (margins 0.0001-0.002),
        which ranks nothing. One hand on the table plans by wrist_margin, as reliable there (46 and 48 of 50 in the
        lockstep station) and 3 times faster. Once it falls short by give_up_at the rest is not simulated."""
        q = self.arm.home.copy() if q is None else q
        worst = 0.0
        for leg, goal in enumerate(goals):
            if worst >= give_up_at:
                break
            flange = goal @ np.linalg.inv(self.hand_mount)
            q, margin = teleop_stroke(self.arm, q, flange, REACH_HOLD_S)
            distance_m, angle_rad = _distance(self.arm.model.frame_pose(self.arm.full_configuration(q),
                                                                        self.arm.mount_frame), flange)
            worst = max(worst, distance_m / REACH_TOLERANCE[0], angle_rad / REACH_TOLERANCE[1])
            if leg >= carried_from:
                worst = max(worst, TELEOP_RESPONSE.ik_singular_value_threshold / margin)
        return worst, q

    def draw_back(self) -> None:
        """The hand drawn back from home, out of the top camera's way."""
        back = self.home_hand.copy()
        back[:3, 3] += LOOK_BACK_M
        self.go(back, 0.01, 0.1, tries=1)

    def look_at_the_table(self) -> str:
        """The hand drawn back from home out of the top camera's way (at home the waiting fingers hang over the table
        and may hide a half), then what the top camera shows: "apart" (both halves on the table), "stacked" (the red
        half on the green one, aligned), "askew" (on it, but off by more than ALIGNED) or "unseen". The halves'
        poses it saw are kept (the green one's from when it last showed)."""
        self.draw_back()
        for _ in range(LOOKS):
            top = next(iter(self.fresh_cameras(self.headset.now_ms()).values()))
            red, green = (half_on_table(top, colour, self.table_top_z_m) for colour in ("red", "green"))
            if red is not None and green is not None:
                self.seen = {"red": red, "green": green}
                return "apart"
            on_green = half_on_table(top, "red", self.table_top_z_m + HALF_HEIGHT_M)
            if on_green is not None and "green" in self.seen and green is None:
                offset_m = float(np.linalg.norm(on_green[:2, 3] - self.seen["green"][:2, 3]))
                turn_rad = abs(_nearest_turn(_yaw(on_green) - _yaw(self.seen["green"]), 0.0, np.pi / 2))
                if offset_m < HALF_EDGE_M / 2:
                    self.seen["red"] = on_green
                    return "stacked" if offset_m <= ALIGNED[0] and turn_rad <= ALIGNED[1] else "askew"
            self.headset.sleep(0.1)
        return "unseen"

    def assemble_cube(self, grasped_hook=lambda: None, closed_hook=lambda: None) -> list[str]:
        """Attempts, each after a look at the table, until it shows the red half on the green one and aligned or
        nothing it can work with, or another look and attempt would not fit in the episode's time left (as long as
        its longest so far); each attempt's furthest step, then what the last look saw ("time": the time ran out).
        `grasped_hook` is called with the hand at the half, before closing; `closed_hook` once closed. Afterwards,
        whatever happened, the grip is open and the trigger released: the arm holds where it is until the next
        episode, whatever the controller does meanwhile."""
        steps = []
        try:
            while not steps or self._time_left_s() >= self.attempt_s:
                started = self.headset.now_ms()
                seen = self.look_at_the_table()
                if seen not in ("apart", "askew"):
                    return [*steps, seen]
                steps.append(self._attempt(grasped_hook, closed_hook))
                self.attempt_s = max(self.attempt_s, (self.headset.now_ms() - started) / 1000)
            return steps
        except EpisodeOver:
            return [*steps, "time"]
        finally:
            self.let_go()

    def let_go(self) -> None:
        """Open the grip (if closed) and release the trigger: the arm holds where it is, whatever the controller
        does."""
        if self.grip:
            self.squeeze(0.0, 0.4)
        self.trigger = 0.0
        self._send()

    def _time_left_s(self) -> float:
        return (self.episode_ends_ms - self.headset.now_ms()) / 1000

    def _check_episode(self) -> None:
        """EpisodeOver when its time is up or the status shows the next episode."""
        if self._time_left_s() <= 0 or self.status()["episode"] != self.episode:
            raise EpisodeOver

    def _attempt(self, grasped_hook, closed_hook) -> str:
        grasp, place, over_m = self.plan(self.seen["red"], self.seen["green"])
        self.aimed = place @ self.held
        return self.pick_up(grasp, grasped_hook, closed_hook) or self.set_down(place, over_m)

    def pick_up(self, grasp: np.ndarray, grasped_hook=lambda: None, closed_hook=lambda: None) -> str | None:
        """Onto the red half at `grasp` (the hand's pose pinching it), close, lift; the step that failed, if one
        did."""
        above = _raised(grasp, APPROACH_M)
        if not self.go(above, 0.004, 0.05, tries=6) and not self.go(above, 0.008, 0.1, tries=1):
            return "approach"
        self.go(grasp, 0.0015, 0.03, tries=3)
        grasped_hook()
        self.squeeze(1.0, 0.8)
        self.headset.sleep(0.4)
        closed_hook()
        if not self.go(_raised(grasp, LIFT_M), 0.015, 0.1, tries=1):
            return "lift"
        return None

    def set_down(self, place: np.ndarray, over_m: float) -> str:
        """The held half carried over the green one (the hand `over_m` above `place`), lowered, let go; the hand
        drawn up. "carry" where it never got over it, else "released"."""
        if not self.go(_raised(place, over_m), 0.004, 0.05, tries=6):
            return "carry"
        self.go(place, 0.003, 0.05, tries=1)
        self.squeeze(0.0, 0.4)
        self.headset.sleep(0.2)
        self.go(_raised(self.hand(), RETREAT_M), 0.02, 0.2, tries=1)
        return "released"


def _on_the_way(start: np.ndarray, goal: np.ndarray, steps: int):
    """The poses `steps` equal shares of the way from `start` to `goal` (moving straight, turning about one axis),
    the last `goal`."""
    turn = matrix_to_rotvec(goal[:3, :3] @ start[:3, :3].T)
    for share in np.arange(1, steps + 1) / steps:
        yield _pose(rotvec_to_matrix(share * turn) @ start[:3, :3], start[:3, 3] + share * (goal[:3, 3] - start[:3, 3]))


def _raised(pose: np.ndarray, height_m: float) -> np.ndarray:
    raised = pose.copy()
    raised[2, 3] += height_m
    return raised


# The handover in the air: the left hand holds the half up PASS_AHEAD_M ahead of the arms' bases, half way between
# them, PASS_HEIGHT_M above the table, turned by one of PASS_TURNS_RAD from the line from its base (the first its plan
# reaches through the teleop; in this order, those benchmarks/teleop_reach.py finds both arms reach most often), and
# the right hand pinches the other pair of faces from above
PASS_AHEAD_M, PASS_HEIGHT_M = 0.25, 0.18
PASS_TURNS_RAD = (-0.6, 0.6, -0.4, 0.4, 0.0, -0.2)
TAKE_LIFT_M = 0.03  # the right hand, holding the half, rises this much once the left has let go
# how a half taken from the left hand settles in the right one (practice, seeds 0-9, the 8 takes that held): 16 mm
# back onto the thumb, 1.5 mm aside, 6 mm down, 5 degrees about the vertical (on the table: 14, 2, 5 mm, 4 degrees)
TAKE_SETTLING = Practice((-0.0163, -0.0014, -0.0059), (0.7, 3.3, 4.8))


class TwoHandedPerson:
    """Both hands of one person in the headset, each a HeadsetPerson holding the controller on its rig's side, doing
    the handover: the left hand picks the red half up and holds it up between the arms, the right hand takes it by
    its other faces, the left lets go and draws back, and the right sets it on the green half (then looks, and tries
    again as one hand does). It knows the station's layout (`bases`: each rig's base in the first one's frame, as the
    preset places them) and where its left hand holds the half (the left hand where the page draws it, and how a
    pinched half settles, from practice): the half is hidden under the left palm when the right hand comes for it."""

    def __init__(self, headset, rigs: dict[str, Rig], bases: dict[str, np.ndarray], table_top_z_m: float):
        self.left, self.right = (HeadsetPerson(headset, rigs[name], table_top_z_m - bases[name][2, 3], name=name,
                                               base_in_first=bases[name]) for name in ("left", "right"))
        self.right_from_left = np.linalg.inv(bases["right"]) @ bases["left"]
        self.taken = self.right.half_in_hand @ TAKE_SETTLING.pinch_settling  # the half in the right hand, taken
        between = (bases["left"][:3, 3] + bases["right"][:3, 3]) / 2
        self.pass_point = between + [PASS_AHEAD_M, 0.0, table_top_z_m + PASS_HEIGHT_M - between[2]]

    def start(self) -> None:
        self.left.start(press_keys=True)
        self.right.start(press_keys=False)

    def begin_episode(self) -> None:
        self.left.begin_episode()
        self.right.begin_episode()

    def plan(self) -> tuple[np.ndarray, np.ndarray, float, np.ndarray]:
        """(the left hand pinching the red half, the left hand holding it up, the turn the right hand takes it with,
        the right hand setting it on the green half), as each arm answers the controller (teleop_reach): of the four
        pinches the one the left arm reaches best; then the first pass turn both arms reach every pose of (the left
        from the pinch lifted, the right from home to the take and on to the green half), else the nearest."""
        left, right = self.left, self.right
        red, green = left.seen["red"], self.right_from_left @ left.seen["green"]
        toward = float(np.arctan2(self.pass_point[1], self.pass_point[0]))
        grasps = [_pose(_z_turn(_yaw(red) + k * np.pi / 2), red[:3, 3]) @ np.linalg.inv(left.half_in_hand)
                  for k in range(4)]
        pinch_worst, lifted, grasp = np.inf, None, None
        for g in grasps:  # the best: a pinch that falls as short as the best so far is not simulated to its end
            worst, q = left.teleop_reach([_raised(g, APPROACH_M), g, _raised(g, LIFT_M)], carried_from=2,
                                         give_up_at=pinch_worst)
            if worst < pinch_worst:
                pinch_worst, lifted, grasp = worst, q, g
        best: tuple = (np.inf,)

        def hopeless(worst: float) -> bool:
            """A plan this far short already is neither taken (over 1) nor nearer than the best so far: its other
            legs are not simulated (the planning is seconds of CPU in real time while the robot waits)."""
            return worst > 1.0 and worst >= best[0]

        for turn in PASS_TURNS_RAD:
            held_up = _pose(_z_turn(toward + turn), self.pass_point) @ np.linalg.inv(left.held)
            pass_worst = max(pinch_worst, left.teleop_reach([held_up], lifted)[0])  # carried
            for side_turn in (np.pi / 2, -np.pi / 2):
                if hopeless(pass_worst):
                    continue
                take = self._take(left.held, held_up, side_turn)
                take_worst, taking = right.teleop_reach([_raised(take, APPROACH_M), take], carried_from=2)
                take_worst = max(pass_worst, take_worst)
                half_yaw = _yaw(take @ self.taken)
                for place_turns in (0, 1, -1):
                    if hopeless(take_worst):
                        continue
                    yaw = _nearest_turn(_yaw(green), half_yaw, np.pi / 2) + place_turns * np.pi / 2
                    place = right._aim(green, yaw) @ np.linalg.inv(self.taken)
                    worst = max(take_worst, right.teleop_reach(
                        [_raised(take, TAKE_LIFT_M), _raised(place, OVER_M), place], taking)[0])
                    if worst <= 1.0:
                        return grasp, held_up, side_turn, place
                    if worst < best[0]:
                        best = (worst, grasp, held_up, side_turn, place)
        return best[1:]

    def _take(self, left_held: np.ndarray, left_hand: np.ndarray, side_turn: float) -> np.ndarray:
        """The right hand pinching the half the left hand holds at `left_hand` (left frame) by its other faces."""
        half = self.right_from_left @ left_hand @ left_held
        return half @ _pose(_z_turn(side_turn), [0.0, 0.0, 0.0]) @ np.linalg.inv(self.right.half_in_hand)

    def hand_over(self) -> list[str]:
        """Its steps, each hand's named; then what the right hand's own attempts did (assemble_cube)."""
        left, right = self.left, self.right
        steps: list[str] = []
        try:
            right.draw_back()  # out of the top camera's way while the left hand looks
            seen = left.look_at_the_table()
            if seen != "apart":
                return [f"left {seen}"]
            grasp, held_up, side_turn, place = self.plan()
            failed = left.pick_up(grasp)
            if failed:
                return [f"left {failed}"]
            if not left.go(held_up, 0.004, 0.05, tries=3):
                steps.append("left short of the pass")
            # where its left hand holds the half now, as it believes: there the right hand takes it
            take = self._take(left.held, left.hand(), side_turn)
            right.seen = {"red": take @ right.half_in_hand, "green": self.right_from_left @ left.seen["green"]}
            if not right.go(_raised(take, APPROACH_M), 0.004, 0.05, tries=3):
                return [*steps, "right approach"]
            right.go(take, 0.002, 0.03, tries=2)
            right.squeeze(1.0, 0.8)
            right.headset.sleep(0.4)
            left.squeeze(0.0, 0.4)
            left.go(_raised(left.hand(), RETREAT_M), 0.02, 0.2, tries=1)
            left.let_go()  # the left arm holds there, out of the way
            steps.append("left passed")
            right.go(_raised(take, TAKE_LIFT_M), 0.015, 0.1, tries=1)
            right.aimed = place @ self.taken
            steps.append(f"right {right.set_down(place, OVER_M)}")
        except EpisodeOver:
            return [*steps, "time"]
        finally:
            left.let_go()
        return steps + [f"right {step}" for step in right.assemble_cube()]
