"""The headset draws a robot from its URDF's visual geometry where the URDF has some (a vendor's does; ours carry
kinematics only): meshes found by package:// and relative paths, read (binary and ASCII STL, OBJ), simplified within
the page's triangle budget, sent once as the body message and placed by every scene message; a part whose meshes
cannot all be had is drawn as the simulated body's shapes, with a warning naming the file and the link."""

import base64
import logging
import re

import numpy as np
import pytest
from vendor_urdf import OBJ_BOUNDS, UPPER_ARM_CENTRE_MM, UPPER_ARM_RADIUS_MM, vendor_package

from teledex_lerobot.kinematics import load_urdf, urdf_path
from teledex_lerobot.presets import PartSpec
from teledex_lerobot.rig import Rig
from teledex_lerobot.viewer.headset import HeadsetScene
from teledex_lerobot.viewer.link_meshes import MESH_TRIANGLE_BUDGET, load_link_meshes, read_mesh, simplified

ELBOW_BOUNDS = [[0, -0.02 * np.sin(np.pi / 3), -0.02], [0.24, 0.02 * np.sin(np.pi / 3), 0.02]]  # the forearm's


def bounds(triangles: np.ndarray) -> np.ndarray:
    corners = np.asarray(triangles).reshape(-1, 3)
    return np.array([corners.min(axis=0), corners.max(axis=0)])


def arm_scene(urdf) -> HeadsetScene:
    return HeadsetScene(Rig.from_parts(PartSpec(str(urdf)), None))


def decoded(entry: dict) -> np.ndarray:
    """A body message's mesh as (n, 3, 3) triangles."""
    vertices = np.frombuffer(base64.b64decode(entry["vertices"]), np.float32).reshape(-1, 3)
    return vertices[np.frombuffer(base64.b64decode(entry["triangles"]), np.uint32).reshape(-1, 3)]


def test_meshes_are_found_read_and_placed_in_their_links_frames(tmp_path):
    urdf = vendor_package(tmp_path)
    meshes = load_link_meshes(load_urdf(urdf))
    assert set(meshes) == {"base_link", "upper_arm", "forearm", "wrist"}  # the gripper has no visual
    # an OBJ of quads (MuJoCo reads it, moving it into its inertial frame: moved back), where its file has it
    obj = read_mesh(urdf.parent.parent / "meshes" / "flange.obj")
    assert len(obj) == 12
    np.testing.assert_allclose(bounds(obj), OBJ_BOUNDS, atol=1e-6)
    # package://, a binary STL whose header starts with "solid", in millimetres: scaled to metres, where the file has it
    assert len(meshes["upper_arm"]) == 2 * 100 * 200
    centre, radius = np.array(UPPER_ARM_CENTRE_MM) / 1000, UPPER_ARM_RADIUS_MM / 1000
    np.testing.assert_allclose(bounds(meshes["upper_arm"]), [centre - radius, centre + radius], atol=1e-6)
    # a box (12 triangles) and a relative ASCII STL (an ellipsoid of 48, long along z) 0.2 m along x, its origin's
    # rpy turning it along x
    assert len(meshes["forearm"]) == 12 + 48
    np.testing.assert_allclose(bounds(meshes["forearm"]), ELBOW_BOUNDS, atol=1e-6)
    # a sphere and the OBJ 3 cm along x; a cylinder 5 cm up
    np.testing.assert_allclose(bounds(meshes["wrist"]), [[-0.02, -0.02, -0.02], [0.07, 0.02, 0.02]], atol=1e-6)
    np.testing.assert_allclose(bounds(meshes["base_link"]), [[-0.04, -0.04, 0], [0.04, 0.04, 0.1]], atol=1e-6)


def test_simplifying_keeps_the_budget_and_the_shape(tmp_path):
    meshes = load_link_meshes(load_urdf(vendor_package(tmp_path)))
    small = simplified(meshes, budget=4000)
    assert sum(map(len, small.values())) <= 4000
    assert 3000 < len(small["upper_arm"])  # the fine mesh gives way, close to its share; the others stay
    assert all(small[link] is meshes[link] for link in meshes if link != "upper_arm")
    np.testing.assert_allclose(bounds(small["upper_arm"]), bounds(meshes["upper_arm"]), atol=0.004)
    corners = small["upper_arm"].reshape(-1, 3) - np.array(UPPER_ARM_CENTRE_MM) / 1000
    assert np.abs(np.linalg.norm(corners, axis=1) - UPPER_ARM_RADIUS_MM / 1000).max() < 0.004  # still the sphere
    untouched = simplified(meshes, budget=sum(map(len, meshes.values())))  # within the budget: as they are
    assert all(untouched[link] is meshes[link] for link in meshes)


def test_the_body_message_carries_the_meshes_and_each_scene_places_them(tmp_path):
    scene = arm_scene(vendor_package(tmp_path, rings=150, sides=150))  # 45k triangles: over the budget
    body = scene.body_message()
    assert body["type"] == "body" and [m["link"] for m in body["meshes"]] == ["base_link", "upper_arm", "forearm",
                                                                              "wrist"]
    assert {m["role"] for m in body["meshes"]} == {"arm"}
    triangles = {m["link"]: decoded(m) for m in body["meshes"]}
    assert sum(map(len, triangles.values())) <= MESH_TRIANGLE_BUDGET
    np.testing.assert_allclose(bounds(triangles["forearm"]), ELBOW_BOUNDS, atol=1e-6)
    assert scene.body_message() is body  # loaded once

    home = scene.message({"arm": np.zeros(3)}, {"arm": np.zeros(3)})
    bent = scene.message({"arm": np.array([0.0, -np.pi / 2, 0.0])}, {"arm": np.zeros(3)})
    # the meshed links draw no bones; the command is still drawn as the body's bones, thin lines through them
    assert home["measured"]["bones"] == [] and len(home["commanded"]["bones"]) == 4
    assert "meshes" not in home["commanded"]
    poses = [np.reshape(scene["measured"]["meshes"], (-1, 4, 4)) for scene in (home, bent)]
    assert home["measured"]["mesh_touching"] == [False] * 4
    np.testing.assert_allclose(poses[0][:2], poses[1][:2], atol=1e-9)  # base and upper arm stay where j2 turns
    # the forearm's far end (its elbow mesh's tip, 0.24 m along its x) points up when j2 turns it -90 deg about y
    tip = [0.24, 0, 0, 1]
    np.testing.assert_allclose((poses[0][2] @ tip)[:3], [0.24, 0, 0.3], atol=1e-6)
    np.testing.assert_allclose((poses[1][2] @ tip)[:3], [0, 0, 0.54], atol=1e-6)
    assert bounds(triangles["forearm"] @ poses[1][2][:3, :3].T + poses[1][2][:3, 3])[1][2] == pytest.approx(0.54)


@pytest.mark.parametrize("gripper, why", [
    ("../meshes/gripper.dae", ".dae is not a mesh format read here (STL, OBJ); convert it to STL or OBJ"),
    ("../meshes/missing.stl", "the file does not exist"),
    ("package://gripper_description/meshes/g.stl", "no folder 'gripper_description'"),
])
def test_a_mesh_that_cannot_be_had_warns_and_its_part_is_drawn_as_the_body(tmp_path, caplog, gripper, why):
    scene = arm_scene(vendor_package(tmp_path, gripper_mesh=gripper, rings=4, sides=6))
    with caplog.at_level(logging.WARNING, "teledex_lerobot.viewer.link_meshes"):
        body = scene.body_message()
    [warning] = [r.getMessage() for r in caplog.records if r.name == "teledex_lerobot.viewer.link_meshes"]
    assert f"link 'gripper': cannot draw its mesh {gripper}: {why}" in warning
    assert "arm.urdf" in warning and "draws vendor_arm as the simulated body's shapes" in warning
    assert body["meshes"] == []  # never a piece missing: the whole arm as its bones
    measured = scene.message({"arm": np.zeros(3)}, {"arm": np.zeros(3)})["measured"]
    assert len(measured["bones"]) == 4 and "meshes" not in measured


def hand_with_visuals(tmp_path):
    """Our O6 hand with a ball drawn on every link, as a vendor's URDF would draw its links."""
    text = re.sub(r'<link name="(\w+)"/>',
                  r'<link name="\1"><visual><geometry><sphere radius="0.006"/></geometry></visual></link>',
                  urdf_path("linkerhand_o6_right").read_text())
    path = tmp_path / "o6_drawn.urdf"
    path.write_text(text)
    return path


def test_a_touching_links_mesh_is_red_and_the_fingertips_and_aperture_stay(tmp_path):
    ours = HeadsetScene(Rig.from_parts(None, PartSpec("linkerhand_o6", side="right")))
    assert ours.body_message()["meshes"] == []  # ours carry kinematics only: the body's shapes
    scene = HeadsetScene(Rig.from_parts(None, PartSpec(str(hand_with_visuals(tmp_path)), side="right")))
    links = [m["link"] for m in scene.body_message()["meshes"]]
    palm = scene.body.parts["hand"].palm.link
    assert palm in links and "index_middle" in links
    q = {"hand": np.zeros(len(scene.body.rig.parts["hand"].joints))}
    measured = scene.message(q, q, touching=frozenset({"index_middle", palm}))["measured"]
    touching = dict(zip(links, measured["mesh_touching"], strict=True))
    assert touching["index_middle"] and touching[palm] and sum(touching.values()) == 2
    assert measured["palm"] == {"touching": True}  # drawn as its mesh: no box
    assert measured["touching"][scene.fingers.index("index")] and len(measured["tips"]) == len(scene.fingers)
    assert measured["bones"] == []
    assert scene.message(q, q)["aperture_mm"] == ours.message(q, q)["aperture_mm"] > 0
