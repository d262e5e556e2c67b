"""What the headset page gets of the world's cameras is what a person can work from: each frame's calibration (the
intrinsics, a fixed camera's pose in the robot's base frame, the wrist camera's mount on the hand) puts what it shows
where it is, and a camera shows the operator's right on the right as the page shows it (a camera that faces the
operator is shown as a mirror)."""

import numpy as np
import pytest
from seeing import Camera, colour_mask, half_from_camera, half_on_table

from lerobot_robot_teledex import Teledex, TeledexConfig, TeledexWorldCameraConfig
from teledex_lerobot.viewer.headset import camera_header
from teledex_lerobot.world.world import LOCKSTEP, WorldConfig

WIDTH, HEIGHT = 640, 480


def connected(cameras: dict[str, str], seed: int = 0) -> Teledex:
    configs = {name: TeledexWorldCameraConfig(view=view, width=WIDTH, height=HEIGHT, fps=25)
               for name, view in cameras.items()}
    robot = Teledex(TeledexConfig(backend="mujoco", preset_cameras=False, cameras=configs,
                                  world=WorldConfig(seed=seed, clock=LOCKSTEP)))
    robot.connect()
    return robot


def as_the_page_has_it(robot: Teledex, name: str, image: np.ndarray) -> tuple[Camera, dict]:
    header = {**camera_header(name, robot.station.cameras[name]), "published_ms": 0.0}
    return Camera.from_page(image, header), header


def turn_the_arm(robot: Teledex, turn_rad: float) -> dict:
    """The arm's base joint set to `turn_rad` (positive: toward the robot's +y, the operator's left); the next
    observation."""
    world = robot.world.running.world
    base_joint = robot.rig.parts["arm"].joints[0]
    with world.lock:
        world.data.qpos[world.model.joint(f"arm/{base_joint}").qposadr[0]] = turn_rad
        world.step(1)
    robot.world.advance(40_000_000)
    return robot.get_observation()


# (a side camera looks across the operator's left and right: it shows them as nearer and farther)
@pytest.mark.parametrize("view", ["top", "oblique", "front"])
def test_the_camera_image_left_is_the_operator_left(view):
    """The arm turned to the operator's right (the robot's -y: the operator stands behind the robot, facing the way it
    faces) moves its hand to the right of the image the page shows: as recorded, or mirrored where the camera faces
    the operator."""
    robot = connected({"cam": view})
    try:
        hand_x = {}
        for side, turn in (("right", -0.3), ("left", 0.3)):
            image = turn_the_arm(robot, turn)["cam"]
            _, header = as_the_page_has_it(robot, "cam", image)
            mask, _ = colour_mask(image, "orange")
            x = float(np.argwhere(mask)[:, 1].mean())
            hand_x[side] = WIDTH - 1 - x if header["mirror"] else x
        assert hand_x["right"] > hand_x["left"] + 20, (view, hand_x)
    finally:
        robot.disconnect()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_frames_calibration_puts_each_half_where_it_is(seed):
    """Through the calibration its frames carry, the top camera puts both halves within a millimetre of where the
    world has them (their top faces on the table's plane), and the wrist camera, from its mount on the hand and the
    hand's measured pose, within a few millimetres."""
    robot = connected({"top": "top", "wrist": "wrist"}, seed)
    try:
        observation = robot.get_observation()
        world = robot.world.running.world
        base = world.base_pose()
        table_top_z = -float(base[2, 3])
        _, top_header = as_the_page_has_it(robot, "top", observation["top"])
        wrist, wrist_header = as_the_page_has_it(robot, "wrist", observation["wrist"])
        assert "pose" in top_header and "mount" not in top_header and not top_header["mirror"]
        assert wrist_header["mount"]["part"] == "hand" and "pose" not in wrist_header
        measured = {role: observation_part(robot, observation, role) for role in robot.rig.parts}
        hand = robot.rig.base_poses(measured)["hand"]
        from_wrist = half_from_camera(wrist, "red")  # at home the wrist camera sees the red half whole
        assert from_wrist is not None
        seen = hand @ wrist.hand_from_camera @ from_wrist
        truth = np.linalg.inv(base) @ world.body_pose("cube_top")
        assert np.linalg.norm(seen[:3, 3] - truth[:3, 3]) < 0.006
        top, _ = as_the_page_has_it(robot, "top", turn_the_arm(robot, 1.2)["top"])  # the hand out of the top's way
        for colour, name in (("red", "cube_top"), ("green", "cube_bottom")):
            truth = np.linalg.inv(base) @ world.body_pose(name)
            from_top = half_on_table(top, colour, table_top_z)
            assert from_top is not None and np.linalg.norm(from_top[:3, 3] - truth[:3, 3]) < 0.001, colour
    finally:
        robot.disconnect()


def observation_part(robot: Teledex, observation: dict, role: str) -> np.ndarray:
    return np.array([observation[key] for key in robot.rig.parts[role].keys])
