"""A vendor's description package as a vendor ships one, made in a test's folder: a three-joint arm whose URDF draws
its links with a cylinder, a box, a sphere, a fine binary STL in millimetres by package:// (its header starting with
"solid", as some exporters write it), a coarse ASCII STL (an ellipsoid) and an OBJ by relative paths; its gripper's
visual is the mesh `gripper_mesh` names (say a COLLADA .dae, which is not read), or none.

The package: <root>/vendor_description/{urdf/arm.urdf, meshes/...}."""

from pathlib import Path

import numpy as np

UPPER_ARM_RADIUS_MM, UPPER_ARM_CENTRE_MM = 50.0, (0.0, 0.0, 100.0)


def sphere_triangles(radius: float, rings: int, sides: int) -> np.ndarray:
    """(n, 3, 3) triangles of a UV sphere, wound counter-clockwise seen from outside."""
    theta = np.linspace(0, np.pi, rings + 1)[:, None]
    phi = np.linspace(0, 2 * np.pi, sides + 1)[None, :]
    p = radius * np.stack([np.sin(theta) * np.cos(phi), np.sin(theta) * np.sin(phi),
                           np.cos(theta) * np.ones_like(phi)], axis=-1)
    return np.array([(p[r, s], p[r + 1, s], p[r + 1, s + 1]) for r in range(rings) for s in range(sides)]
                    + [(p[r, s], p[r + 1, s + 1], p[r, s + 1]) for r in range(rings) for s in range(sides)])


def write_binary_stl(path: Path, triangles: np.ndarray, header: bytes = b"solid exported by a CAD tool") -> None:
    records = np.zeros(len(triangles), dtype=[("normal", "<f4", 3), ("corners", "<f4", (3, 3)), ("attribute", "<u2")])
    records["corners"] = triangles
    path.write_bytes(header.ljust(80, b" ") + np.uint32(len(triangles)).tobytes() + records.tobytes())


def write_ascii_stl(path: Path, triangles: np.ndarray) -> None:
    facets = "".join("facet normal 0 0 0\n  outer loop\n" + "".join(f"    vertex {x} {y} {z}\n" for x, y, z in t)
                     + "  endloop\nendfacet\n" for t in triangles)
    path.write_text(f"solid tip\n{facets}endsolid tip\n")


OBJ_BOUNDS = [[0.0, -0.01, -0.005], [0.04, 0.01, 0.015]]  # a box off its file's origin, its sides unequal


def write_obj(path: Path) -> None:
    """The box OBJ_BOUNDS spans, of quads, corner indices with texture and normal indices as CAD exporters write
    them."""
    (x0, y0, z0), (x1, y1, z1) = OBJ_BOUNDS
    corners = [(x, y, z) for x in (x0, x1) for y in (y0, y1) for z in (z0, z1)]
    quads = [(1, 2, 4, 3), (5, 7, 8, 6), (1, 5, 6, 2), (3, 4, 8, 7), (1, 3, 7, 5), (2, 6, 8, 4)]
    path.write_text("# cube\n" + "".join(f"v {x} {y} {z}\n" for x, y, z in corners) + "vt 0 0\nvn 0 0 1\n"
                    + "".join("f " + " ".join(f"{i}/1/1" for i in quad) + "\n" for quad in quads))


def arm_urdf(gripper_mesh: str | None) -> str:
    gripper = "" if gripper_mesh is None else \
        f'<visual><geometry><mesh filename="{gripper_mesh}"/></geometry></visual>'
    return f"""<robot name="vendor_arm">
  <link name="base_link"><visual><origin xyz="0 0 0.05"/><geometry><cylinder radius="0.04" length="0.1"/></geometry>
    </visual></link>
  <link name="upper_arm"><visual><geometry>
    <mesh filename="package://vendor_description/meshes/upper_arm.STL" scale="0.001 0.001 0.001"/></geometry></visual>
  </link>
  <link name="forearm">
    <visual><origin xyz="0.1 0 0"/><geometry><box size="0.2 0.03 0.03"/></geometry></visual>
    <visual><origin xyz="0.2 0 0" rpy="0 1.5707963 0"/><geometry><mesh filename="../meshes/elbow.stl"/></geometry>
    </visual>
  </link>
  <link name="wrist"><visual><geometry><sphere radius="0.02"/></geometry></visual>
    <visual><origin xyz="0.03 0 0"/><geometry><mesh filename="../meshes/flange.obj"/></geometry></visual></link>
  <link name="gripper">{gripper}</link>
  <joint name="j1" type="revolute"><parent link="base_link"/><child link="upper_arm"/><origin xyz="0 0 0.1"/>
    <axis xyz="0 0 1"/><limit lower="-3" upper="3" velocity="2" effort="10"/></joint>
  <joint name="j2" type="revolute"><parent link="upper_arm"/><child link="forearm"/><origin xyz="0 0 0.2"/>
    <axis xyz="0 1 0"/><limit lower="-3" upper="3" velocity="2" effort="10"/></joint>
  <joint name="j3" type="revolute"><parent link="forearm"/><child link="wrist"/><origin xyz="0.25 0 0"/>
    <axis xyz="0 1 0"/><limit lower="-3" upper="3" velocity="2" effort="10"/></joint>
  <joint name="j4" type="fixed"><parent link="wrist"/><child link="gripper"/><origin xyz="0.06 0 0"/></joint>
</robot>
"""


def vendor_package(root: Path, gripper_mesh: str | None = None, rings: int = 100, sides: int = 200) -> Path:
    """The package under `root`; returns its URDF's path. The upper arm: a sphere of rings x sides x 2 triangles."""
    package = root / "vendor_description"
    (package / "urdf").mkdir(parents=True)
    (package / "meshes").mkdir()
    write_binary_stl(package / "meshes" / "upper_arm.STL",
                     sphere_triangles(UPPER_ARM_RADIUS_MM, rings, sides) + UPPER_ARM_CENTRE_MM)
    write_ascii_stl(package / "meshes" / "elbow.stl", sphere_triangles(0.02, 4, 6) * [1, 1, 2])  # 8 cm along z
    write_obj(package / "meshes" / "flange.obj")
    (package / "meshes" / "gripper.dae").write_text('<?xml version="1.0"?><COLLADA/>')
    urdf = package / "urdf" / "arm.urdf"
    urdf.write_text(arm_urdf(gripper_mesh))
    return urdf
